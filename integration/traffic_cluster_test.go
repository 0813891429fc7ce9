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
// (SIGSTOP), while the leader is SIGKILLed and, once it is back, while
// another node is SIGKILLed; after each kill the client that was connected
// before it dials through the survivors within 5 s (its API session is a JWT
// the router verifies itself, so it is bound to no node), and so does a
// client that connects after it.
func TestTraffic_AClusterKeepsTrafficUp(t *testing.T) {
	t.Parallel()
	c := startRouterCluster(t)
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
	defer func() { stream.Close() }()
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
	dials := func(what string) {
		t.Helper()
		start := time.Now()
		waitUntil(t, what+": the client connected before dials through the survivors", 5*time.Second, func() error {
			return echoOnce(tn.proxyAddr, []byte("a dial after: "+what))
		})
		t.Logf("%s: the client connected before dialed through the survivors %s after", what, time.Since(start).Round(time.Millisecond))
		// A client that connects to the router now.
		tn.proxy.stop()
		start = time.Now()
		tn.startProxy(t)
		waitUntil(t, what+": a new client dials through the survivors", 5*time.Second, func() error {
			return echoOnce(tn.proxyAddr, []byte("new dial"))
		})
		t.Logf("%s: a new client dialed through the survivors %s after it started", what, time.Since(start).Round(time.Millisecond))
		stream.Close() // it went through the client stopped: a new one through the new client
		stream = tn.openStream(t)
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

	// The leader killed, brought back, then the other node but node 1
	// killed: whichever node a client's connection would have been bound
	// to, one of them is gone.
	leader = c.leader(10 * time.Second)
	if leader == 0 {
		t.Fatal("node 1 is the leader")
	}
	other := 3 - leader // nodes 2 and 3 are indexes 1 and 2
	c.nodes[leader].kill()
	echoes("the leader killed")
	dials("the leader killed")
	c.restart(leader)
	waitOnline(t, c.nodes[leader], c.token, tn.router.id, true, 15*time.Second)
	c.nodes[other].kill()
	echoes("another node killed")
	dials("another node killed")
	t.Logf("paused node %d, killed the leader, node %d, then node %d", paused+1, leader+1, other+1)
}

// startRouterCluster starts a three-node cluster routers can use (ziti
// must be there): it returns once every member's controller record is
// listed.
func startRouterCluster(t *testing.T) *testCluster {
	t.Helper()
	zitiBinary(t)
	c := startCluster(t, clusterOpts{size: 3})
	waitControllerRecords(t, c)
	return c
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
