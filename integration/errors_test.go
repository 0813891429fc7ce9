package integration

import (
	"net/http"
	"net/url"
	"testing"
)

func TestIdentityBadBodiesAreRejectedAndNothingStored(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := login(t, n, adminUser, n.password)
	createIdentity(t, n, tok, map[string]any{"name": "taken", "type": "User", "isAdmin": false})
	before := countIdentities(t, n, tok)

	cases := []struct {
		name  string
		body  any
		code  string
		field string
	}{
		{"missing name", map[string]any{"type": "User", "isAdmin": false}, "COULD_NOT_VALIDATE", "name"},
		{"isAdmin as a string", map[string]any{"name": "bad-1", "type": "User", "isAdmin": "true"}, "COULD_NOT_VALIDATE", "isAdmin"},
		{"unknown type", map[string]any{"name": "bad-2", "type": "Robot", "isAdmin": false}, "COULD_NOT_VALIDATE", "type"},
		{"defaultHostingCost 70000", map[string]any{"name": "bad-3", "type": "User", "isAdmin": false, "defaultHostingCost": 70000}, "COULD_NOT_VALIDATE", "defaultHostingCost"},
		{"tag value is an object", map[string]any{"name": "bad-4", "type": "User", "isAdmin": false, "tags": map[string]any{"team": map[string]any{"nested": 1}}}, "COULD_NOT_VALIDATE", "tags"},
		{"malformed JSON", `{"name": "bad-5", "type": "User",`, "COULD_NOT_PARSE_BODY", ""},
		{"missing isAdmin", map[string]any{"name": "bad-6", "type": "User"}, "COULD_NOT_VALIDATE", "isAdmin"},
		{"empty name", map[string]any{"name": "", "type": "User", "isAdmin": false}, "COULD_NOT_VALIDATE", "name"},
		{"body is an array", `[{"name": "bad-7"}]`, "COULD_NOT_PARSE_BODY", ""},
	}
	for _, c := range cases {
		status, m := do(t, http.MethodPost, n.mgmt("/identities"), tok, c.body)
		wantError(t, "create with "+c.name, status, m, http.StatusBadRequest, c.code, c.field)
	}

	// The same rules hold for PATCH and PUT of an existing identity.
	id := createIdentity(t, n, tok, map[string]any{"name": "victim", "type": "User", "isAdmin": false, "defaultHostingCost": 7})
	before++
	status, m := do(t, http.MethodPatch, n.mgmt("/identities/"+id), tok, map[string]any{"defaultHostingCost": 70000})
	wantError(t, "PATCH defaultHostingCost 70000", status, m, http.StatusBadRequest, "COULD_NOT_VALIDATE", "defaultHostingCost")
	status, m = do(t, http.MethodPut, n.mgmt("/identities/"+id), tok, map[string]any{"type": "User", "isAdmin": false})
	wantError(t, "PUT without name", status, m, http.StatusBadRequest, "COULD_NOT_VALIDATE", "name")
	if got := getIdentity(t, n, tok, id); jget(got, "defaultHostingCost") != float64(7) || jget(got, "name") != "victim" {
		t.Errorf("rejected PATCH/PUT changed the identity: %s", js(got))
	}

	// A duplicate name is a conflict, by create and by rename.
	status, m = do(t, http.MethodPost, n.mgmt("/identities"), tok, map[string]any{"name": "taken", "type": "Device", "isAdmin": false})
	wantError(t, "create with a duplicate name", status, m, http.StatusConflict, "CONFLICT", "")
	status, m = do(t, http.MethodPatch, n.mgmt("/identities/"+id), tok, map[string]any{"name": "taken"})
	wantError(t, "rename to a duplicate name", status, m, http.StatusConflict, "CONFLICT", "")

	if got := countIdentities(t, n, tok); got != before {
		t.Errorf("identity count after rejected requests = %d, want %d (something was stored)", got, before)
	}
	for _, name := range []string{"bad-1", "bad-2", "bad-3", "bad-4", "bad-5", "bad-6", "bad-7"} {
		if names, total := listNames(t, n, tok, url.Values{"filter": {`name = "` + name + `"`}}); total != 0 {
			t.Errorf("rejected identity %q was stored: %v", name, names)
		}
	}

	// Bad list parameters.
	for _, q := range []url.Values{
		{"filter": {`name = `}},
		{"filter": {`((((`}},
		{"filter": {`noSuchField = "x"`}},
		{"limit": {"-2"}},
		{"limit": {"ten"}},
		{"offset": {"abc"}},
	} {
		status, m := do(t, http.MethodGet, n.mgmt("/identities?"+q.Encode()), tok, nil)
		wantError(t, "list with "+q.Encode(), status, m, http.StatusBadRequest, "INVALID_FILTER", "")
	}
	// The maximum limit itself is fine; above it is served as the maximum,
	// and -1 is no limit, as OpenZiti's clients send them (docs/api.md).
	for _, q := range []string{"limit=500", "limit=501", "limit=-1"} {
		status, m = do(t, http.MethodGet, n.mgmt("/identities?"+q), tok, nil)
		mustStatus(t, "list with "+q, status, m, http.StatusOK)
	}
}

func TestNoOrBadSessionIsUnauthorized(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})

	for _, c := range []struct{ what, url, token string }{
		{"management list without a session", n.mgmt("/identities"), ""},
		{"management list with a garbage token", n.mgmt("/identities"), "garbage-token-that-was-never-issued"},
		{"current identity without a session", n.client("/current-identity"), ""},
		{"current identity with a garbage token", n.client("/current-identity"), "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"current API session without a session", n.mgmt("/current-api-session"), ""},
	} {
		status, m := do(t, http.MethodGet, c.url, c.token, nil)
		wantError(t, c.what, status, m, http.StatusUnauthorized, "UNAUTHORIZED", "")
	}
	status, m := do(t, http.MethodPost, n.mgmt("/identities"), "", map[string]any{"name": "anon", "type": "User", "isAdmin": false})
	wantError(t, "create without a session", status, m, http.StatusUnauthorized, "UNAUTHORIZED", "")

	// A wrong password is INVALID_AUTH, for a known and an unknown user alike.
	for _, creds := range []map[string]any{
		{"username": adminUser, "password": "wrong-password"},
		{"username": "nobody-here", "password": "wrong-password"},
	} {
		status, m := do(t, http.MethodPost, n.mgmt("/authenticate?method=password"), "", creds)
		wantError(t, "authenticate as "+creds["username"].(string)+" with a wrong password", status, m, http.StatusUnauthorized, "INVALID_AUTH", "")
	}

	// The real token works on both APIs, and through the zt-session alias.
	tok := login(t, n, adminUser, n.password)
	status, m = do(t, http.MethodGet, n.client("/current-identity"), tok, nil)
	mustStatus(t, "current identity", status, m, http.StatusOK)
	if jget(m, "data", "isAdmin") != true || jget(m, "data", "isDefaultAdmin") != true {
		t.Errorf("current identity of the admin: %s", js(m))
	}
	status, m = do(t, http.MethodGet, n.mgmt("/identities"), tok, nil)
	mustStatus(t, "list with the admin token", status, m, http.StatusOK)
}

// TestNonAdminIsForbidden needs a password for a non-admin identity. Until
// updb enrollment completion exists, the only way through the API is
// POST /authenticators (method updb); while that route is not built the
// test skips.
func TestNonAdminIsForbidden(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := login(t, n, adminUser, n.password)
	id := createIdentity(t, n, tok, map[string]any{"name": "plain-user", "type": "User", "isAdmin": false})

	status, m := do(t, http.MethodPost, n.mgmt("/authenticators"), tok, map[string]any{
		"identityId": id, "method": "updb", "username": "plainuser", "password": "plain-password-1",
	})
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		t.Skipf("POST /edge/management/v1/authenticators is not served yet (%d %v): no way to give a non-admin a password", status, jget(m, "error", "message"))
	}
	mustStatus(t, "create updb authenticator", status, m, http.StatusCreated)

	userTok := login(t, n, "plainuser", "plain-password-1")
	status, m = do(t, http.MethodGet, n.client("/current-identity"), userTok, nil)
	mustStatus(t, "current identity of the non-admin", status, m, http.StatusOK)
	if jget(m, "data", "id") != id || jget(m, "data", "isAdmin") != false {
		t.Errorf("current identity of the non-admin: %s", js(m))
	}
	status, m = do(t, http.MethodGet, n.mgmt("/identities"), userTok, nil)
	wantError(t, "non-admin lists identities", status, m, http.StatusForbidden, "FORBIDDEN", "")
	status, m = do(t, http.MethodPost, n.mgmt("/identities"), userTok, map[string]any{"name": "by-non-admin", "type": "User", "isAdmin": true})
	wantError(t, "non-admin creates an identity", status, m, http.StatusForbidden, "FORBIDDEN", "")
}

func TestLogoutEndsTheSession(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := login(t, n, adminUser, n.password)
	other := login(t, n, adminUser, n.password) // a second session of the same identity

	status, m := do(t, http.MethodGet, n.client("/current-api-session"), tok, nil)
	mustStatus(t, "current API session", status, m, http.StatusOK)
	status, m = do(t, http.MethodDelete, n.client("/current-api-session"), tok, nil)
	mustStatus(t, "logout", status, m, http.StatusOK)

	for _, u := range []string{n.client("/current-api-session"), n.client("/current-identity"), n.mgmt("/identities")} {
		status, m := do(t, http.MethodGet, u, tok, nil)
		wantError(t, "GET "+u+" after logout", status, m, http.StatusUnauthorized, "UNAUTHORIZED", "")
	}
	status, m = do(t, http.MethodDelete, n.client("/current-api-session"), tok, nil)
	wantError(t, "logout twice", status, m, http.StatusUnauthorized, "UNAUTHORIZED", "")

	// Only that session ended.
	status, m = do(t, http.MethodGet, n.mgmt("/identities"), other, nil)
	mustStatus(t, "the other session after logout", status, m, http.StatusOK)
}
