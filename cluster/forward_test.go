package cluster

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestForward_AFollowerAppliesItsWriteAheadOfRaft: a write forwarded by a
// follower whose raft delivers commits late (held here) is answered as soon
// as the leader says it committed, because the follower applies its own log
// up to the entry; raft's delivery of those entries later changes nothing.
func TestForward_AFollowerAppliesItsWriteAheadOfRaft(t *testing.T) {
	t.Parallel()
	ctx, leader, f := followerOfThree(t)
	gate, release := newGate(t)
	f.fsm.mu.Lock()
	f.fsm.delivery = gate
	f.fsm.mu.Unlock()
	idx := mustApply(t, ctx, f, setCmd("k", "v"))
	if v, _ := f.fsm.get("k"); v != "v" || f.fsm.AppliedIndex() < idx {
		t.Fatalf("the follower answered before applying its write: k=%q, applied %d < %d", v, f.fsm.AppliedIndex(), idx)
	}
	if st := f.Stats(); st.ForwardedAhead == 0 {
		t.Fatalf("no forwarded write counted as applied ahead of raft: %+v", st)
	}
	mustApply(t, ctx, leader, setCmd("k", "w"))

	release()
	catchesUp(t, ctx, leader, f, map[string]string{"before": "1", "k": "w"})
}

// followerOfThree starts a three-node cluster whose leader wrote before=1
// and returns a follower that has applied it.
func followerOfThree(t *testing.T) (ctx context.Context, leader, f *testNode) {
	c := mustNewCluster(t, 3)
	ctx = ctxTimeout(t, 20*time.Second)
	leader = c.Leader()
	mustApply(t, ctx, leader, setCmd("before", "1"))
	f = c.Followers()[0]
	testPoll(t, func() bool { v, _ := f.fsm.get("before"); return v == "1" }, 10*time.Second)
	return ctx, leader, f
}

// newGate returns a channel that release closes (once), and closes it at
// the test's end too, before the nodes' shutdown.
func newGate(t *testing.T) (gate chan struct{}, release func()) {
	gate = make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	return gate, release
}

// catchesUp: once held no more, the follower takes a write, raft's delivery
// reaches the leader's last entry, and the follower's model holds want and
// that write.
func catchesUp(t *testing.T, ctx context.Context, leader, f *testNode, want map[string]string) {
	t.Helper()
	mustApply(t, ctx, f, setCmd("after", "2"))
	testPoll(t, func() bool { return f.raft.AppliedIndex() >= leader.raft.LastIndex() }, 10*time.Second)
	want["after"] = "2"
	for k, w := range want {
		if v, _ := f.fsm.get(k); v != w {
			t.Errorf("follower: %s=%q, want %q", k, v, w)
		}
	}
}

// TestForward_WithApplyAheadOffAFollowerWaitsForRaft: with the apply-ahead
// off (Config.NoApplyAhead), a follower's forwarded writes still answer
// with the leader's result, applied on the follower before the answer,
// and every one of them by raft's delivery, none ahead of it.
func TestForward_WithApplyAheadOffAFollowerWaitsForRaft(t *testing.T) {
	t.Parallel()
	c := mustNewCluster(t, 3, func(cfg *Config) { cfg.NoApplyAhead = true })
	ctx := ctxTimeout(t, 20*time.Second)
	leader := c.Leader()
	f := c.Followers()[0]
	mustApply(t, ctx, f, setCmd("k", "v"))
	resp, idx, err := f.Apply(ctx, setCmd("k", "w"))
	if err != nil || string(resp) != "v" {
		t.Fatalf("the second set's result: %q, %v; want the previous value %q", resp, err, "v")
	}
	if v, _ := f.fsm.get("k"); v != "w" || f.fsm.AppliedIndex() < idx {
		t.Fatalf("the follower answered before applying its write: k=%q, applied %d < %d", v, f.fsm.AppliedIndex(), idx)
	}
	if st := f.Stats(); st.ForwardedWaited != 2 || st.ForwardedAhead+st.ForwardedApplied != 0 {
		t.Fatalf("forwarded writes counted as %d waited, %d ahead, %d already applied; want 2 waited",
			st.ForwardedWaited, st.ForwardedAhead, st.ForwardedApplied)
	}
	catchesUp(t, ctx, leader, f, map[string]string{"k": "w"})
}

// TestCommittedEntries_OnlyTheLeadersEntries: the entries a follower applies
// ahead of raft are read only when its entry at the committed index has the
// term the leader gave, and only within maxApplyAhead.
func TestCommittedEntries_OnlyTheLeadersEntries(t *testing.T) {
	t.Parallel()
	logs, err := openLogStore(t.TempDir(), hclog.NewNullLogger(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	var entries []*raft.Log
	for i := uint64(1); i <= 5; i++ {
		term := uint64(1)
		if i >= 4 {
			term = 2 // an old leader's entries, say, at 4 and 5
		}
		entries = append(entries, &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: setCmd("k", "v")})
	}
	if err = logs.StoreLogs(entries); err != nil {
		t.Fatal(err)
	}
	n := &Node{logs: logs, store: logs}
	got, err := n.committedEntries(2)(2, 5)
	if err != nil || len(got) != 4 || got[0].Index != 2 || got[3].Index != 5 || got[3].Term != 2 {
		t.Fatalf("entries 2..5 of term 2: %v, %v", got, err)
	}
	if _, err := n.committedEntries(3)(2, 5); err == nil {
		t.Fatal("entry 5 is of term 2 here; the leader's of term 3 must not be taken for it")
	}
	if _, err := n.committedEntries(2)(5, 6); err == nil {
		t.Fatal("entry 6 is not in the log")
	}
	if _, err := n.committedEntries(2)(5, 5+maxApplyAhead); err == nil {
		t.Fatalf("%d entries at once", maxApplyAhead+1)
	}
}

// TestCommittedEntries_TakesTheBatchBeingStored: entries of the batch the
// log store is writing are read from it, the ones before it from the log,
// with the same check of the last entry's term.
func TestCommittedEntries_TakesTheBatchBeingStored(t *testing.T) {
	t.Parallel()
	logs, err := openLogStore(t.TempDir(), hclog.NewNullLogger(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	entry := func(i, term uint64) *raft.Log {
		return &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: setCmd("k", "v")}
	}
	if err := logs.StoreLogs([]*raft.Log{entry(1, 1), entry(2, 1), entry(3, 1)}); err != nil {
		t.Fatal(err)
	}
	batch := []*raft.Log{entry(4, 2), entry(5, 2), entry(6, 2)}
	logs.storing.Store(&batch)
	if got := logs.lastArrived(); got != 6 {
		t.Fatalf("last arrived %d, want 6 (the batch being stored)", got)
	}
	n := &Node{logs: logs, store: logs}
	got, err := n.committedEntries(2)(2, 5)
	if err != nil || len(got) != 4 || got[0].Index != 2 || got[1].Index != 3 || got[2] != batch[0] || got[3] != batch[1] {
		t.Fatalf("entries 2..5, 4 and 5 from the batch: %v, %v", got, err)
	}
	if _, err := n.committedEntries(3)(2, 5); err == nil {
		t.Fatal("entry 5 of the batch is of term 2; the leader's of term 3 must not be taken for it")
	}
	if _, err := n.committedEntries(2)(6, 7); err == nil {
		t.Fatal("entry 7 has not arrived")
	}
	logs.storing.Store(nil)
	if got := logs.lastArrived(); got != 3 {
		t.Fatalf("last arrived %d with no batch being stored, want 3", got)
	}
}

// TestForward_AFollowerAppliesItsWriteBeforeItsOwnFsync: a follower whose
// store of the entry is held (its disk slow, say) still answers its
// forwarded write as soon as the leader says it committed, from the batch
// being stored, while the store goes on.
func TestForward_AFollowerAppliesItsWriteBeforeItsOwnFsync(t *testing.T) {
	t.Parallel()
	ctx, leader, f := followerOfThree(t)
	gate, release := newGate(t)
	held := make(chan struct{}, 1)
	hook := func(logs []*raft.Log) {
		for _, l := range logs {
			if bytes.Contains(l.Data, []byte("held-key")) {
				select {
				case held <- struct{}{}:
				default:
				}
				<-gate
				return
			}
		}
	}
	f.store.beforeStore.Store(&hook)
	type result struct {
		idx uint64
		err error
	}
	done := make(chan result, 1)
	go func() {
		_, idx, err := f.Apply(ctx, setCmd("held-key", "v"))
		done <- result{idx, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		select {
		case <-held:
		default:
			t.Fatal("the follower's store of the entry was never held")
		}
		if v, _ := f.fsm.get("held-key"); v != "v" || f.fsm.AppliedIndex() < r.idx {
			t.Fatalf("the follower answered before applying its write: held-key=%q, applied %d < %d", v, f.fsm.AppliedIndex(), r.idx)
		}
		if last := f.store.lastStored(); last >= r.idx {
			t.Fatalf("entry %d is stored (last %d); the store was to be still held", r.idx, last)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follower did not answer while its own store of the entry was held")
	}
	release()
	f.store.beforeStore.Store(nil)
	catchesUp(t, ctx, leader, f, map[string]string{"before": "1", "held-key": "v"})
}

// TestForward_AnsweredAtCommitWithTheFollowersOwnResult: the leader answers
// a forwarded write once it is committed, before applying it itself (its
// raft delivery is held here), and the follower answers with the result
// its own FSM gave the entry: the previous value of a set, the FSM's error
// of a refused command.
func TestForward_AnsweredAtCommitWithTheFollowersOwnResult(t *testing.T) {
	t.Parallel()
	ctx, leader, f := followerOfThree(t)
	mustApply(t, ctx, f, setCmd("k", "v"))
	testPoll(t, func() bool { v, _ := leader.fsm.get("k"); return v == "v" }, 10*time.Second)

	// held runs cmd through the follower with the leader's delivery held;
	// hold's release lets the leader apply it afterwards.
	held := func(cmd []byte) (resp []byte, idx uint64, err error, release func()) {
		var gate chan struct{}
		gate, release = newGate(t)
		leader.fsm.mu.Lock()
		leader.fsm.delivery = gate
		leader.fsm.mu.Unlock()
		resp, idx, err = f.Apply(ctx, cmd)
		return resp, idx, err, release
	}

	resp, idx, err, release := held(setCmd("k", "w"))
	if err != nil || string(resp) != "v" {
		t.Fatalf("set k=w: %q, %v; want the previous value %q", resp, err, "v")
	}
	if v, _ := f.fsm.get("k"); v != "w" || f.fsm.AppliedIndex() < idx {
		t.Fatalf("the follower answered before applying its write: k=%q, applied %d < %d", v, f.fsm.AppliedIndex(), idx)
	}
	if v, _ := leader.fsm.get("k"); v != "v" {
		t.Fatalf("the leader applied k=%q with its delivery held", v)
	}
	release()
	testPoll(t, func() bool { return leader.fsm.AppliedIndex() >= idx }, 10*time.Second)

	_, fidx, err, release := held([]byte(`{"op":"fail"}`))
	if err == nil || !strings.Contains(err.Error(), "kv: refused by fsm") || fidx <= idx {
		t.Fatalf("a refused command: index %d, %v; want the FSM's error after %d", fidx, err, idx)
	}
	if n := f.waits.waiting.Load(); n != 0 {
		t.Errorf("the follower still holds %d forwarded writes' waits", n)
	}
	if st := f.Stats(); st.ForwardedAtCommit < 2 {
		t.Errorf("%d of the follower's writes counted as answered at commit, want at least the two held ones", st.ForwardedAtCommit)
	}
	// On an idle connection the answers go out with the commit, from
	// raft's apply goroutine, not from the requests' handlers.
	if st := leader.Stats(); st.CommitAnswersSentWithCommit < 2 || st.CommitAnswersSentByHandler != 0 {
		t.Errorf("the leader's answers at commit: %d sent with the commit, %d by their handlers; want every one with the commit",
			st.CommitAnswersSentWithCommit, st.CommitAnswersSentByHandler)
	}
	release()
	testPoll(t, func() bool { return leader.fsm.AppliedIndex() >= fidx }, 10*time.Second)
	if v, _ := leader.fsm.get("k"); v != "w" {
		t.Fatalf("leader after its delivery: k=%q, want w", v)
	}
	if n := leader.waits.waiting.Load(); n != 0 {
		t.Errorf("the leader still holds %d handlers' waits", n)
	}
}
