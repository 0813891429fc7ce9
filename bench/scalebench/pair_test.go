package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// turnPipes connects a child's turns to the parent's end of it over real
// pipes; closing doneW is the child's exit.
func turnPipes(t *testing.T) (child *turns, parent *pairedChild, doneW *os.File) {
	grantR, grantW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	doneR, doneW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { grantR.Close(); grantW.Close(); doneR.Close(); doneW.Close() })
	return &turns{grant: grantR, done: doneW}, &pairedChild{grant: grantW, done: doneR}, doneW
}

// TestTakeTurns_OneChildAtATimeInStrictAlternation runs two children of a
// paired run as goroutines over real pipes, each ending after its own number
// of steps: the parent hands the turn A, B, A, B, ..., never to both at once,
// and goes on with the one left once the other has ended.
func TestTakeTurns_OneChildAtATimeInStrictAlternation(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		log     []string
		holding atomic.Int32
		wg      sync.WaitGroup
	)
	child := func(name string, steps int) *pairedChild {
		tr, parent, doneW := turnPipes(t)
		wg.Go(func() {
			defer doneW.Close() // the child's exit
			tr.wait()
			for i := range steps {
				if holding.Add(1) != 1 {
					t.Errorf("%s step %d runs while the other child holds the turn", name, i)
				}
				mu.Lock()
				log = append(log, fmt.Sprintf("%s%d", name, i))
				mu.Unlock()
				holding.Add(-1)
				if i < steps-1 {
					tr.yield()
				}
			}
		})
		return parent
	}
	takeTurns([]*pairedChild{child("A", 3), child("B", 5)})
	wg.Wait()
	if got, want := strings.Join(log, " "), "A0 B0 A1 B1 A2 B2 B3 B4"; got != want {
		t.Fatalf("turns went %q, want %q", got, want)
	}
}

// TestPrintPaired_RatioAndVerdict checks the side-by-side table: the p99
// ratio of the larger size to the smaller, a verdict past 2x, errors and a
// raft snapshot named, and a rate ratio only for the concurrent phases.
func TestPrintPaired_RatioAndVerdict(t *testing.T) {
	t.Parallel()
	big := summary{Identities: 1000000, Phases: []phaseSummary{
		{Name: "POST /identities", P50: 0.8, P99: 1.8},
		{Name: "GET /identities", P50: 0.5, P99: 2.5, Snapshot: true},
		{Name: "GET /edge/client/v1/services", Concurrent: true, Rate: 900, P50: 2, P99: 8},
		{Name: "POST /service-policies", P99: 1, Errors: 2},
	}}
	small := summary{Identities: 100000, Phases: []phaseSummary{
		{Name: "POST /identities", P50: 0.8, P99: 1.2},
		{Name: "GET /identities", P50: 0.5, P99: 1.0},
		{Name: "GET /edge/client/v1/services", Concurrent: true, Rate: 1000, P50: 2, P99: 6},
		{Name: "POST /service-policies", P99: 1},
	}}
	var b strings.Builder
	printPaired(&b, big, small)
	out := b.String()
	for _, want := range []string{
		"| `POST /identities` | 0.80 / 1.80 | 0.80 / 1.20 | 1.50 |  | 0% / 0% | yes |",
		"| `GET /identities` | 0.50 / 2.50 | 0.50 / 1.00 | 2.50 |  | 0% / 0% | **no** (raft snapshot during the phase) |",
		"| `GET /edge/client/v1/services` | 2.00 / 8.00 | 2.00 / 6.00 | 1.33 | 0.90 | 0% / 0% | yes |",
		"| **errors** (2, 0) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// TestLinePrefixer_WholeLinesEachWithThePrefix: output arriving in pieces
// reaches the parent's output as whole lines, each prefixed once, and a
// last line without its newline is written by flush.
func TestLinePrefixer_WholeLinesEachWithThePrefix(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := &linePrefixer{w: &out, prefix: "[7] "}
	for _, piece := range []string{"fir", "st\nsec", "ond\n\nthi", "rd"} {
		if n, err := p.Write([]byte(piece)); n != len(piece) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", piece, n, err)
		}
	}
	if got, want := out.String(), "[7] first\n[7] second\n[7] \n"; got != want {
		t.Fatalf("before flush: %q, want %q", got, want)
	}
	p.flush()
	if got, want := out.String(), "[7] first\n[7] second\n[7] \n[7] third\n"; got != want {
		t.Fatalf("after flush: %q, want %q", got, want)
	}
}

// TestConcurrent_APairedPhaseComesInSlicesEachATurn: in a paired run a
// concurrent phase gives the turn back between slices of its time and at
// its end, turnSlices times in all, and sends no request while the other
// size holds the turn; its elapsed time is its own slices'.
func TestConcurrent_APairedPhaseComesInSlicesEachATurn(t *testing.T) {
	t.Parallel()
	tr, parent, doneW := turnPipes(t)
	var ours atomic.Bool // the child holds the turn
	ours.Store(true)
	yields := make(chan int)
	go func() { // the parent: every turn given back is handed over again after the other size's
		n := 0
		for {
			var b [1]byte
			if _, err := parent.done.Read(b[:]); err != nil {
				yields <- n
				return
			}
			ours.Store(false)
			n++
			time.Sleep(5 * time.Millisecond) // the other size's turn
			ours.Store(true)
			if _, err := parent.grant.Write([]byte{1}); err != nil {
				return
			}
		}
	}()
	b := &bench{cfg: &config{duration: 100 * time.Millisecond}, turns: tr}
	var outOfTurn atomic.Int64
	done := make(chan *stats)
	go func() {
		done <- b.concurrent(t.Context(), "slices", 2, func(context.Context, int, int) (int, []byte, error) {
			if !ours.Load() {
				outOfTurn.Add(1)
			}
			return 200, nil, nil
		})
	}()
	s := <-done
	doneW.Close() // the child's end: the parent counts what it got
	if n := <-yields; n != turnSlices {
		t.Fatalf("the phase gave the turn back %d times, want %d", n, turnSlices)
	}
	if outOfTurn.Load() > 0 {
		t.Fatalf("%d requests were sent while the other size held the turn", outOfTurn.Load())
	}
	if s.ok == 0 || s.elapsed < 100*time.Millisecond || s.elapsed > time.Second {
		t.Fatalf("the phase: %d answers in %s of its own slices, want some in about 100 ms", s.ok, s.elapsed)
	}
}
