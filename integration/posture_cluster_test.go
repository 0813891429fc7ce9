package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestPostureAcrossTheCluster: a posture response sent to node A lets a
// session be created on node C; a failing response makes node B refuse it
// and record the failure, which the Management API shows on any node.
func TestPostureAcrossTheCluster(t *testing.T) {
	c := startCluster(t, clusterOpts{size: 3})
	a, b, cn := c.nodes[0], c.nodes[1], c.nodes[2]
	admin := c.token
	create := func(n *node, path string, body any) string {
		t.Helper()
		st, m := do(t, http.MethodPost, n.mgmt(path), admin, body)
		if st != http.StatusCreated {
			t.Fatalf("create %s: %d %s", path, st, js(m))
		}
		return jget(m, "data", "id").(string)
	}
	alice := create(a, "/identities", map[string]any{"name": "alice", "type": "User", "isAdmin": false, "roleAttributes": []string{"eng"}})
	create(a, "/authenticators", map[string]any{"identityId": alice, "method": "updb", "username": "alice", "password": "Alice-pass-1"})
	svc := create(a, "/services", map[string]any{"name": "web", "roleAttributes": []string{"web"}})
	check := create(a, "/posture-checks", map[string]any{"name": "domain", "typeId": "DOMAIN", "roleAttributes": []string{"dom"}, "domains": []string{"corp.example"}})
	create(a, "/service-policies", map[string]any{"name": "dial-web", "type": "Dial", "semantic": "AllOf",
		"identityRoles": []string{"#eng"}, "serviceRoles": []string{"#web"}, "postureCheckRoles": []string{"#dom"}})

	st, m := do(t, http.MethodPost, a.client("/authenticate?method=password"), "", map[string]any{"username": "alice", "password": "Alice-pass-1"})
	if st != http.StatusOK {
		t.Fatalf("alice login: %d %s", st, js(m))
	}
	tok := jget(m, "data", "token").(string)

	// respond sends the DOMAIN response domain on A, then waits until a
	// session on n (which may lag A by a commit: poll) answers want.
	respond := func(domain string, n *node, want int, what string) {
		t.Helper()
		if st, m := do(t, http.MethodPost, a.client("/posture-response"), tok, map[string]any{"id": check, "typeId": "DOMAIN", "domain": domain}); st != http.StatusCreated {
			t.Fatalf("posture response %q on A: %d %s", domain, st, js(m))
		}
		waitUntil(t, what, 15*time.Second, func() error {
			st, m := do(t, http.MethodPost, n.client("/sessions"), tok, map[string]any{"serviceId": svc, "type": "Dial"})
			if st != want {
				return fmt.Errorf("%d %s", st, js(m))
			}
			return nil
		})
	}
	// A passing response on A; a session on C.
	respond("corp.example", cn, http.StatusCreated, "a session on C after the passing response on A")
	// A failing response on A; B refuses and records the failure.
	respond("home", b, http.StatusConflict, "B refuses a session after the failing response")

	for _, n := range c.nodes {
		waitUntil(t, "the failed request visible on "+n.name, 15*time.Second, func() error {
			st, m := do(t, http.MethodGet, n.mgmt("/identities/"+alice+"/failed-service-requests"), admin, nil)
			if st != http.StatusOK {
				return fmt.Errorf("%d %s", st, js(m))
			}
			for _, f := range m["data"].([]any) {
				pf, _ := f.(map[string]any)["policyFailures"].([]any)
				if len(pf) == 1 {
					return nil
				}
			}
			return fmt.Errorf("no failure with policyFailures yet: %s", js(m))
		})
	}
}
