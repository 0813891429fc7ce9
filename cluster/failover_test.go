package cluster

import (
	"errors"
	"testing"
	"time"
)

// TestForward_AWriteToAFrozenLeaderFailsFastAndTheNextGoesToTheNewLeader:
// a follower does not hold a forwarded write until the frozen leader wakes:
// once it learns of a new leader (or the leader has been silent for
// ForwardStallTimeout) the write fails with ErrOutcomeUnknown, and the
// next write through the same follower commits on the new leader.
func TestForward_AWriteToAFrozenLeaderFailsFastAndTheNextGoesToTheNewLeader(t *testing.T) {
	t.Parallel()
	c := mustNewCluster(t, 3)
	ctx := ctxTimeout(t, 30*time.Second)
	old := c.Leader()
	f := c.Followers()[0]
	mustApply(t, ctx, f, setCmd("k", "v0")) // the forward connection is up
	old.Freeze(true)
	defer old.Freeze(false)

	start := time.Now()
	_, _, err := f.Apply(ctx, setCmd("k", "v1"))
	took := time.Since(start)
	if !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("write forwarded to a frozen leader: %v, want ErrOutcomeUnknown", err)
	}
	if took > 3500*time.Millisecond {
		t.Fatalf("the write was held %s", took)
	}
	nl := c.WaitForNewLeader(old)
	if _, _, err := f.Apply(ctx, setCmd("k", "v2")); err != nil {
		t.Fatalf("next write through %s (new leader %s): %v", f.ID(), nl.ID(), err)
	}
	if got, _ := f.fsm.get("k"); got != "v2" {
		t.Fatalf("k=%q after the write, want v2", got)
	}
	t.Logf("forwarded write failed after %s; new leader %s", took, nl.ID())
}
