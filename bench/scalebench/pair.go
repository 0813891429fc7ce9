package main

// Paired runs (-paired N). The aims at a million identities are
// ratios to the figures at 100k ("create p99 within 2x of 100k"), and on a
// shared virtual machine a run at a million and a run at 100k a few minutes
// apart see different hosts: the CPU stolen from the guest, and stretches in
// which every instruction runs several times slower, move a p99 by more than
// the model's size does. With -paired, scalebench runs both sizes at once,
// each as its own process (its own node, heap and collector, as in the runs
// it replaces), and makes them take turns: the two processes run the same
// phases with the same requests, and the parent lets one request of one
// process run, then the same request of the other, and so on (a phase of
// many concurrent clients runs in turnSlices slices, taking turns likewise).
// Whatever the
// host does lands on both sizes alike, and the ratio compares the model's
// sizes rather than two moments of the host.
//
// The turn is handed over on pipes: a child started with -turns reads one
// byte from its standard input before it starts, and at every point it
// yields (after each sequential request, warm-up ones too; after each
// slice of a concurrent phase; after the model is built) it writes one byte to file
// descriptor 3 and reads the next byte of its input. Only the process
// holding the turn sends requests; the other one's node is idle but for its
// own background work (a collection still running, a raft snapshot), which
// may overlap either side's requests.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// turnSlices is the number of slices, each a turn, that a concurrent
// phase of a paired run comes in: a tenth of -duration each (half a second
// by default), short enough that a slow stretch of the host falls on both
// sizes, long enough that the clients' start and end weigh little.
const turnSlices = 10

// turns is a child's end of the turn-taking; nil outside -turns, where
// yield does nothing.
type turns struct {
	grant io.Reader // bytes from the parent: the turn is ours
	done  io.Writer // a byte to the parent: the turn is given back
}

// childTurns is the turn-taking of a process started with -turns.
func childTurns() *turns {
	return &turns{grant: os.Stdin, done: os.NewFile(3, "turns")}
}

// wait blocks until the parent hands over the turn; a parent gone (its
// pipe closed) ends the process.
func (t *turns) wait() {
	if t == nil {
		return
	}
	var b [1]byte
	if _, err := io.ReadFull(t.grant, b[:]); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench: the paired run's parent is gone:", err)
		os.Exit(1)
	}
}

// yield gives the turn back to the parent and waits for the next one.
func (t *turns) yield() {
	if t == nil {
		return
	}
	if _, err := t.done.Write([]byte{1}); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench: the paired run's parent is gone:", err)
		os.Exit(1)
	}
	t.wait()
}

// phaseSummary is one measured phase as a child reports it to the parent
// (-summary).
type phaseSummary struct {
	Name       string  `json:"name"`
	Concurrent bool    `json:"concurrent"` // many clients for a time; Rate is theirs
	OK         int64   `json:"ok"`
	Errors     int64   `json:"errors"`
	Rate       float64 `json:"rate"`
	P50        float64 `json:"p50Ms"`
	P99        float64 `json:"p99Ms"`
	Max        float64 `json:"maxMs"`
	Stolen     float64 `json:"stolen"`
	Snapshot   bool    `json:"snapshot"`
}

// summary is what a child writes to its -summary file at the end.
type summary struct {
	Identities int            `json:"identities"`
	HeapLive   uint64         `json:"heapLive"`
	Phases     []phaseSummary `json:"phases"`
}

func summarizePhase(s *stats) phaseSummary {
	f := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return phaseSummary{Name: s.name, Concurrent: s.concurrent, OK: s.ok, Errors: s.errs, Rate: s.rate(), P50: f(s.pct(50)), P99: f(s.pct(99)),
		Max: f(s.maxLat()), Stolen: s.stolen, Snapshot: s.snapshot}
}

// writeSummary writes the phases measured so far to c.summary.
func (b *bench) writeSummary(heapLive uint64) error {
	if b.cfg.summary == "" {
		return nil
	}
	out := summary{Identities: b.cfg.identities, HeapLive: heapLive}
	for _, s := range b.phases {
		out.Phases = append(out.Phases, summarizePhase(s))
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(b.cfg.summary, raw, 0o644)
}

// pairedChild is one of the two processes of a paired run.
type pairedChild struct {
	identities int
	cmd        *exec.Cmd
	grant      io.WriteCloser
	done       *os.File
	out        *linePrefixer
	summary    string
}

// childArgs are the flags of a child of size n: every flag given to the
// parent but -paired (the last of a repeated flag wins), its own size, the
// turns, its summary file, and its own profile paths.
func childArgs(n int, summaryFile string) []string {
	var args []string
	flag.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		switch f.Name {
		case "paired", "identities", "summary", "turns":
			return
		case "cpuprofile", "trace":
			v = filepath.Join(v, strconv.Itoa(n))
		case "memprofile":
			v += "." + strconv.Itoa(n)
		}
		args = append(args, "-"+f.Name+"="+v)
	})
	return append(args, "-identities="+strconv.Itoa(n), "-turns", "-summary="+summaryFile)
}

// runPaired runs this program twice, at c.identities and at c.paired
// identities, taking turns, and prints the two sizes' figures side by side.
func runPaired(ctx context.Context, c *config) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "scalebench-paired-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var children []*pairedChild
	defer func() {
		for _, ch := range children {
			if ch.cmd.ProcessState == nil {
				_ = ch.cmd.Process.Kill()
				_ = ch.cmd.Wait()
			}
		}
	}()
	for _, n := range []int{c.identities, c.paired} {
		ch := &pairedChild{identities: n, summary: filepath.Join(dir, strconv.Itoa(n)+".json")}
		ch.cmd = exec.CommandContext(ctx, exe, childArgs(n, ch.summary)...)
		// Interrupted, a child stops as scalebench does alone (its nodes shut
		// down, its data removed) rather than being killed with its data left.
		ch.cmd.Cancel = func() error { return ch.cmd.Process.Signal(syscall.SIGTERM) }
		ch.cmd.WaitDelay = time.Minute
		ch.out = &linePrefixer{w: os.Stdout, prefix: fmt.Sprintf("[%d] ", n)}
		ch.cmd.Stdout, ch.cmd.Stderr = ch.out, ch.out
		if ch.grant, err = ch.cmd.StdinPipe(); err != nil {
			return err
		}
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		ch.done, ch.cmd.ExtraFiles = r, []*os.File{w}
		if err := ch.cmd.Start(); err != nil {
			r.Close()
			w.Close()
			return fmt.Errorf("start the child of %d identities: %w", n, err)
		}
		w.Close() // the child holds the write end; its exit ends our reads
		children = append(children, ch)
	}
	fmt.Printf("paired run: %d and %d identities, each in its own process, taking turns request by request\n", c.identities, c.paired)
	takeTurns(children)
	var errs []error
	for _, ch := range children {
		if err := ch.cmd.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("the child of %d identities: %w", ch.identities, err))
		}
		ch.out.flush()
		ch.done.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var sums []summary
	for _, ch := range children {
		raw, err := os.ReadFile(ch.summary)
		if err != nil {
			return err
		}
		var s summary
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%s: %w", ch.summary, err)
		}
		sums = append(sums, s)
	}
	printPaired(os.Stdout, sums[0], sums[1])
	return nil
}

// turn hands the turn to the child and waits until it gives it back; false
// once the child has ended.
func (ch *pairedChild) turn() bool {
	if _, err := ch.grant.Write([]byte{1}); err != nil {
		return false
	}
	var b [1]byte
	_, err := io.ReadFull(ch.done, b[:])
	return err == nil
}

// takeTurns hands the turn to each child in order, round after round,
// until every child has ended; a child that has ended drops out and the
// others go on.
func takeTurns(children []*pairedChild) {
	live := append([]*pairedChild(nil), children...)
	for len(live) > 0 {
		next := live[:0]
		for _, ch := range live {
			if ch.turn() {
				next = append(next, ch)
			}
		}
		live = next
	}
}

// printPaired prints the phases of two sizes side by side, with the ratio
// of their p99 (and of their rates, for the concurrent phases).
func printPaired(w io.Writer, big, small summary) {
	fmt.Fprintf(w, "\n==== Paired (docs/performance.md) ====\n\n")
	fmt.Fprintf(w, "Command: `go run ./bench/scalebench %s`. Two processes, %d and %d identities, took turns request "+
		"by request (concurrent phases: in %d slices each). Live heap after the fill: %.2f GiB and %.2f GiB.\n\n",
		strings.Join(os.Args[1:], " "), big.Identities, small.Identities, turnSlices, gib(big.HeapLive), gib(small.HeapLive))
	fmt.Fprintf(w, "| phase | p50 / p99 ms at %d | p50 / p99 ms at %d | p99 ratio | per second ratio | CPU stolen | within 2x |\n|---|---|---|---|---|---|---|\n",
		big.Identities, small.Identities)
	for i, b := range big.Phases {
		if i >= len(small.Phases) || small.Phases[i].Name != b.Name {
			fmt.Fprintf(w, "| %s | %.2f / %.2f | (no such phase) | | | | |\n", b.Name, b.P50, b.P99)
			continue
		}
		s := small.Phases[i]
		ratio := b.P99 / s.P99
		verdict := "yes"
		if b.Errors > 0 || s.Errors > 0 {
			verdict = fmt.Sprintf("**errors** (%d, %d)", b.Errors, s.Errors)
		} else if ratio > 2 {
			verdict = "**no**"
		}
		if b.Snapshot || s.Snapshot {
			verdict += " (raft snapshot during the phase)"
		}
		rate := ""
		if b.Concurrent && b.Rate > 0 && s.Rate > 0 {
			rate = fmt.Sprintf("%.2f", b.Rate/s.Rate)
		}
		fmt.Fprintf(w, "| `%s` | %.2f / %.2f | %.2f / %.2f | %.2f | %s | %.0f%% / %.0f%% | %s |\n", b.Name, b.P50, b.P99, s.P50, s.P99,
			ratio, rate, 100*b.Stolen, 100*s.Stolen, verdict)
	}
}

// linePrefixer writes each whole line of a child's output to w with the
// child's prefix in front of it, in one Write: the two children's lines
// reach os.Stdout whole (an *os.File serializes its Writes).
type linePrefixer struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *linePrefixer) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintf(p.w, "%s%s", p.prefix, p.buf[:i+1]); err != nil {
			return len(b), err
		}
		p.buf = p.buf[i+1:]
	}
}

func (p *linePrefixer) flush() {
	if len(p.buf) > 0 {
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf)
		p.buf = nil
	}
}
