package controller

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

func TestGCPercent_AppliedUnlessGOGCIsSet(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)

	applyGCPercent(0, hclog.NewNullLogger())
	if got := debug.SetGCPercent(100); got != DefaultGCPercent {
		t.Fatalf("default: GC percent %d, want %d", got, DefaultGCPercent)
	}
	applyGCPercent(150, hclog.NewNullLogger())
	if got := debug.SetGCPercent(100); got != 150 {
		t.Fatalf("--gc-percent 150: GC percent %d", got)
	}
	t.Setenv("GOGC", "100")
	applyGCPercent(300, hclog.NewNullLogger())
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set: GC percent %d, want the environment's 100", got)
	}
}

func TestGCPercent_OutOfRangeIsRefused(t *testing.T) {
	for _, p := range []int{-1, 5, 20000} {
		c := Config{GCPercent: p}
		c.Defaults()
		if err := c.Validate(); err == nil {
			t.Errorf("--gc-percent %d accepted", p)
		}
	}
	for _, p := range []int{0, 10, 200, 10000} {
		c := Config{GCPercent: p, AdminPassword: "a-long-password"}
		c.Defaults()
		if err := c.Validate(); err != nil {
			t.Errorf("--gc-percent %d refused: %v", p, err)
		}
	}
}

func TestGCHeadroom_Parse(t *testing.T) {
	for in, want := range map[string]int64{"auto": -1, "": 0, "0": 0, "268435456": 256 << 20, "256MiB": 256 << 20,
		"1GiB": 1 << 30, "64 KiB": 64 << 10, "100B": 100} {
		if got, err := ParseGCHeadroom(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"lots", "-1", "1.5GiB", "12MB", "2048GiB", "MiB"} {
		if _, err := ParseGCHeadroom(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestGCHeadroom_DefaultIsASixteenthOfTheMachineUpTo512MiB(t *testing.T) {
	for mem, want := range map[uint64]uint64{24 << 30: 512 << 20, 8 << 30: 512 << 20, 2 << 30: 128 << 20, 0: 128 << 20} {
		if got := defaultHeadroom(mem); got != want {
			t.Errorf("%d bytes of memory: headroom %d, want %d", mem, got, want)
		}
	}
}

// While the live heap is small, the percentage is raised so that the heap
// may grow by the headroom; once the model is large, --gc-percent rules.
func TestGCTuner_RaisesThePercentageWhileTheLiveHeapIsSmall(t *testing.T) {
	var set []int
	tu := &gcTuner{percent: 200, headroom: 512 << 20, current: 200, set: func(p int) int { set = append(set, p); return 0 }}
	tu.adjust(100 << 20) // 100 MiB live: 512%
	tu.adjust(104 << 20) // within a tenth: unchanged
	tu.adjust(50 << 20)  // 1024%
	tu.adjust(1 << 30)   // 1 GiB live: the floor
	tu.adjust(1)         // a tiny heap: bounded
	if want := []int{512, 1024, 200, maxTunedPercent}; !slices.Equal(set, want) {
		t.Fatalf("percentages set %v, want %v", set, want)
	}
}

// The process's tuner raises the runtime's target after a collection of a
// heap smaller than the headroom, and GOGC in the environment turns it off.
func TestGCTuner_TheProcessTargetFollowsTheLiveHeap(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer func() {
		tuneGC(0, 0, hclog.NewNullLogger()) // stop it
		debug.SetGCPercent(prev)
	}()
	gogc := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	tuneGC(150, 1<<40, hclog.NewNullLogger()) // a headroom far above any test's heap
	deadline := time.Now().Add(5 * time.Second)
	for gogc() != maxTunedPercent {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d after collections, want %d", gogc(), maxTunedPercent)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	tuneGC(150, 0, hclog.NewNullLogger())
	if got := gogc(); got != 150 {
		t.Fatalf("headroom off: GOGC %d, want 150", got)
	}
	t.Setenv("GOGC", "100")
	debug.SetGCPercent(100)
	tuneGC(150, 1<<40, hclog.NewNullLogger()) // starts no tuner
	if got := gogc(); got != 100 {
		t.Fatalf("with GOGC set: %d, want the environment's 100", got)
	}
}
