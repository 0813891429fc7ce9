package api_test

import (
	"net/http"
	"testing"

	"edgectl/pki"
)

// A service session's token is the JWT OpenZiti routers verify: signed by
// the cluster's session signing key (whose public key and kid routers get
// in their data model), for the service, the API session and the identity,
// with the session's type; another key or audience does not verify it.
func TestSessions_TheTokenIsTheServiceAccessJWTRoutersVerify(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	aliceID, alice := ts.newClientIdentity("alice", "eng")
	web := ts.create("/services", map[string]any{"name": "web", "roleAttributes": []string{"web"}})
	ts.create("/service-policies", map[string]any{"name": "dial-web", "type": "Dial", "semantic": "AnyOf", "identityRoles": []string{"#eng"}, "serviceRoles": []string{"#web"}})
	ts.create("/service-policies", map[string]any{"name": "bind-web", "type": "Bind", "semantic": "AnyOf", "identityRoles": []string{"#eng"}, "serviceRoles": []string{"#web"}})
	ts.create("/edge-routers", map[string]any{"name": "er1", "roleAttributes": []string{"r"}})
	ts.create("/edge-router-policies", map[string]any{"name": "erp", "semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	ts.create("/service-edge-router-policies", map[string]any{"name": "serp", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	st, cur := alice.do(http.MethodGet, "/current-api-session", nil)
	if st != 200 {
		t.Fatalf("current API session: %d", st)
	}
	apiSessionID := cur["data"].(map[string]any)["id"].(string)

	keys := ts.store.Read().DataPlaneKeys()
	key, err := pki.ParseKeyPEM([]byte(keys.SigningKeyPEM))
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"Dial", "Bind"} {
		st, out := alice.do(http.MethodPost, "/sessions", map[string]any{"serviceId": web, "type": typ})
		if st != 201 {
			t.Fatalf("%s session: %d %v", typ, st, out)
		}
		sess := out["data"].(map[string]any)
		token := sess["token"].(string)
		c, err := pki.ParseServiceAccess(token, key.Public(), keys.KeyID, ts.now())
		if err != nil {
			t.Fatalf("%s: the token does not verify as a router verifies it: %v", typ, err)
		}
		if c.ServiceID != web || c.SessionID != sess["id"] || c.APISessionID != apiSessionID || c.IdentityID != aliceID || c.Type != typ ||
			!c.ExpiresAt.After(ts.now()) {
			t.Fatalf("%s claims: %+v", typ, c)
		}
		other, _ := pki.NewNodeKey()
		if _, err := pki.ParseServiceAccess(token, other.Public(), keys.KeyID, ts.now()); err == nil {
			t.Fatal("another key verified the token")
		}
	}
}
