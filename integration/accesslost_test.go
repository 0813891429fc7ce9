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
	identities := func(roles ...string) {
		t.Helper()
		st, m := do(t, "PATCH", tn.n.mgmt("/edge-router-policies/"+erp), tn.token, map[string]any{"identityRoles": roles})
		mustStatus(t, "change the edge router policy", st, m, 200)
	}
	lose := func(what string, roles ...string) {
		t.Helper()
		stream := tn.openStream(t)
		start := time.Now()
		identities(roles...)
		waitClosed(t, what, stream, 5*time.Second)
		took := time.Since(start)
		t.Logf("%s: the open stream closed %s after the change was answered", what, took.Round(time.Millisecond))
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

	lose("the client lost its edge router", "#hosts")
	identities("#all")
	tn.proxy.stop()
	tn.startProxy(t)
	lose("the host lost its edge router", "#clients")
}
