package cluster

import (
	"errors"
	"fmt"
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

// TestRestart_AFollowerDownForSecondsCatchesUpAtOnce: a follower killed
// for six seconds and started again gets the entries it missed at once.
// raft's replication to a follower it cannot reach doubles its wait after
// every failed call (10 ms, 20, 40, ... up to 10 s), and a refused dial
// used to fail every call at once: six seconds down put the next attempt
// about 10 s after the kill, so the restarted node waited seconds more for
// the leader (issue 46). raftLayer.Dial now holds a dial to a peer that
// is down, so the leader's calls fail rarely and the first retry after the
// restart reaches it.
func TestRestart_AFollowerDownForSecondsCatchesUpAtOnce(t *testing.T) {
	t.Parallel()
	c := mustNewCluster(t, 3)
	ctx := ctxTimeout(t, 30*time.Second)
	l := c.Leader()
	f := c.Followers()[0]
	mustApply(t, ctx, l, setCmd("k", "v0"))
	cfg := f.cfg
	cfg.BindAddr = f.Addr()
	cfg.FSM = newKVFSM()
	f.kill()
	for i := range 60 { // writes paced over the six seconds it is down, as under load
		mustApply(t, ctx, l, setCmd("k", fmt.Sprint("v", i+1)))
		time.Sleep(100 * time.Millisecond)
	}
	r := mustStartNode(t, cfg)
	restarted := time.Now()
	want := l.fsm.AppliedIndex()
	testPoll(t, func() bool { return r.fsm.AppliedIndex() >= want }, 20*time.Second)
	d := time.Since(restarted)
	t.Logf("the restarted follower had the entries it missed %s after its start", d.Round(time.Millisecond))
	if d > time.Second {
		t.Fatal("that is over the 1 s aim")
	}
}
