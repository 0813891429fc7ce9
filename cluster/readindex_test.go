package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestReadIndex_AFollowerSeesAWriteAcknowledgedThroughAnotherNode: after
// ReadIndex, a node's FSM holds every write acknowledged before it began,
// whichever node took the write.
func TestReadIndex_AFollowerSeesAWriteAcknowledgedThroughAnotherNode(t *testing.T) {
	t.Parallel()
	c := mustNewCluster(t, 3)
	ctx := ctxTimeout(t, 20*time.Second)
	fs := c.Followers()
	for i := range 20 {
		v := fmt.Sprint(i)
		mustApply(t, ctx, fs[0], setCmd("k", v))
		for _, n := range c.nodes {
			if _, err := n.ReadIndex(ctx); err != nil {
				t.Fatalf("read index on %s: %v", n.ID(), err)
			}
			if got, _ := n.fsm.get("k"); got != v {
				t.Fatalf("after read index %s has k=%q, want %q", n.ID(), got, v)
			}
		}
	}
}

// TestReadIndex_WritesNoLogEntryPerRead: reads after the first of a term
// cost a heartbeat round, not a log entry.
func TestReadIndex_WritesNoLogEntryPerRead(t *testing.T) {
	t.Parallel()
	c := mustNewCluster(t, 3)
	ctx := ctxTimeout(t, 20*time.Second)
	l := c.Leader()
	mustApply(t, ctx, l, setCmd("k", "v"))
	f := c.Followers()[0]
	if _, err := f.ReadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	before := l.raft.LastIndex()
	for range 100 {
		for _, n := range []*testNode{l, f} {
			if _, err := n.ReadIndex(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if after := l.raft.LastIndex(); after != before {
		t.Fatalf("200 reads moved the log from %d to %d", before, after)
	}
}

// TestReadIndex_AFrozenOldLeaderNeverAnswersFromItsOwnState: a leader cut
// off from the others (its network frozen, as under SIGSTOP or a partition)
// fails the quorum round; it must not return success while the others
// have moved on.
func TestReadIndex_AFrozenOldLeaderNeverAnswersFromItsOwnState(t *testing.T) {
	t.Parallel()
	old, ctx := deposeLeader(t, false)
	start := time.Now()
	_, err := old.ReadIndex(ctx)
	if err == nil {
		got, _ := old.fsm.get("k")
		t.Fatalf("the cut-off old leader answered a linearizable read (k=%q)", got)
	}
	if !errors.Is(err, ErrNoLeader) && !errors.Is(err, ErrNotLeader) {
		t.Fatalf("error %v, want ErrNoLeader or ErrNotLeader", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the refusal took %s", d)
	}
	// Healed, it catches up and reads the new value.
	healedReadsV2(t, ctx, old)
}

// TestReadIndex_AnOldLeaderFedStaleAnswersDoesNotAnswerFromItsOwnState: a
// leader paused (SIGSTOP) reads, when it resumes, the answers its
// followers had sent before the others elected a new leader; raft's
// VerifyLeader and lease take them as fresh (StaleAcks stands for them,
// and the freeze keeps the new term from reaching it). A read index on it
// must still not succeed on its old state while a write acknowledged
// through the new leader is missing from it: the proof of leadership comes
// from answers given after the read began (confirmterm.go). Before that,
// the read succeeded here at once with k=v1: a stale read, the kind of
// non-linearizable history TestClusterChaos found once (issue 46).
func TestReadIndex_AnOldLeaderFedStaleAnswersDoesNotAnswerFromItsOwnState(t *testing.T) {
	t.Parallel()
	old, ctx := deposeLeader(t, true)
	if !old.IsLeader() {
		t.Fatal("the old leader stepped down: the stale answers did not keep it leading, so this test shows nothing")
	}
	_, err := old.ReadIndex(ctx)
	if err == nil {
		got, _ := old.fsm.get("k")
		if got != "v2" {
			t.Fatalf("the deposed leader answered a linearizable read from its own state: k=%q after v2 was acknowledged", got)
		}
	}
	if err != nil && !errors.Is(err, ErrNoLeader) && !errors.Is(err, ErrNotLeader) {
		t.Fatalf("error %v, want ErrNoLeader or ErrNotLeader", err)
	}
	// Healed, it learns of the new term and reads the new value.
	healedReadsV2(t, ctx, old)
}

// deposeLeader starts a cluster whose leader applies k=v1 and reads it
// (the term's barrier behind it), then cuts that leader off (frozen, and
// fed stale answers when staleAcks) and applies k=v2 through the leader
// the others elect. It returns the old leader, cut off until the test
// heals it or ends.
func deposeLeader(t *testing.T, staleAcks bool) (*testNode, context.Context) {
	t.Helper()
	c := mustNewCluster(t, 3, func(cfg *Config) { cfg.LeaderWait = 1500 * time.Millisecond })
	ctx := ctxTimeout(t, 30*time.Second)
	old := c.Leader()
	mustApply(t, ctx, old, setCmd("k", "v1"))
	if _, err := old.ReadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	old.StaleAcks(staleAcks)
	old.Freeze(true)
	t.Cleanup(func() {
		old.StaleAcks(false)
		old.Freeze(false)
	})
	mustApply(t, ctx, c.WaitForNewLeader(old), setCmd("k", "v2"))
	return old, ctx
}

// healedReadsV2 heals old (deposeLeader) and polls until a read index on
// it succeeds with k=v2.
func healedReadsV2(t *testing.T, ctx context.Context, old *testNode) {
	t.Helper()
	old.StaleAcks(false)
	old.Freeze(false)
	testPoll(t, func() bool {
		if _, err := old.ReadIndex(ctx); err != nil {
			return false
		}
		got, _ := old.fsm.get("k")
		return got == "v2"
	}, 20*time.Second)
}

// TestReadIndex_MembersOfAnOlderReleaseStillConfirm: voters that do not
// know cluster.confirm_term (an older release, mid-upgrade) answer
// "unknown RPC"; the leader then proves its leadership as before, with
// raft's heartbeat round, instead of failing every linearizable read.
func TestReadIndex_MembersOfAnOlderReleaseStillConfirm(t *testing.T) {
	t.Parallel()
	c := mustNewCluster(t, 3)
	ctx := ctxTimeout(t, 20*time.Second)
	for _, f := range c.Followers() {
		f.handlersMu.Lock()
		delete(f.handlers, rpcConfirmTerm)
		f.handlersMu.Unlock()
	}
	mustApply(t, ctx, c.Leader(), setCmd("k", "v"))
	for _, n := range c.nodes {
		if _, err := n.ReadIndex(ctx); err != nil {
			t.Fatalf("read index on %s with followers of an older release: %v", n.ID(), err)
		}
		if got, _ := n.fsm.get("k"); got != "v" {
			t.Fatalf("%s: k=%q after read index", n.ID(), got)
		}
	}
}
