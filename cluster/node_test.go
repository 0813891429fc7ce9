package cluster

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestSingleNodeBootstrapApplyRestart(t *testing.T) {
	n := mustNewNode(t)
	if n.HasState() {
		t.Fatal("fresh data dir reports existing state")
	}
	if err := n.BootstrapSelf(); err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t, 20*time.Second)
	if err := n.WaitForLeader(ctx); err != nil {
		t.Fatal(err)
	}
	testPoll(t, n.IsLeader, 10*time.Second)

	resp, idx1, err := n.Apply(ctx, setCmd("a", "1"))
	if err != nil || resp != nil || idx1 == 0 {
		t.Fatalf("first apply: resp=%q idx=%d err=%v", resp, idx1, err)
	}
	resp, idx2, err := n.Apply(ctx, setCmd("a", "2"))
	if err != nil || string(resp) != "1" || idx2 <= idx1 {
		t.Fatalf("second apply: resp=%q idx=%d err=%v", resp, idx2, err)
	}
	if v, _ := n.fsm.get("a"); v != "2" {
		t.Fatalf("a = %q", v)
	}
	// An FSM error comes back wrapped, with the index it was applied at.
	_, idx3, err := n.Apply(ctx, []byte(`{"op":"fail"}`))
	if err == nil || idx3 <= idx2 {
		t.Fatalf("fail apply: idx=%d err=%v", idx3, err)
	}

	st := n.Stats()
	if st.State != "Leader" || st.AppliedIndex < idx3 || st.CommitIndex < idx3 || st.LeaderID != n.ID() {
		t.Fatalf("stats: %+v", st)
	}
	m, err := n.Members()
	if err != nil || len(m) != 1 || !m[0].IsVoter || !m[0].IsLeader || m[0].Address != n.Addr() {
		t.Fatalf("members: %+v %v", m, err)
	}

	// Restart on the same data dir and port with an empty FSM.
	cfg := n.cfg
	cfg.BindAddr = n.Addr()
	cfg.FSM = newKVFSM()
	n.stop(t)
	if _, _, err := n.Apply(ctx, setCmd("x", "y")); !errors.Is(err, ErrShutdown) {
		t.Fatalf("apply after shutdown: %v", err)
	}
	r := mustStartNode(t, cfg)
	if !r.HasState() {
		t.Fatal("restarted node does not report existing state")
	}
	if err := r.BootstrapSelf(); !errors.Is(err, raft.ErrCantBootstrap) {
		t.Fatalf("re-bootstrap: %v", err)
	}
	if err := r.WaitForLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.fsm.get("a"); v != "2" {
		t.Fatalf("after restart a = %q", v)
	}
	if _, idx, err := r.Apply(ctx, setCmd("b", "3")); err != nil || idx <= idx3 {
		t.Fatalf("apply after restart: idx=%d err=%v", idx, err)
	}
}

func TestNoLeaderReturnsErrNoLeader(t *testing.T) {
	// A node that was never bootstrapped nor added has no leader.
	n := mustNewNode(t, func(c *Config) { c.LeaderWait = 300 * time.Millisecond })
	start := time.Now()
	_, _, err := n.Apply(context.Background(), setCmd("a", "1"))
	if !errors.Is(err, ErrNoLeader) {
		t.Fatalf("apply: %v", err)
	}
	if el := time.Since(start); el < 300*time.Millisecond || el > 5*time.Second {
		t.Fatalf("apply gave up after %s, want ~LeaderWait", el)
	}
	// A shorter context wins over LeaderWait, and both errors are visible.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = n.Barrier(ctx)
	if !errors.Is(err, ErrNoLeader) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("barrier: %v", err)
	}
	if err := n.AddVoter(context.Background(), "x", "127.0.0.1:1"); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("add voter: %v", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if err := n.WaitForLeader(ctx2); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("wait for leader: %v", err)
	}
}

func TestClusterForwardingReadYourWrites(t *testing.T) {
	c := mustNewCluster(t, 3)
	ctx := ctxTimeout(t, 30*time.Second)
	leader := c.Leader()
	fs := c.Followers()
	if len(fs) != 2 {
		t.Fatalf("%d followers", len(fs))
	}
	f := fs[0]
	for i := 0; i < 20; i++ {
		k, v := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		resp, idx, err := f.Apply(ctx, setCmd(k, v))
		if err != nil || resp != nil {
			t.Fatalf("forwarded apply %d: resp=%q err=%v", i, resp, err)
		}
		// Read-your-writes on the follower, right after Apply returned.
		if got, ok := f.fsm.get(k); !ok || got != v {
			t.Fatalf("follower read %s = %q,%v after apply at %d (applied %d)", k, got, ok, idx, f.fsm.AppliedIndex())
		}
	}
	// The FSM's bytes come back unchanged across forwarding.
	resp, _, err := f.Apply(ctx, setCmd("k0", "new"))
	if err != nil || string(resp) != "v0" {
		t.Fatalf("overwrite: resp=%q err=%v", resp, err)
	}
	// FSM errors come back too, with the index, and are not sentinels.
	_, idx, err := f.Apply(ctx, []byte(`{"op":"fail"}`))
	if err == nil || idx == 0 || errors.Is(err, ErrNoLeader) || errors.Is(err, ErrNotLeader) {
		t.Fatalf("forwarded fsm error: idx=%d err=%v", idx, err)
	}

	// Linearizable read on the other follower: after Barrier it sees the
	// last write even if its own apply loop was behind.
	other := fs[1]
	if err := other.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _ := other.fsm.get("k0"); v != "new" {
		t.Fatalf("after barrier k0 = %q", v)
	}
	if v, _ := leader.fsm.get("k19"); v != "v19" {
		t.Fatalf("leader k19 = %q", v)
	}

	m, err := f.Members()
	if err != nil || len(m) != 3 {
		t.Fatalf("members: %+v %v", m, err)
	}
	leaders := 0
	for _, mm := range m {
		if !mm.IsVoter {
			t.Fatalf("member not voter: %+v", mm)
		}
		if mm.IsLeader {
			leaders++
			if mm.ID != leader.ID() || mm.Address != leader.Addr() {
				t.Fatalf("wrong leader member %+v", mm)
			}
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders in %+v", leaders, m)
	}
	if st := f.Stats(); st.State != "Follower" || st.LeaderID != leader.ID() || st.LastContact.IsZero() {
		t.Fatalf("follower stats %+v", st)
	}
}

func TestLeaderShutdownFailover(t *testing.T) {
	c := mustNewCluster(t, 3)
	ctx := ctxTimeout(t, 40*time.Second)
	old := c.Leader()
	mustApply(t, ctx, old, setCmd("before", "1"))
	// Writers keep going through the followers while the leader leaves.
	stopWriters := make(chan struct{})
	var wg sync.WaitGroup
	var ok, unknown atomic.Int64
	for i, f := range c.Followers() {
		for j := 0; j < 4; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					select {
					case <-stopWriters:
						return
					default:
					}
					_, _, err := f.Apply(ctx, setCmd(fmt.Sprintf("w%d-%d-%d", i, j, k), "x"))
					switch {
					case err == nil:
						ok.Add(1)
					case errors.Is(err, ErrOutcomeUnknown):
						unknown.Add(1) // acceptable: in flight when leadership moved
					default:
						t.Errorf("write during graceful failover: %v", err)
						return
					}
				}
			}()
		}
	}
	testPoll(t, func() bool { return ok.Load() > 50 }, 10*time.Second)
	// Graceful: Shutdown hands leadership over first.
	start := time.Now()
	old.stop(t)
	nl := c.WaitForNewLeader(old)
	t.Logf("graceful failover took %s", time.Since(start))
	before := ok.Load()
	testPoll(t, func() bool { return ok.Load() > before+50 }, 10*time.Second)
	close(stopWriters)
	wg.Wait()
	t.Logf("writes during failover: %d ok, %d outcome unknown", ok.Load(), unknown.Load())
	for _, n := range c.running() {
		mustApply(t, ctx, n, setCmd("after-"+n.ID(), "1"))
	}
	if err := nl.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _ := nl.fsm.get("before"); v != "1" {
		t.Fatalf("lost write: before = %q", v)
	}

	// With two of three voters gone there is no quorum: no leader.
	last := c.Followers()[0]
	nl.kill()
	// Wait until it forgot the dead leader (heartbeat timeout), so the
	// write below is not forwarded to it on a connection that is dying.
	testPoll(t, func() bool { id, _ := last.Leader(); return id == "" }, 10*time.Second)
	actx, cancel := context.WithTimeout(ctx, 800*time.Millisecond)
	defer cancel()
	_, _, err := last.Apply(actx, setCmd("nope", "1"))
	if !errors.Is(err, ErrNoLeader) {
		t.Fatalf("apply without quorum: %v", err)
	}
}

func TestLeaderCrashFailover(t *testing.T) {
	c := mustNewCluster(t, 3)
	ctx := ctxTimeout(t, 30*time.Second)
	old := c.Leader()
	f := c.Followers()[0]
	mustApply(t, ctx, f, setCmd("before", "1"))
	start := time.Now()
	old.kill()
	// Once the follower has noticed that its forwarding connection died, a
	// write is known not to have reached the old leader: Apply waits for
	// the new leader (within LeaderWait) and succeeds instead of failing.
	testPoll(t, func() bool {
		f.pool.mu.Lock()
		s := f.pool.slots[old.Addr()]
		f.pool.mu.Unlock()
		s.sem <- struct{}{}
		defer func() { <-s.sem }()
		return s.conn == nil || s.conn.isClosed()
	}, 5*time.Second)
	mustApply(t, ctx, f, setCmd("during", "1"))
	elapsed := time.Since(start)
	nl := c.WaitForNewLeader(old)
	t.Logf("crash failover: write completed %s after the crash, new leader %s", elapsed, nl.ID())
	if elapsed > 5*time.Second {
		t.Fatalf("failover took %s", elapsed)
	}
	mustApply(t, ctx, f, setCmd("after", "1"))
	if v, _ := f.fsm.get("before"); v != "1" {
		t.Fatalf("before = %q", v)
	}
}

func TestAmbiguousForwardIsNotRetried(t *testing.T) {
	// A forwarded request that was written but never answered must surface
	// as ErrOutcomeUnknown, not be silently re-applied elsewhere.
	a, b := mustNewNode(t), mustNewNode(t)
	started := make(chan struct{})
	b.RegisterRPC("test.hang", func(ctx context.Context, _ *x509.Certificate, _ []byte) ([]byte, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ctx := ctxTimeout(t, 10*time.Second)
	errc := make(chan error, 1)
	go func() {
		_, err := a.CallRPC(ctx, b.Addr(), "test.hang", nil)
		errc <- err
	}()
	<-started
	b.kill()
	err := <-errc
	if !errors.Is(err, ErrOutcomeUnknown) || retryable(err) {
		t.Fatalf("lost connection: %v (retryable %v)", err, retryable(err))
	}
}

func TestMembershipFromFollower(t *testing.T) {
	c := mustNewCluster(t, 3)
	ctx := ctxTimeout(t, 30*time.Second)
	fs := c.Followers()
	a, b := fs[0], fs[1]

	// Transfer leadership, requested on a follower, to the other follower.
	if err := a.TransferLeadership(ctx, b.ID()); err != nil {
		t.Fatal(err)
	}
	testPoll(t, b.IsLeader, 10*time.Second)

	// A non-voter added through a follower receives the data.
	mustApply(t, ctx, a, setCmd("k", "v"))
	nv := mustNewNode(t)
	if err := a.AddNonvoter(ctx, nv.ID(), nv.Addr()); err != nil {
		t.Fatal(err)
	}
	testPoll(t, func() bool { v, _ := nv.fsm.get("k"); return v == "v" }, 10*time.Second)
	m, _ := b.Members()
	if len(m) != 4 {
		t.Fatalf("members %+v", m)
	}
	for _, mm := range m {
		if mm.ID == nv.ID() && mm.IsVoter {
			t.Fatalf("nonvoter listed as voter: %+v", mm)
		}
	}
	// Writes through the non-voter are forwarded as well.
	mustApply(t, ctx, nv, setCmd("from-nonvoter", "1"))
	if v, _ := nv.fsm.get("from-nonvoter"); v != "1" {
		t.Fatal("non-voter does not read its own write")
	}

	// Remove it again, through the other follower.
	if err := a.RemoveServer(ctx, nv.ID()); err != nil {
		t.Fatal(err)
	}
	testPoll(t, func() bool { m, _ := a.Members(); return len(m) == 3 }, 10*time.Second)
}
