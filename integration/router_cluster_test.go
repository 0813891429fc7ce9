package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRouter_ThreeNodes: a router enrolled through one node of three holds
// a control channel to every node (its JWT lists them all) and is online
// on each within 10 s; a second router that knows only node 1 gets a
// service made on node 3 in its data model (node 1 learns it from the
// cluster's log); killing the node the first router's data model
// subscription is on leaves it in sync through the others.
func TestRouter_ThreeNodes(t *testing.T) {
	t.Parallel()
	zitiBinary(t)
	c := startCluster(t, clusterOpts{size: 3})
	n0 := c.nodes[0]
	token := c.token
	waitUntil(t, "every node's controller record", 10*time.Second, func() error {
		items, err := listAll(t, n0, token, "/controllers")
		if err != nil {
			return err
		}
		if len(items) != 3 {
			return fmt.Errorf("%d members", len(items))
		}
		for _, it := range items {
			if a, _ := jget(it, "apiAddresses").(map[string]any); len(a) == 0 {
				return fmt.Errorf("member %v has no controller record yet", jget(it, "id"))
			}
		}
		return nil
	})
	r := newZitiRouter(t, n0, token, "er-ha")
	endpoints, err := os.ReadFile(filepath.Join(r.dir, "endpoints.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		if !strings.Contains(string(endpoints), "tls:"+n.host()) {
			t.Fatalf("the router's endpoints lack %s:\n%s", n.host(), endpoints)
		}
	}
	r.start()
	for _, n := range c.nodes {
		waitOnline(t, n, token, r.id, true, 10*time.Second)
	}

	lone := newZitiRouter(t, n0, token, "er-one-node")
	if err := os.WriteFile(filepath.Join(lone.dir, "endpoints.yml"), []byte("endpoints:\n- tls:"+n0.host()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lone.start()
	waitOnline(t, n0, token, lone.id, true, 10*time.Second)
	for _, n := range c.nodes[1:] {
		if online, _, err := edgeRouterState(n, token, lone.id); err != nil || online {
			t.Fatalf("%s reports the one-node router online (%v, %v)", n.name, online, err)
		}
	}
	// A change made through node 3 reaches the router that knows only node 1.
	st, m := do(t, "POST", c.nodes[2].mgmt("/services"), token, map[string]any{"name": "made-on-node-3"})
	mustStatus(t, "create a service on node 3", st, m, 201)
	waitInSync(t, n0, token, lone.id, map[string]uint32{"services": 1})

	// The node that answered r's subscription logged the full state it sent.
	sub := -1
	waitUntil(t, "a node to serve the router's data model subscription", 10*time.Second, func() error {
		for i, n := range c.nodes {
			if strings.Contains(n.stderr.String()+n.stdout.String(), "full state sent: router="+r.id) {
				sub = i
				return nil
			}
		}
		return errString("no node logged it")
	})
	c.nodes[sub].kill()
	other := c.nodes[(sub+1)%3]
	waitOnline(t, other, token, r.id, true, 5*time.Second)
	svc := func(name string) {
		st, m := do(t, "POST", other.mgmt("/services"), token, map[string]any{"name": name})
		mustStatus(t, "create service "+name, st, m, 201)
	}
	svc("made-after-the-kill")
	waitInSync(t, other, token, r.id, map[string]uint32{"services": 2})

	// The dead node leaves the cluster: the routers are sent the new list
	// and drop it from their endpoints.
	gone := c.nodes[sub].host()
	st, m = do(t, "DELETE", other.mgmt("/cluster/members/"+c.ids[sub]), token, nil)
	mustStatus(t, "remove the dead member", st, m, 200)
	waitUntil(t, "the router's endpoints without the removed node", 10*time.Second, func() error {
		raw, err := os.ReadFile(filepath.Join(r.dir, "endpoints.yml"))
		if err != nil {
			return err
		}
		if strings.Contains(string(raw), gone) || strings.Count(string(raw), "tls:") != 2 {
			return fmt.Errorf("endpoints.yml:\n%s", raw)
		}
		return nil
	})
	t.Logf("the subscription moved off node %d", sub+1)
}
