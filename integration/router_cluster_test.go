package integration

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	c := startRouterCluster(t)
	n0 := c.nodes[0]
	token := c.token
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

// TestRouter_AJoiningNodeIsInTheJWTOfARouterMadeAsItIsListed: the moment
// /controllers lists a node that just joined (with a leader), it shows the
// node's API address, and an edge router created right then through the
// node asked gets an enrollment JWT whose ctrls names every member, the new
// one too. Two joins: the second node, asked on node 1 (the leader), and
// the third, asked on node 2 (a follower).
func TestRouter_AJoiningNodeIsInTheJWTOfARouterMadeAsItIsListed(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{size: 1})
	for round := 1; round <= 2; round++ {
		c.startMember(clusterOpts{})
		id, asked := c.ids[round], c.nodes[round-1]
		var listed any
		waitUntil(t, asked.name+" to list "+id+" with a leader", 30*time.Second, func() error {
			st, m, err := doErr("GET", asked.mgmt("/controllers"), c.token, nil)
			if err != nil || st != 200 {
				return fmt.Errorf("GET /controllers: %d %v %s", st, err, js(m))
			}
			leader := false
			listed = nil
			for _, it := range m["data"].([]any) {
				leader = leader || jget(it, "isLeader") == true
				if jget(it, "id") == id {
					listed = it
				}
			}
			if listed == nil || !leader {
				return fmt.Errorf("listed: %s", js(m["data"]))
			}
			return nil
		})
		listedAt := time.Now()
		st, m := do(t, "POST", asked.mgmt("/edge-routers"), c.token, map[string]any{"name": fmt.Sprintf("er-join-%d", round)})
		mustStatus(t, "create an edge router", st, m, 201)
		after := time.Since(listedAt)
		if jget(listed, "apiAddresses", "edge-management") == nil {
			t.Errorf("round %d: %s listed %s without its address: %s", round, asked.name, id, js(listed))
		}
		st, m = do(t, "GET", asked.mgmt("/edge-routers/"+jget(m, "data", "id").(string)), c.token, nil)
		mustStatus(t, "read the edge router", st, m, 200)
		ctrls := jwtCtrls(t, fmt.Sprint(jget(m, "data", "enrollmentJwt")))
		for _, n := range c.nodes {
			if !slices.Contains(ctrls, "tls:"+n.host()) {
				t.Errorf("round %d: the JWT of a router created %s after %s listed %s: ctrls %v lacks %s", round, after, asked.name, id, ctrls, n.name)
			}
		}
		t.Logf("round %d: the router was created %s after the listing", round, after)
	}
}

// jwtCtrls is the ctrls claim of an enrollment JWT (read, not verified).
func jwtCtrls(t *testing.T, jwt string) []string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Ctrls []string `json:"ctrls"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &claims)
	}
	if err != nil {
		t.Fatalf("the JWT's claims: %v: %q", err, jwt)
	}
	return claims.Ctrls
}

// TestRouter_LearnsAJoiningNode: a router connected to node 1 of two (its
// endpoints name node 1 only) is sent the new list when a third node joins:
// its endpoints file names node 3 within 2 s of node 1 listing node 3, and
// it connects to node 3.
func TestRouter_LearnsAJoiningNode(t *testing.T) {
	t.Parallel()
	zitiBinary(t)
	c := startCluster(t, clusterOpts{size: 2})
	n0 := c.nodes[0]
	r := newZitiRouter(t, n0, c.token, "er-learns")
	endpoints := filepath.Join(r.dir, "endpoints.yml")
	if err := os.WriteFile(endpoints, []byte("endpoints:\n- tls:"+n0.host()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.start()
	waitOnline(t, n0, c.token, r.id, true, 10*time.Second)

	n2 := c.startMember(clusterOpts{})
	waitUntil(t, "node 1 to list node 3", 30*time.Second, func() error {
		items, err := listAll(t, n0, c.token, "/controllers")
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(items, func(it any) bool { return jget(it, "id") == c.ids[2] }) {
			return fmt.Errorf("listed: %s", js(items))
		}
		return nil
	})
	// At once: before the fix the address came up to 5 s after the membership.
	waitUntil(t, "the router's endpoints to name node 3", 2*time.Second, func() error {
		raw, err := os.ReadFile(endpoints)
		if err != nil {
			return err
		}
		if !strings.Contains(string(raw), "tls:"+n2.host()) {
			return fmt.Errorf("endpoints.yml:\n%s", raw)
		}
		return nil
	})
	waitOnline(t, n2, c.token, r.id, true, 15*time.Second)
}
