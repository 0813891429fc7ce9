package auth

import (
	"fmt"
	"testing"
	"time"
)

func TestThrottle_BurstThenOneTokenPerIntervalWithTheWaitToldAndKeysApart(t *testing.T) {
	th := NewThrottle(100)
	l := Limit{Burst: 3, Every: 10 * time.Second}
	t0 := time.Unix(1_000_000, 0)
	for i := 0; i < 3; i++ {
		if _, ok := th.Check("user:a", l, t0); !ok {
			t.Fatalf("attempt %d refused within the burst", i)
		}
		th.Fail("user:a", l, t0)
	}
	wait, ok := th.Check("user:a", l, t0)
	if ok || wait != 10*time.Second {
		t.Fatalf("after the burst: ok=%v wait=%v, want a 10 s wait", ok, wait)
	}
	if _, ok := th.Check("user:b", l, t0); !ok {
		t.Fatal("another key was throttled")
	}
	if _, ok := th.Check("user:a", l, t0.Add(10*time.Second)); !ok {
		t.Fatal("no token came back after one interval")
	}
	// Parallel failures beyond the burst do not push the wait past one interval.
	for i := 0; i < 50; i++ {
		th.Fail("user:a", l, t0)
	}
	if wait, _ := th.Check("user:a", l, t0); wait > 10*time.Second {
		t.Fatalf("overdrawn bucket waits %v", wait)
	}
}

func TestThrottle_TheTableIsBoundedAndDropsRefilledKeysFirst(t *testing.T) {
	th := NewThrottle(10)
	l := Limit{Burst: 2, Every: time.Second}
	t0 := time.Unix(1_000_000, 0)
	th.Fail("victim", l, t0)
	th.Fail("victim", l, t0)
	for i := 0; i < 1000; i++ {
		th.Fail(fmt.Sprintf("flood-%d", i), l, t0.Add(time.Duration(i)*time.Millisecond))
	}
	if n := th.Len(); n > 10 {
		t.Fatalf("%d keys tracked, max 10", n)
	}
	// Keys whose buckets refilled are dropped on the next insert.
	th.Fail("late", l, t0.Add(time.Hour))
	if n := th.Len(); n != 1 {
		t.Fatalf("%d keys after every bucket refilled, want 1", n)
	}
}
