package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Three-node clusters of real processes on loopback (conventions §1 and §8).
// The tests that kill or cut nodes under load do not run in parallel with
// the others: their timing must not depend on what else the 2 CPUs do.

func TestClusterJoinReadYourWritesSessionsAndTokens(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{size: 3})

	// A short-lived token, made first so that it has expired when it is tried at the end.
	status, m := do(t, http.MethodPost, c.nodes[0].mgmt("/cluster/join-tokens"), c.token, map[string]any{"ttlSeconds": 1})
	mustStatus(t, "create a 1 s join token", status, m, http.StatusCreated)
	expiring, _ := jget(m, "data", "token").(string)
	expiresAt, err := time.Parse(time.RFC3339Nano, fmt.Sprint(jget(m, "data", "expiresAt")))
	if expiring == "" || err != nil {
		t.Fatalf("join token answer: %v: %s", err, js(m))
	}

	// Read-your-writes on a follower: each create is visible there at once.
	l := c.leader(10 * time.Second)
	f := c.nodes[(l+1)%3]
	var ids []string
	for i := range 5 {
		id := createIdentity(t, f, c.token, map[string]any{"name": fmt.Sprintf("ryw-%d", i), "type": "User", "isAdmin": false})
		getIdentity(t, f, c.token, id) // no polling: must be there on the node that answered 201
		ids = append(ids, id)
	}
	for _, n := range c.nodes {
		for _, id := range ids {
			waitUntil(t, "identity "+id+" on "+n.name, 5*time.Second, func() error {
				if status, m := do(t, http.MethodGet, n.mgmt("/identities/"+id), c.token, nil); status != http.StatusOK {
					return fmt.Errorf("%d %s", status, js(m))
				}
				return nil
			})
		}
	}

	// A session made on one node works on every node; a logout on another ends it everywhere.
	tok := login(t, c.nodes[1], adminUser, c.nodes[0].password)
	status, m = do(t, http.MethodGet, c.nodes[1].client("/current-api-session"), tok, nil)
	mustStatus(t, "the new session on the node that made it", status, m, http.StatusOK)
	for _, n := range []*node{c.nodes[0], c.nodes[2]} {
		waitUntil(t, "the session of node 2 works on "+n.name, 5*time.Second, func() error {
			if status, m := do(t, http.MethodGet, n.client("/current-api-session"), tok, nil); status != http.StatusOK {
				return fmt.Errorf("%d %s", status, js(m))
			}
			return nil
		})
	}
	status, m = do(t, http.MethodDelete, c.nodes[2].client("/current-api-session"), tok, nil)
	mustStatus(t, "logout on node 3", status, m, http.StatusOK)
	status, m = do(t, http.MethodGet, c.nodes[2].mgmt("/identities"), tok, nil)
	wantError(t, "the session on node 3 right after its logout there", status, m, http.StatusUnauthorized, "UNAUTHORIZED", "")
	for _, n := range []*node{c.nodes[0], c.nodes[1]} {
		// The logout is one commit: the other nodes apply it within milliseconds.
		waitUntil(t, "the logged-out session is refused on "+n.name, 2*time.Second, func() error {
			if status, m := do(t, http.MethodGet, n.mgmt("/identities"), tok, nil); status != http.StatusUnauthorized {
				return fmt.Errorf("%d %s", status, js(m))
			}
			return nil
		})
	}
	status, m = do(t, http.MethodGet, c.nodes[0].mgmt("/identities"), c.token, nil)
	mustStatus(t, "another session after the logout", status, m, http.StatusOK)

	// A join token works once: the one node 3 joined with is spent.
	out, err := tryJoin(t, c.nodes[1], c.joinTokens[len(c.joinTokens)-1])
	if err == nil || !strings.Contains(out, "already used") {
		t.Errorf("a second join with a spent token: %v, want a refusal that says the token was already used; output:\n%s", err, out)
	}
	// An expired one does not work either (waiting out its last moments if the test was quick).
	if d := time.Until(expiresAt); d > 0 {
		time.Sleep(d + 50*time.Millisecond)
	}
	out, err = tryJoin(t, c.nodes[0], expiring)
	if err == nil || !strings.Contains(out, "expired") {
		t.Errorf("a join with an expired token: %v, want a refusal that says it expired; output:\n%s", err, out)
	}
	c.waitMembers(c.ids, 10*time.Second) // the refused nodes were never added
}

// tryJoin runs a new node that joins the cluster through via with token and
// returns its output once it exited; a refused join must exit at once.
func tryJoin(t *testing.T, via *node, token string) (string, error) {
	t.Helper()
	return runEdgectl(t, 30*time.Second, "run", "--data-dir", t.TempDir(),
		"--api-addr", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--cluster-addr", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"--join", via.host(), "--join-token", token)
}

func TestClusterMembershipThroughTheAPIOnAFollower(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{size: 3})
	l := c.leader(10 * time.Second)
	f1, f2 := (l+1)%3, (l+2)%3

	// Hand leadership to a named member, asking a follower.
	status, m := do(t, http.MethodPost, c.nodes[f1].mgmt("/cluster/transfer-leadership"), c.token, map[string]any{"id": c.ids[f2]})
	mustStatus(t, "transfer leadership through a follower", status, m, http.StatusOK)
	if got := c.waitMembers(c.ids, 10*time.Second); got != c.ids[f2] {
		t.Fatalf("leader after the transfer to %s: %s", c.ids[f2], got)
	}
	status, m = do(t, http.MethodDelete, c.nodes[f1].mgmt("/cluster/members/no-such-node"), c.token, nil)
	wantError(t, "remove an unknown member", status, m, http.StatusNotFound, "NOT_FOUND", "")

	// Remove the leader (now f2), asking a follower: leadership moves first.
	removed := f2
	status, m = do(t, http.MethodDelete, c.nodes[f1].mgmt("/cluster/members/"+c.ids[removed]), c.token, nil)
	mustStatus(t, "remove the leader through a follower", status, m, http.StatusOK)
	rest := &testCluster{t: t, nodes: []*node{c.nodes[l], c.nodes[f1]}, ids: []string{c.ids[l], c.ids[f1]}, token: c.token}
	if got := rest.waitMembers(rest.ids, 10*time.Second); got == c.ids[removed] {
		t.Fatalf("the removed node %s still leads", got)
	}
	c.nodes[removed].stop()
	while := createIdentity(t, c.nodes[f1], c.token, map[string]any{"name": "while-removed", "type": "User", "isAdmin": false})

	// Add it back as a voter, asking the other follower of the two, then start it again: it catches up.
	nl := rest.leader(10 * time.Second)
	asker := rest.nodes[1-nl]
	addr := fmt.Sprintf("127.0.0.1:%d", c.nodes[removed].clusterPort)
	status, m = do(t, http.MethodPost, asker.mgmt("/cluster/members"), c.token, map[string]any{"id": c.ids[removed], "address": addr, "isVoter": true})
	mustStatus(t, "add a voter through a follower", status, m, http.StatusCreated)
	c.restart(removed)
	c.waitMembers(c.ids, 20*time.Second)
	getIdentity(t, c.nodes[removed], c.token, while) // a restart serves only once caught up

	// The local admin socket lists the same members.
	out, err := runEdgectl(t, 30*time.Second, "cluster", "list", "--data-dir", c.nodes[removed].dataDir)
	if err != nil {
		t.Fatalf("edgectl cluster list: %v\n%s", err, out)
	}
	leaders := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 3 && f[2] == "true" {
			leaders++
		}
	}
	for _, id := range c.ids {
		if !strings.Contains(out, id) {
			t.Errorf("edgectl cluster list does not show %s:\n%s", id, out)
		}
	}
	if leaders != 1 {
		t.Errorf("edgectl cluster list shows %d leaders, want 1:\n%s", leaders, out)
	}
}

// The partition is made with a TCP proxy in front of each node's cluster
// port (the nodes advertise the proxies with --cluster-advertise): cutting a
// node's proxy stops all traffic to it, which is portable and needs no root.
// Its own requests to the others still go out, so the test cuts a follower:
// the others reject its pre-votes (they have a leader) and it cannot learn of
// a leader, which is what a real minority sees. (A cut leader could go on
// leading over its outgoing connections.)
func TestClusterPartitionedNodeRefusesWritesServesReadsThenConverges(t *testing.T) {
	c := startCluster(t, clusterOpts{size: 3, proxies: true})
	l := c.leader(10 * time.Second)
	fi, other := (l+1)%3, (l+2)%3
	f := c.nodes[fi]
	before := createIdentity(t, c.nodes[l], c.token, map[string]any{"name": "part-before", "type": "User", "isAdmin": false})
	waitUntil(t, "part-before on the follower", 5*time.Second, func() error {
		if status, _ := do(t, http.MethodGet, f.mgmt("/identities/"+before), c.token, nil); status != http.StatusOK {
			return fmt.Errorf("status %d", status)
		}
		return nil
	})

	c.proxies[fi].Cut()
	cutAt := time.Now()
	waitUntil(t, f.name+" notices it lost the leader", 10*time.Second, func() error {
		ms, err := c.members(f)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.IsLeader {
				return fmt.Errorf("still names %s", m.ID)
			}
		}
		return nil
	})
	t.Logf("%s lost the leader %s after the cut", f.name, time.Since(cutAt).Round(time.Millisecond))

	t0 := time.Now()
	status, m := do(t, http.MethodPost, f.mgmt("/identities"), c.token, map[string]any{"name": "part-minority", "type": "User", "isAdmin": false})
	waited := time.Since(t0)
	wantError(t, "a write on the cut-off node", status, m, http.StatusServiceUnavailable, "CLUSTER_UNAVAILABLE", "")
	if waited < 4*time.Second || waited > 15*time.Second {
		t.Errorf("the cut-off node answered the write after %s, want after its 5 s wait for a leader", waited)
	}
	// Reads keep working there, from its own state.
	getIdentity(t, f, c.token, before)
	if _, total := listNames(t, f, c.token, url.Values{"filter": {`name = "part-before"`}}); total != 1 {
		t.Errorf("list on the cut-off node: totalCount %d, want 1", total)
	}
	// The majority goes on.
	majority := createIdentity(t, c.nodes[other], c.token, map[string]any{"name": "part-majority", "type": "User", "isAdmin": false})
	status, m = do(t, http.MethodGet, f.mgmt("/identities/"+majority), c.token, nil)
	wantError(t, "the majority's write on the cut-off node", status, m, http.StatusNotFound, "NOT_FOUND", "")
	// A linearizable read there never answers from its stale state.
	t0 = time.Now()
	status, m = do(t, http.MethodGet, f.mgmt("/identities/"+majority+"?consistency=linearizable"), c.token, nil)
	waited = time.Since(t0)
	wantError(t, "a linearizable read on the cut-off node", status, m, http.StatusServiceUnavailable, "CLUSTER_UNAVAILABLE", "")
	if waited > 8*time.Second {
		t.Errorf("the linearizable read on the cut-off node answered after %s, want within its 5 s wait", waited)
	}

	c.proxies[fi].Heal()
	healed := time.Now()
	waitUntil(t, f.name+" catches up after the heal", 20*time.Second, func() error {
		if status, _ := do(t, http.MethodGet, f.mgmt("/identities/"+majority), c.token, nil); status != http.StatusOK {
			return fmt.Errorf("status %d", status)
		}
		return nil
	})
	t.Logf("%s caught up %s after the heal", f.name, time.Since(healed).Round(time.Millisecond))
	after := createIdentity(t, f, c.token, map[string]any{"name": "part-after", "type": "User", "isAdmin": false})
	getIdentity(t, f, c.token, after)
	lists := c.convergedIdentities(10 * time.Second)
	for _, name := range names(lists[0]) {
		if name == "part-minority" {
			t.Errorf("the write refused by the cut-off node was applied")
		}
	}
}

// Right after a write acknowledged by one node, a linearizable read and a
// login through any other node see it (section 1 of docs/operations.md).
func TestClusterReadsAndLoginsAfterAWriteOnAnotherNode(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{size: 3})
	for i := range 12 {
		w, r := c.nodes[i%3], c.nodes[(i+1)%3]
		name := fmt.Sprintf("raw-%d", i)
		id := createIdentity(t, w, c.token, map[string]any{"name": name, "type": "User", "isAdmin": false})
		status, m := do(t, http.MethodGet, r.mgmt("/identities/"+id+"?consistency=linearizable"), c.token, nil)
		mustStatus(t, "a linearizable read on another node right after the create", status, m, http.StatusOK)
		status, m = do(t, http.MethodPost, w.mgmt("/authenticators"), c.token,
			map[string]any{"identityId": id, "method": "updb", "username": name + "-user", "password": "Pass-word-1"})
		mustStatus(t, "create a password authenticator", status, m, http.StatusCreated)
		login(t, r, name+"-user", "Pass-word-1")
	}
	// Every node derived the same events from the log.
	var first string
	for i, n := range c.nodes {
		status, m := do(t, http.MethodGet, n.mgmt("/events?limit=500&consistency=linearizable"), c.token, nil)
		mustStatus(t, "events", status, m, http.StatusOK)
		if len(m["data"].([]any)) < 24 {
			t.Fatalf("%s has %d events", n.name, len(m["data"].([]any)))
		}
		if i == 0 {
			first = js(m["data"])
		} else if got := js(m["data"]); got != first {
			t.Fatalf("the events of %s differ from %s's", n.name, c.nodes[0].name)
		}
	}
}
