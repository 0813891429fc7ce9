package api_test

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	"edgectl/auth"
	"edgectl/controller"
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
		c, err := pki.ParseServiceAccess(token, map[string]crypto.PublicKey{keys.KeyID: key.Public()}, ts.now())
		if err != nil {
			t.Fatalf("%s: the token does not verify as a router verifies it: %v", typ, err)
		}
		if c.ServiceID != web || c.SessionID != sess["id"] || c.APISessionID != apiSessionID || c.IdentityID != aliceID || c.Type != typ ||
			!c.ExpiresAt.After(ts.now()) {
			t.Fatalf("%s claims: %+v", typ, c)
		}
		other, _ := pki.NewNodeKey()
		if _, err := pki.ParseServiceAccess(token, map[string]crypto.PublicKey{keys.KeyID: other.Public()}, ts.now()); err == nil {
			t.Fatal("another key verified the token")
		}
	}
}

// Rotating the session signing key: new sessions are signed by the new key,
// the replaced key still verifies the sessions it signed (both listed, as
// routers get both), and the next rotation retires it, ending its sessions.
// Only an admin rotates.
func TestSessions_RotatingTheSigningKeyKeepsTheLastKeysSessions(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, alice := ts.newClientIdentity("alice", "eng")
	web := ts.create("/services", map[string]any{"name": "web", "roleAttributes": []string{"web"}})
	ts.create("/service-policies", map[string]any{"name": "dial-web", "type": "Dial", "semantic": "AnyOf", "identityRoles": []string{"#eng"}, "serviceRoles": []string{"#web"}})
	trusted := func() (map[string]crypto.PublicKey, string) {
		t.Helper()
		st, out := ts.do(http.MethodGet, mgmt("/session-signing-keys"), nil)
		if st != 200 {
			t.Fatalf("list keys: %d %v", st, out)
		}
		keys := map[string]crypto.PublicKey{}
		current := ""
		for _, k := range out["data"].([]any) {
			k := k.(map[string]any)
			block, _ := pem.Decode([]byte(k["publicKeyPem"].(string)))
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			keys[k["kid"].(string)] = pub
			if k["current"] == true {
				current = k["kid"].(string)
			}
		}
		return keys, current
	}
	session := func() (string, string) {
		t.Helper()
		st, out := alice.do(http.MethodPost, "/sessions", map[string]any{"serviceId": web, "type": "Dial"})
		if st != 201 {
			t.Fatalf("session: %d %v", st, out)
		}
		d := out["data"].(map[string]any)
		return d["id"].(string), d["token"].(string)
	}
	rotate := func() map[string]any {
		t.Helper()
		st, out := ts.do(http.MethodPost, mgmt("/session-signing-keys/rotate"), map[string]any{})
		if st != 200 {
			t.Fatalf("rotate: %d %v", st, out)
		}
		return out["data"].(map[string]any)
	}
	exists := func(id string) bool {
		st, _ := ts.do(http.MethodGet, mgmt("/sessions/"+id), nil)
		return st == 200
	}

	keys, k1 := trusted()
	if len(keys) != 1 {
		t.Fatalf("a new cluster trusts %d keys", len(keys))
	}
	s1, t1 := session()
	r := rotate()
	if r["previousKid"] != k1 || r["kid"] == k1 || r["sessionsEnded"] != float64(0) {
		t.Fatalf("first rotation: %v", r)
	}
	keys, k2 := trusted()
	if len(keys) != 2 || k2 != r["kid"] || keys[k1] == nil {
		t.Fatalf("after a rotation: current %s, %d keys", k2, len(keys))
	}
	s2, t2 := session()
	for _, tok := range []string{t1, t2} {
		if _, err := pki.ParseServiceAccess(tok, keys, ts.now()); err != nil {
			t.Fatalf("a session made before or after the rotation does not verify: %v", err)
		}
	}
	if _, err := pki.ParseServiceAccess(t2, map[string]crypto.PublicKey{k1: keys[k1]}, ts.now()); err == nil {
		t.Fatal("a session made after the rotation is signed by the old key")
	}
	if !exists(s1) {
		t.Fatal("the first rotation ended a session of the key it kept")
	}

	if st, out := ts.doAs(alice.token, http.MethodPost, mgmt("/session-signing-keys/rotate"), map[string]any{}); st != 401 && st != 403 {
		t.Fatalf("a client rotating the key: %d %v", st, out)
	}
	r = rotate()
	if r["previousKid"] != k2 || r["sessionsEnded"] != float64(1) {
		t.Fatalf("second rotation: %v", r)
	}
	keys, _ = trusted()
	if len(keys) != 2 || keys[k1] != nil || keys[k2] == nil {
		t.Fatalf("after the second rotation the trusted keys are %v", keys)
	}
	if exists(s1) || !exists(s2) {
		t.Fatalf("second rotation: the first key's session exists %v, the second's %v", exists(s1), exists(s2))
	}
}

// An API session's token is a JWT of the kind OpenZiti's routers verify
// themselves: signed by the cluster's API session key (derived from its token
// key, published in the router data model), for the session's identity, with
// the fingerprints of its certificates; the session key rotation leaves it
// alone. A token a year old is refused, as routers refuse it.
func TestSessions_APISessionTokensAreJWTsRoutersVerify(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().UTC()}
	// Sessions idle for up to two years: only the token's age ends one here.
	ts := newTestServerWith(t, func(c *controller.Config) { c.Now, c.SessionTimeout = clock.Now, 2*365*24*time.Hour })
	id, alice := ts.newClientIdentity("alice", "eng")
	key := auth.APISessionSigningKey(ts.store.Read().DataPlaneKeys().TokenKey)
	kid, err := pki.KeyID(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	claims, err := pki.ParseAPIAccess(alice.token, map[string]crypto.PublicKey{kid: key.Public()}, ts.now())
	if err != nil {
		t.Fatalf("the API session token does not verify with the API session key: %v", err)
	}
	st, cur := alice.do(http.MethodGet, "/current-api-session", nil)
	if st != 200 || claims.IdentityID != id || claims.APISessionID != dig(cur, "data", "id") || claims.IsAdmin ||
		claims.ExpiresAt.Sub(claims.IssuedAt) != 365*24*time.Hour {
		t.Fatalf("claims %+v for session %v", claims, cur)
	}
	if st, out := ts.do(http.MethodPost, mgmt("/session-signing-keys/rotate"), map[string]any{}); st != 200 {
		t.Fatalf("rotate: %d %v", st, out)
	}
	if st, out := ts.do(http.MethodPost, mgmt("/session-signing-keys/rotate"), map[string]any{}); st != 200 {
		t.Fatalf("rotate: %d %v", st, out)
	}
	if st, _ := alice.do(http.MethodGet, "/current-api-session", nil); st != 200 {
		t.Fatalf("two session key rotations ended an API session: %d", st)
	}
	clock.Advance(364 * 24 * time.Hour)
	if st, _ := alice.do(http.MethodGet, "/current-api-session", nil); st != 200 {
		t.Fatalf("an API session 364 days old answers %d", st)
	}
	clock.Advance(2 * 24 * time.Hour)
	if st, _ := alice.do(http.MethodGet, "/current-api-session", nil); st != 401 {
		t.Fatalf("an API session a year old answers %d", st)
	}
}

// The API session token also works as a bearer token (what clients that see
// a JWT send, ZAC among them); another bearer JWT is no session.
func TestSessions_TheTokenWorksAsABearerToken(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, alice := ts.newClientIdentity("alice")
	for _, c := range []struct {
		path, token string
		want        int
	}{{clientPath("/current-api-session"), alice.token, 200}, {mgmt("/identities"), ts.token, 200},
		{clientPath("/current-api-session"), alice.token + "x", 401}, {clientPath("/current-api-session"), "not-a-jwt", 401}} {
		st, _, body := ts.getNoRedirect(c.path, map[string]string{"Authorization": "Bearer " + c.token})
		if st != c.want {
			t.Fatalf("GET %s with a bearer token: %d %s, want %d", c.path, st, body, c.want)
		}
	}
}
