package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Test helpers: nodes, clusters and polling (the test PKI and FSM live in
// testfsm_test.go).

// testLogWriter sends raft's logs to t.Log until the test is over (raft
// goroutines may log after cleanup, which t.Log would turn into a panic).
type testLogWriter struct {
	mu   sync.Mutex
	tb   testing.TB
	done bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.tb.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func testLogger(tb testing.TB) hclog.Logger {
	w := &testLogWriter{tb: tb}
	tb.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	level := hclog.Warn
	if l := os.Getenv("CLUSTER_TEST_LOG"); l != "" {
		level = hclog.LevelFromString(l)
	}
	return hclog.New(&hclog.LoggerOptions{Name: tb.Name(), Output: w, Level: level})
}

type testNode struct {
	*Node
	fsm     *kvFSM
	cfg     Config
	stopped bool
}

// testConfig returns a config for a node of the shared test PKI. The raft
// timeouts are the package defaults: short enough for fast tests, generous
// enough for a loaded 2-core CI machine.
func testConfig(tb testing.TB, id string) Config {
	return Config{
		NodeID:   id,
		DataDir:  tb.TempDir(),
		BindAddr: "127.0.0.1:0",
		TLS:      clusterPKI(tb).tlsConfig(tb, id),
		FSM:      newKVFSM(),
		Logger:   testLogger(tb),
	}
}

// mustNewNode starts a node (not bootstrapped) and shuts it down at cleanup.
func mustNewNode(tb testing.TB, opts ...func(*Config)) *testNode {
	tb.Helper()
	cfg := testConfig(tb, fmt.Sprintf("node-%d", serial.Add(1)))
	for _, o := range opts {
		o(&cfg)
	}
	return mustStartNode(tb, cfg)
}

func mustStartNode(tb testing.TB, cfg Config) *testNode {
	tb.Helper()
	n, err := New(cfg)
	if err != nil {
		tb.Fatalf("New(%s): %v", cfg.NodeID, err)
	}
	tn := &testNode{Node: n, fsm: cfg.FSM.(*kvFSM), cfg: cfg}
	tb.Cleanup(func() { tn.stop(tb) })
	return tn
}

func (tn *testNode) stop(tb testing.TB) {
	if tn.stopped {
		return
	}
	tn.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tn.Shutdown(ctx); err != nil {
		tb.Errorf("shutdown %s: %v", tn.ID(), err)
	}
}

// kill stops a node abruptly, like a crash: no leadership transfer, the
// listener and every connection just disappear.
func (tn *testNode) kill() {
	tn.stopped = true
	tn.closed.Store(true)
	tn.mux.close()
	tn.raft.Shutdown().Error()
	tn.trans.stopHeartbeats()
	tn.cancel()
	tn.pool.close()
	tn.trans.Close()
	tn.store.Close()
}

func mustBootstrapped(tb testing.TB, opts ...func(*Config)) *testNode {
	tb.Helper()
	n := mustNewNode(tb, opts...)
	if err := n.BootstrapSelf(); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.WaitForLeader(ctx); err != nil {
		tb.Fatal(err)
	}
	testPoll(tb, n.IsLeader, 10*time.Second)
	return n
}

type testCluster struct {
	tb    testing.TB
	nodes []*testNode
}

// mustNewCluster bootstraps the first node and has it add the others, which
// start empty, as voters.
func mustNewCluster(tb testing.TB, size int, opts ...func(*Config)) *testCluster {
	tb.Helper()
	c := &testCluster{tb: tb, nodes: []*testNode{mustBootstrapped(tb, opts...)}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 1; i < size; i++ {
		n := mustNewNode(tb, opts...)
		if n.HasState() {
			tb.Fatal("fresh node reports existing state")
		}
		if err := c.nodes[0].AddVoter(ctx, n.ID(), n.Addr()); err != nil {
			tb.Fatalf("AddVoter(%s): %v", n.ID(), err)
		}
		c.nodes = append(c.nodes, n)
	}
	// Every node must know the full membership and the leader.
	testPoll(tb, func() bool {
		for _, n := range c.nodes {
			m, err := n.Members()
			if id, _ := n.Leader(); err != nil || len(m) != size || id == "" {
				return false
			}
		}
		return true
	}, 20*time.Second)
	return c
}

func (c *testCluster) running() []*testNode {
	var out []*testNode
	for _, n := range c.nodes {
		if !n.stopped {
			out = append(out, n)
		}
	}
	return out
}

// Leader waits until one running node leads and returns it.
func (c *testCluster) Leader() *testNode {
	c.tb.Helper()
	var l *testNode
	testPoll(c.tb, func() bool {
		l = nil
		for _, n := range c.running() {
			if n.IsLeader() {
				l = n
			}
		}
		return l != nil
	}, 15*time.Second)
	return l
}

// Followers returns the running nodes other than the current leader.
func (c *testCluster) Followers() []*testNode {
	l := c.Leader()
	var out []*testNode
	for _, n := range c.running() {
		if n != l {
			out = append(out, n)
		}
	}
	return out
}

// WaitForNewLeader waits until a running node other than old leads.
func (c *testCluster) WaitForNewLeader(old *testNode) *testNode {
	c.tb.Helper()
	var l *testNode
	testPoll(c.tb, func() bool {
		for _, n := range c.running() {
			if n != old && n.IsLeader() {
				l = n
				return true
			}
		}
		return false
	}, 15*time.Second)
	return l
}

// testPoll polls cond every few milliseconds until it holds or timeout.
func testPoll(tb testing.TB, cond func() bool, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("condition not met within %s", timeout)
		}
		<-tick.C
	}
}

func ctxTimeout(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// mustApply applies an idempotent command, retrying if a leader change made
// the outcome of an attempt unknown (a stalled CI machine can cause that).
func mustApply(tb testing.TB, ctx context.Context, n *testNode, cmd []byte) uint64 {
	tb.Helper()
	for {
		_, idx, err := n.Apply(ctx, cmd)
		if err == nil {
			return idx
		}
		if !errors.Is(err, ErrOutcomeUnknown) || ctx.Err() != nil {
			tb.Fatalf("apply on %s: %v", n.ID(), err)
		}
		tb.Logf("retrying apply on %s: %v", n.ID(), err)
	}
}
