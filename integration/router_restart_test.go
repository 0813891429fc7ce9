package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// TestRouter_ANodeCatchingUpHoldsTheRoutersDial: OpenZiti's router dials a
// node again at once when its control channel breaks, then every 5 s. A
// restarted node opens its API port before it has caught up with the
// cluster and holds a router's dial there until it has: the router's
// second dial, made while the node cannot catch up yet (the other two
// nodes are down), is not refused but served once the node is ready, so the
// router is back without a third dial 5 s later.
func TestRouter_ANodeCatchingUpHoldsTheRoutersDial(t *testing.T) {
	t.Parallel()
	c := startRouterCluster(t)
	r := newZitiRouter(t, c.nodes[0], c.token, "er-held")
	r.start()
	for _, n := range c.nodes {
		waitOnline(t, n, c.token, r.id, true, 10*time.Second)
	}
	x, y := c.nodes[0], c.nodes[1]
	for _, n := range c.nodes {
		n.kill()
	}
	// The router's first dial to each node fails now; its second comes 5 s
	// later. Node 1 starts at once (it cannot be ready before the others).
	restarts := c.restartAsync(0)
	waitUntil(t, "node 1's API port open, or the router's second dials due", 20*time.Second, func() error {
		if conn, err := net.DialTimeout("tcp", x.host(), time.Second); err == nil {
			_ = conn.Close()
			return nil
		}
		return r.dialFailed(y.host(), 2)
	})
	waitUntil(t, "the router's second dial to node 2 to fail", 20*time.Second, func() error { return r.dialFailed(y.host(), 2) })
	restarts = append(restarts, c.restartAsync(1, 2)...)
	var readyAt time.Time
	waitUntil(t, "node 1 ready", readyTimeout, func() error {
		hc := clientFor(x.host())
		if hc == nil {
			return errors.New("no client yet")
		}
		st, _, err := benchkit.Send(context.Background(), hc, http.MethodGet, "https://"+x.host()+"/readyz", "", nil)
		if err == nil && st != 200 {
			err = fmt.Errorf("/readyz %d", st)
		}
		if err == nil {
			readyAt = time.Now()
		}
		return err
	})
	waitOnline(t, x, c.token, r.id, true, 10*time.Second)
	t.Logf("the router was back on node 1 %s after it was ready", time.Since(readyAt).Round(10*time.Millisecond))
	for _, wait := range restarts {
		wait()
	}
	if err := r.dialFailed(x.host(), 2); err == nil {
		t.Fatalf("the router's second dial to node 1, while it caught up, failed:\n%s", grepLines(r.out.String(), x.host()))
	}
}

// dialFailed is nil once the router logged that its dial number attempt to
// the node at host failed after its control channel broke.
func (r *zitiRouter) dialFailed(host string, attempt int) error {
	if grepLines(grepLines(r.out.String(), host), fmt.Sprintf("attempt [#%d] failed", attempt)) == "" {
		return errors.New("the router has not logged it")
	}
	return nil
}

// restartAsync starts nodes is again without waiting for them: the
// returned functions wait for each to be ready.
func (c *testCluster) restartAsync(is ...int) []func() {
	c.t.Helper()
	var waits []func()
	for _, i := range is {
		n := c.nodes[i]
		var wg sync.WaitGroup
		var nn *node
		var err error
		wg.Go(func() {
			nn, err = tryStart(c.t, nodeOpts{dataDir: n.dataDir, apiPort: n.apiPort, clusterPort: n.clusterPort,
				adminPassword: n.password, args: n.restartArgs(), apiSocket: n.apiSocket})
		})
		waits = append(waits, func() {
			c.t.Helper()
			wg.Wait()
			if err != nil {
				c.t.Fatalf("restarting %s: %v", n.name, err)
			}
			nn.name = n.name
			c.nodes[i] = nn
		})
	}
	return waits
}

// TestRouter_BackAtOnceAfterARestartOnAHeldSocket: with the API port held
// across restarts by a service manager (socket activation, here the test),
// a router whose channel to a node closes as the node stops dials again at
// once and that dial waits in the socket's backlog for the restarted node,
// which serves it: the router is back without a failed dial, so without
// OpenZiti's 5 s pause. (The stopping node closes its listener before the
// routers' channels: it would otherwise take that dial and refuse it.)
func TestRouter_BackAtOnceAfterARestartOnAHeldSocket(t *testing.T) {
	t.Parallel()
	zitiBinary(t)
	c := startCluster(t, clusterOpts{size: 3, activation: true})
	waitControllerRecords(t, c)
	r := newZitiRouter(t, c.nodes[0], c.token, "er-socket")
	r.start()
	for _, n := range c.nodes {
		waitOnline(t, n, c.token, r.id, true, 10*time.Second)
	}
	x := c.nodes[0]
	began := time.Now()
	x.stop()
	c.restart(0)
	restarted := time.Since(began)
	waitOnline(t, c.nodes[0], c.token, r.id, true, 10*time.Second)
	t.Logf("node 1 stopped and ready again in %s; the router back on it %s after the stop",
		restarted.Round(10*time.Millisecond), time.Since(began).Round(10*time.Millisecond))
	if err := r.dialFailed(x.host(), 1); err == nil {
		t.Fatalf("the router's dial to node 1 after its stop failed:\n%s", grepLines(r.out.String(), x.host()))
	}
}
