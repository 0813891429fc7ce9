package controller

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultGCPercent is the collector target a node runs with unless told
// otherwise. Most of a controller's heap is the model, which lives as long
// as the process; a collection marks all of it, and with Go's default of 100
// one runs each time the requests have allocated as much again as the model
// holds. At 200 they run half as often, which cut the collector's share of
// the CPU of a loaded node (about a third of it at 100,000 identities, see
// docs/performance-history.md, Session 2), for a heap that peaks at about three times the live
// model instead of two (1.2 GiB instead of 0.8 GiB at 100,000 identities).
const DefaultGCPercent = 200

// applyGCPercent sets the collector target of the process, unless the
// operator set GOGC in the environment (the runtime has applied it already).
// It says whether it set it.
func applyGCPercent(percent int, log hclog.Logger) bool {
	if v, ok := os.LookupEnv("GOGC"); ok {
		log.Debug("garbage collector target from the environment", "GOGC", v)
		return false
	}
	if percent == 0 {
		percent = DefaultGCPercent
	}
	debug.SetGCPercent(percent)
	return true
}

// The collector's headroom (--gc-headroom). A percentage alone makes a
// small model pay most for its collections: with 100 MiB live, GOGC 200
// starts a cycle every 200 MiB allocated, and each marks the whole model.
// Under the side-by-side write benchmark (a model growing from nothing to
// about 50,000 identities) the mark workers were 7.7% of the nodes' CPU;
// with the headroom below 2.1%, and the nodes spent 3% less CPU per write
// (median of nine pairs; fresh pages to fault in and clear take back part
// of it: docs/performance-history.md, issue 45). So the node lets the heap grow
// by at least the headroom between cycles: while the live heap is small
// the percentage is raised to headroom/live (after each cycle), and once
// the model is large enough, --gc-percent alone rules. The cost is memory
// a small node may hold as garbage before a cycle: at most the headroom,
// which with auto is the smaller of 512 MiB and a sixteenth of the
// machine's memory (or of the cgroup's limit, or of GOMEMLIMIT). A heap
// limit (GOMEMLIMIT) still makes cycles come early when the heap nears it.
// Tuners of the same shape are common (a memory threshold turned into a
// percentage); this one is a few lines over runtime/metrics, so no library.
//
// It is off by default. Under `make chaos` (nodes SIGKILLed and restarted
// while the others take writes, two CPUs) the slowest restart was ready
// 5.15, 5.25 and 5.30 s after its start with the auto headroom, 3.93 and
// 4.21 s without (issue 46 asks 5 s): a restarting node replaying its log
// faults in fresh memory instead of reusing what a collection frees. A node
// that serves a steady load of writes on a small model may turn it on.

// maxHeadroom is the default headroom on a machine with 8 GiB or more.
const maxHeadroom = 512 << 20

// maxTunedPercent bounds the raised percentage (a tiny live heap at start).
const maxTunedPercent = 10000

// gcTunerEvery is how often the tuner looks for a finished cycle.
const gcTunerEvery = 100 * time.Millisecond

// ParseGCHeadroom reads --gc-headroom: "0" (off, the default; "" in the
// library's Config), "auto", or a size in bytes with an optional KiB, MiB or
// GiB. auto is reported as -1.
func ParseGCHeadroom(s string) (int64, error) {
	switch strings.TrimSpace(s) {
	case "":
		return 0, nil
	case "auto":
		return -1, nil
	}
	num, unit := strings.TrimSpace(s), int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}} {
		if v, ok := strings.CutSuffix(num, u.suffix); ok {
			num, unit = strings.TrimSpace(v), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("must be auto, 0 (off) or a size in bytes such as 268435456, 256MiB or 1GiB")
	}
	if n > math.MaxInt64/unit || n*unit > 1<<40 {
		return 0, errors.New("must be at most 1TiB")
	}
	return n * unit, nil
}

// defaultHeadroom is the auto headroom for a machine of mem bytes.
func defaultHeadroom(mem uint64) uint64 {
	if mem == 0 {
		return maxHeadroom / 4
	}
	return min(maxHeadroom, mem/16)
}

// machineMemory is the memory the process may use: the smallest of the
// machine's, its cgroup's limit and GOMEMLIMIT; 0 when none can be read.
func machineMemory() uint64 {
	var mem uint64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil {
					mem = kb << 10
				}
				break
			}
		}
		_ = f.Close()
	}
	lower := func(v uint64) {
		if v > 0 && (mem == 0 || v < mem) {
			mem = v
		}
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(p); err == nil {
			if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v < 1<<50 {
				lower(v)
			}
		}
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		lower(uint64(l))
	}
	return mem
}

// gcTuner raises the collector's percentage while the live heap is under
// the headroom it keeps.
type gcTuner struct {
	percent  int    // --gc-percent: the least percentage
	headroom uint64 // bytes the heap may grow by between cycles, at least
	current  int    // the percentage set
	set      func(int) int
}

// adjust sets the percentage for a cycle that left live bytes live. It
// changes it only when off by more than a tenth, or back to the floor.
func (t *gcTuner) adjust(live uint64) {
	want := t.percent
	if live > 0 {
		if p := t.headroom * 100 / live; p > uint64(want) {
			want = int(min(p, maxTunedPercent))
		}
	}
	if want == t.current {
		return
	}
	if want != t.percent && want*10 >= t.current*9 && want*10 <= t.current*11 {
		return
	}
	t.set(want)
	t.current = want
}

// run adjusts the percentage after each cycle, until stop is closed.
func (t *gcTuner) run(every time.Duration, stop <-chan struct{}) {
	samples := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
	var seen uint64
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		metrics.Read(samples)
		if samples[0].Value.Kind() == metrics.KindUint64 && samples[1].Value.Kind() == metrics.KindUint64 {
			if c := samples[0].Value.Uint64(); c != seen {
				seen = c
				t.adjust(samples[1].Value.Uint64())
			}
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// The tuner is the process's: nodes started in one process (tests) share
// it, the last start's settings ruling.
var processGC struct {
	mu   sync.Mutex
	stop chan struct{}
}

// tuneGC sets the process's collector from --gc-percent and --gc-headroom
// (-1: auto, 0: off), unless GOGC is set in the environment. It returns
// what it set, to log.
func tuneGC(percent int, headroom int64, log hclog.Logger) string {
	processGC.mu.Lock()
	defer processGC.mu.Unlock()
	if processGC.stop != nil {
		close(processGC.stop)
		processGC.stop = nil
	}
	if !applyGCPercent(percent, log) {
		return "GOGC from the environment"
	}
	if percent == 0 {
		percent = DefaultGCPercent
	}
	if headroom < 0 {
		headroom = int64(defaultHeadroom(machineMemory()))
	}
	if headroom == 0 {
		return fmt.Sprintf("GOGC %d", percent)
	}
	t := &gcTuner{percent: percent, headroom: uint64(headroom), current: percent, set: debug.SetGCPercent}
	stop := make(chan struct{})
	processGC.stop = stop
	go t.run(gcTunerEvery, stop)
	return fmt.Sprintf("GOGC %d, raised while the live heap is under %d MiB so that it may grow by that much between cycles", percent, headroom>>20)
}
