package integration

import (
	"testing"
	"time"
)

// TestTraffic_EdgeRouterPolicyLostEndsAccess: an edge router policy change
// that takes from the dialing client the router its circuit enters at
// closes the open stream within 5 s and refuses new dials; so does one that
// takes the router from the hosting identity (OpenZiti checks both at a
// circuit's and a terminator's creation). Each time to close is logged.
func TestTraffic_EdgeRouterPolicyLostEndsAccess(t *testing.T) {
	t.Parallel()
	tn := newTrafficNet(t)
	edgeRouterAccessLost(t, tn, tn.n, tn.n)
}

// TestTraffic_EdgeRouterPolicyLostEndsAccessOnEveryNode: the same on a
// three-node cluster, each change made through another node than the one
// the tunnelers use: whichever node routed the circuit ends it.
func TestTraffic_EdgeRouterPolicyLostEndsAccessOnEveryNode(t *testing.T) {
	t.Parallel()
	c := startRouterCluster(t)
	tn := newTrafficNetOn(t, c.nodes[0], c.token)
	for _, n := range c.nodes {
		waitOnline(t, n, c.token, tn.router.id, true, 10*time.Second)
	}
	edgeRouterAccessLost(t, tn, c.nodes[1], c.nodes[2])
}

// edgeRouterAccessLost changes the edge router policy "all" of tn through
// node first to leave the client without the router, then (restored)
// through node second to leave the host without it; each time the open
// stream must close within 5 s and a new dial be refused.
func edgeRouterAccessLost(t *testing.T, tn *trafficNet, first, second *node) {
	t.Helper()
	items, err := listAll(t, tn.n, tn.token, "/edge-router-policies")
	if err != nil {
		t.Fatal(err)
	}
	erp := ""
	for _, it := range items {
		if jget(it, "name") == "all" {
			erp = jget(it, "id").(string)
		}
	}
	if erp == "" {
		t.Fatal("no edge router policy named all")
	}
	identities := func(through *node, roles ...string) {
		t.Helper()
		st, m := do(t, "PATCH", through.mgmt("/edge-router-policies/"+erp), tn.token, map[string]any{"identityRoles": roles})
		mustStatus(t, "change the edge router policy", st, m, 200)
	}
	lose := func(what string, through *node, roles ...string) {
		t.Helper()
		stream := tn.openStream(t)
		start := time.Now()
		identities(through, roles...)
		waitClosed(t, what, stream, 5*time.Second)
		took := time.Since(start)
		t.Logf("%s (changed through %s): the open stream closed %s after the change was answered", what, through.name, took.Round(time.Millisecond))
		if took > 5*time.Second {
			t.Fatalf("%s: the stream took %s to close", what, took)
		}
		waitUntil(t, what+": a new dial refused", 5*time.Second, func() error {
			if err := echoOnce(tn.proxyAddr, []byte("still?")); err == nil {
				return errString("a new dial still echoes")
			}
			return nil
		})
	}

	lose("the client lost its edge router", first, "#hosts")
	identities(first, "#all")
	tn.proxy.stop()
	tn.startProxy(t)
	lose("the host lost its edge router", second, "#clients")
}
