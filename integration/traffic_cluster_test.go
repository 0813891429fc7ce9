package integration

import (
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"
)

// TestTraffic_AClusterKeepsTrafficUp: three nodes, a router connected to
// all of them, the tunnelers' identities enrolled through node 1. An open
// TCP stream through the router keeps echoing while a follower is paused
// (SIGSTOP) and, once it is back, while the leader is SIGKILLed; a client
// that connects after the kill dials through the survivors within 5 s.
// (A client connected before a fault keeps its dials with the node that
// last sent the router its API session, OpenZiti's affinity for API
// sessions that are not JWTs: docs/openziti.md.)
func TestTraffic_AClusterKeepsTrafficUp(t *testing.T) {
	t.Parallel()
	zitiBinary(t)
	c := startCluster(t, clusterOpts{size: 3})
	waitControllerRecords(t, c)
	// Node 1 serves the tunnelers' Client API calls: the leader killed is another.
	if c.leader(10*time.Second) == 0 {
		st, m := do(t, "POST", c.nodes[0].mgmt("/cluster/transfer-leadership"), c.token, map[string]any{"id": c.ids[1]})
		mustStatus(t, "transfer leadership", st, m, 200)
	}
	tn := newTrafficNetOn(t, c.nodes[0], c.token)
	for _, n := range c.nodes {
		waitOnline(t, n, c.token, tn.router.id, true, 10*time.Second)
	}
	stream := tn.openStream(t)
	defer stream.Close()
	echoes := func(what string) {
		t.Helper()
		msg := []byte("still here: " + what)
		_ = stream.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := stream.Write(msg); err != nil {
			t.Fatalf("%s: the open stream broke: %v", what, err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(stream, got); err != nil {
			t.Fatalf("%s: the open stream broke: %v", what, err)
		}
		_ = stream.SetDeadline(time.Time{})
	}
	newDials := func(what string) {
		t.Helper()
		// A client that connects to the router now: its API session's
		// node (the routers' affinity) is one that is up.
		tn.proxy.stop()
		start := time.Now()
		tn.startProxy(t)
		waitUntil(t, what+": a new dial through the survivors", 5*time.Second, func() error {
			return echoOnce(tn.proxyAddr, []byte("new dial"))
		})
		t.Logf("%s: a new client dialed through the survivors %s after it started", what, time.Since(start).Round(time.Millisecond))
	}

	// A follower paused (not node 1, whose API the tunnelers use), then let go.
	leader := c.leader(10 * time.Second)
	paused := 1
	if leader == 1 {
		paused = 2
	}
	pid := c.nodes[paused].cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	echoes("a follower paused")
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	// The leader killed.
	leader = c.leader(10 * time.Second)
	if leader == 0 {
		t.Fatal("node 1 is the leader")
	}
	c.nodes[leader].kill()
	echoes("the leader killed")
	newDials("the leader killed")
	t.Logf("paused node %d, then killed the leader, node %d", paused+1, leader+1)
}

// waitControllerRecords waits until every member has its controller record
// (the API URL routers' JWTs list).
func waitControllerRecords(t *testing.T, c *testCluster) {
	t.Helper()
	waitUntil(t, "every node's controller record", 10*time.Second, func() error {
		items, err := listAll(t, c.nodes[0], c.token, "/controllers")
		if err != nil {
			return err
		}
		for _, it := range items {
			if a, _ := jget(it, "apiAddresses").(map[string]any); len(a) == 0 {
				return fmt.Errorf("member %v has no controller record yet", jget(it, "id"))
			}
		}
		if len(items) != len(c.nodes) {
			return fmt.Errorf("%d members", len(items))
		}
		return nil
	})
}
