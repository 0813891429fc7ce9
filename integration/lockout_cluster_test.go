package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestLockoutHoldsOnEveryNode: failed logins spread over two nodes add up
// (the count is replicated), the lock then refuses the right password on the
// third node, and an admin's enable on any node lifts it everywhere.
func TestLockoutHoldsOnEveryNode(t *testing.T) {
	c := startCluster(t, clusterOpts{size: 3})
	a, b, cn := c.nodes[0], c.nodes[1], c.nodes[2]
	admin := c.token
	create := func(path string, body any) string {
		t.Helper()
		st, m := do(t, http.MethodPost, a.mgmt(path), admin, body)
		if st != http.StatusCreated {
			t.Fatalf("create %s: %d %s", path, st, js(m))
		}
		return jget(m, "data", "id").(string)
	}
	pol := create("/auth-policies", map[string]any{"name": "three-strikes",
		"primary": map[string]any{
			"cert":   map[string]any{"allowed": false, "allowExpiredCerts": false},
			"extJwt": map[string]any{"allowed": false, "allowedSigners": []string{}},
			"updb": map[string]any{"allowed": true, "lockoutDurationMinutes": 0, "maxAttempts": 3, "minPasswordLength": 5,
				"requireMixedCase": false, "requireNumberChar": false, "requireSpecialChar": false}},
		"secondary": map[string]any{"requireTotp": false}})
	bob := create("/identities", map[string]any{"name": "bob", "type": "User", "isAdmin": false, "authPolicyId": pol})
	create("/authenticators", map[string]any{"identityId": bob, "method": "updb", "username": "bobby", "password": "bob-password"})
	loginAt := func(n *node, pass string) (int, map[string]any) {
		return do(t, http.MethodPost, n.client("/authenticate?method=password"), "", map[string]any{"username": "bobby", "password": pass})
	}
	// The authenticator may reach the other nodes a commit later.
	waitUntil(t, "bob can log in on node 3", 10*time.Second, func() error {
		if st, m := loginAt(cn, "bob-password"); st != http.StatusOK {
			return fmt.Errorf("%d %s", st, js(m))
		}
		return nil
	})
	for i, n := range []*node{a, b, a} {
		st, m := loginAt(n, "wrong-password")
		wantError(t, fmt.Sprintf("failure %d on %s", i+1, n.name), st, m, http.StatusUnauthorized, "INVALID_AUTH", "")
	}
	// The third failure was applied on its node before it answered; the others follow within a commit.
	for _, n := range []*node{a, b, cn} {
		waitUntil(t, "the lock reached "+n.name, 10*time.Second, func() error {
			if st, m := loginAt(n, "bob-password"); st != http.StatusUnauthorized {
				return fmt.Errorf("right password while locked: %d %s", st, js(m))
			}
			return nil
		})
	}
	st, m := do(t, http.MethodPost, b.mgmt("/identities/"+bob+"/enable"), admin, nil)
	mustStatus(t, "enable", st, m, http.StatusOK)
	waitUntil(t, "the unlock reached node 3", 10*time.Second, func() error {
		if st, m := loginAt(cn, "bob-password"); st != http.StatusOK {
			return fmt.Errorf("%d %s", st, js(m))
		}
		return nil
	})
}
