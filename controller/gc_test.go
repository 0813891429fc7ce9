package controller

import (
	"runtime/debug"
	"testing"

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
