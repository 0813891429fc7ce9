package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestAuthenticators_CreateGetListPutPatchDelete(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ident := ts.authnIdentity("alice", nil)
	id := ts.create("/authenticators", map[string]any{"identityId": ident, "method": "updb", "username": "alice",
		"password": "first-pass", "tags": map[string]any{"k": "v"}})
	got := ts.get("/authenticators/" + id)
	if got["method"] != "updb" || got["username"] != "alice" || got["identityId"] != ident ||
		dig(got, "identity", "name") != "alice" || dig(got, "tags", "k") != "v" || got["isExtendRequested"] != false {
		t.Fatalf("get: %v", got)
	}
	for _, secret := range []string{"password", "passwordHash"} {
		if _, ok := got[secret]; ok {
			t.Fatalf("view shows %s", secret)
		}
	}
	if _, total := ts.list(`/authenticators?filter=identityId%3D%22` + ident + `%22`); total != 1 {
		t.Fatalf("filter by identity found %d", total)
	}
	ts.login("alice", "first-pass")

	if st, out := ts.do(http.MethodPut, mgmt("/authenticators/"+id), map[string]any{"username": "alice2", "password": "second-pass"}); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	ts.login("alice2", "second-pass")
	if got = ts.get("/authenticators/" + id); got["username"] != "alice2" || len(got["tags"].(map[string]any)) != 0 {
		t.Fatalf("after put: %v", got)
	}
	// PATCH: a null password means unchanged.
	if st, out := ts.do(http.MethodPatch, mgmt("/authenticators/"+id), map[string]any{"password": nil, "tags": map[string]any{"a": 1}}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	ts.login("alice2", "second-pass")
	st, out := ts.do(http.MethodPut, mgmt("/authenticators/"+id), map[string]any{"username": "alice2"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "password")
	st, out = ts.do(http.MethodPatch, mgmt("/authenticators/"+id), map[string]any{"username": "abc"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "username")

	ts.mustDelete("/authenticators/" + id)
	st, out = ts.do(http.MethodGet, mgmt("/authenticators/"+id), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
	st, out = ts.do(http.MethodPatch, mgmt("/authenticators/"+id), map[string]any{"tags": map[string]any{}})
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestAuthenticators_CreateValidatesEveryFieldAndStoresNothing(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ident := ts.authnIdentity("bob", nil)
	leaf := newAuthnCA(t, "ca").leaf(t, "bob")
	before := ts.authnCount("/authenticators")
	updb := func(kv ...any) map[string]any {
		return withFields(map[string]any{"identityId": ident, "method": "updb", "username": "bobby", "password": "secret-1"}, kv...)
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"identityId missing", updb("identityId", "<absent>"), "identityId"},
		{"identity unknown", updb("identityId", "nope"), "identityId"},
		{"method missing", updb("method", "<absent>"), "method"},
		{"method unknown", updb("method", "totp"), "method"},
		{"username missing", updb("username", "<absent>"), "username"},
		{"username too short", updb("username", "bob"), "username"},
		{"username too long", updb("username", strings.Repeat("u", 101)), "username"},
		{"password missing", updb("password", "<absent>"), "password"},
		{"password too short", updb("password", "abcd"), "password"},
		{"password too long", updb("password", strings.Repeat("p", 101)), "password"},
		{"certPem on updb", updb("certPem", leaf), "certPem"},
		{"cert without certPem", updb("method", "cert", "username", "<absent>", "password", "<absent>"), "certPem"},
		{"cert with username", updb("method", "cert", "certPem", leaf, "password", "<absent>"), "username"},
		{"cert with bad PEM", updb("method", "cert", "certPem", "junk", "username", "<absent>", "password", "<absent>"), "certPem"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt("/authenticators"), c.body)
		t.Run(c.name, func(t *testing.T) {
			wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field)
			if strings.Contains(strings.ToLower(c.field), "password") && dig(out, "error", "cause", "value") != nil {
				t.Fatalf("the error echoes the password: %v", out)
			}
		})
	}
	if after := ts.authnCount("/authenticators"); after != before {
		t.Fatalf("authenticators %d after bad creates, want %d", after, before)
	}
}

func TestAuthenticators_PasswordsFollowTheIdentitysAuthPolicy(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	body := authPolicyBody("strict")
	u := dig(body, "primary", "updb").(map[string]any)
	u["minPasswordLength"], u["requireMixedCase"], u["requireNumberChar"], u["requireSpecialChar"] = 10, true, true, true
	pol := ts.create("/auth-policies", body)
	ident := ts.authnIdentity("carol", map[string]any{"authPolicyId": pol})
	for _, c := range []struct{ name, pw, reason string }{
		{"too short for the policy", "Ab1!x", "at least 10"},
		{"no upper case", "abcdefgh1!", "upper and lower"},
		{"no digit", "Abcdefghi!", "digit"},
		{"no special", "Abcdefghi1", "not a letter or digit"},
	} {
		st, out := ts.do(http.MethodPost, mgmt("/authenticators"), map[string]any{"identityId": ident, "method": "updb", "username": "carol", "password": c.pw})
		t.Run(c.name, func(t *testing.T) {
			wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "password")
			if r, _ := dig(out, "error", "cause", "reason").(string); !strings.Contains(r, c.reason) {
				t.Fatalf("reason %q does not say %q", r, c.reason)
			}
		})
	}
	id := ts.create("/authenticators", map[string]any{"identityId": ident, "method": "updb", "username": "carol", "password": "Abcdefgh1!"})
	st, out := ts.do(http.MethodPatch, mgmt("/authenticators/"+id), map[string]any{"password": "weakpassword"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "password")
	ts.login("carol", "Abcdefgh1!")
}

func TestAuthenticators_UniquenessRulesAreConflicts(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a, b := ts.authnIdentity("a-user", nil), ts.authnIdentity("b-user", nil)
	ts.create("/authenticators", map[string]any{"identityId": a, "method": "updb", "username": "shared", "password": "password1"})
	st, out := ts.do(http.MethodPost, mgmt("/authenticators"), map[string]any{"identityId": b, "method": "updb", "username": "shared", "password": "password1"})
	wantError(t, st, out, 409, "CONFLICT", "username")
	st, out = ts.do(http.MethodPost, mgmt("/authenticators"), map[string]any{"identityId": a, "method": "updb", "username": "other", "password": "password1"})
	wantError(t, st, out, 409, "CONFLICT", "method")
	leaf := newAuthnCA(t, "ca").leaf(t, "x")
	ts.create("/authenticators", map[string]any{"identityId": a, "method": "cert", "certPem": leaf})
	st, out = ts.do(http.MethodPost, mgmt("/authenticators"), map[string]any{"identityId": b, "method": "cert", "certPem": leaf})
	wantError(t, st, out, 409, "CONFLICT", "certPem")
	bID := ts.create("/authenticators", map[string]any{"identityId": b, "method": "updb", "username": "b-name", "password": "password1"})
	st, out = ts.do(http.MethodPatch, mgmt("/authenticators/"+bID), map[string]any{"username": "shared"})
	wantError(t, st, out, 409, "CONFLICT", "username")
	// The admin's only authenticator cannot be deleted.
	data, _ := ts.list(`/authenticators?filter=username%3D%22admin%22`)
	adminAuth := data[0].(map[string]any)["id"].(string)
	st, out = ts.do(http.MethodDelete, mgmt("/authenticators/"+adminAuth), nil)
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "id")
}

func TestAuthenticators_CertAuthenticatorsChangeOnlyTagsAndCanBeAskedToExtend(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ident := ts.authnIdentity("device", nil)
	id := ts.create("/authenticators", map[string]any{"identityId": ident, "method": "cert", "certPem": newAuthnCA(t, "ca").leaf(t, "device")})
	got := ts.get("/authenticators/" + id)
	if got["method"] != "cert" || len(got["fingerprint"].(string)) != 40 || got["username"] != "" {
		t.Fatalf("cert authenticator: %v", got)
	}
	st, out := ts.do(http.MethodPut, mgmt("/authenticators/"+id), map[string]any{"username": "device", "password": "password1"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "username")
	if st, out := ts.do(http.MethodPatch, mgmt("/authenticators/"+id), map[string]any{"tags": map[string]any{"t": true}}); st != 200 {
		t.Fatalf("patch tags: %d %v", st, out)
	}
	if st, out := ts.do(http.MethodPost, mgmt("/authenticators/"+id+"/request-extend"), map[string]any{"rollKeys": true}); st != 200 {
		t.Fatalf("request-extend: %d %v", st, out)
	}
	got = ts.get("/authenticators/" + id)
	if got["isExtendRequested"] != true || got["isKeyRollRequested"] != true || got["extendRequestedAt"] == nil || dig(got, "tags", "t") != true {
		t.Fatalf("after request-extend: %v", got)
	}
	if _, total := ts.list(`/authenticators?filter=isExtendRequested%3Dtrue`); total != 1 {
		t.Fatalf("filter isExtendRequested found %d", total)
	}
	updb := ts.create("/authenticators", map[string]any{"identityId": ident, "method": "updb", "username": "device", "password": "password1"})
	st, out = ts.do(http.MethodPost, mgmt("/authenticators/"+updb+"/request-extend"), nil)
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "method")
	st, out = ts.do(http.MethodPost, mgmt("/authenticators/nope/request-extend"), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestAuthenticators_ReEnrollReplacesTheAuthenticatorByAnEnrollment(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	caID, ca := ts.authnVerifiedCA("corp", true)
	ident := ts.authnIdentity("dora", nil)
	pw := ts.create("/authenticators", map[string]any{"identityId": ident, "method": "updb", "username": "dora", "password": "password1"})
	fromCA := ts.create("/authenticators", map[string]any{"identityId": ident, "method": "cert", "certPem": ca.leaf(t, "dora")})
	other := ts.authnIdentity("eve", nil)
	plain := ts.create("/authenticators", map[string]any{"identityId": other, "method": "cert", "certPem": newAuthnCA(t, "x").leaf(t, "eve")})

	st, out := ts.do(http.MethodPost, mgmt("/authenticators/"+pw+"/re-enroll"), map[string]any{"expiresAt": "2000-01-01T00:00:00Z"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "expiresAt")
	st, out = ts.do(http.MethodPost, mgmt("/authenticators/"+pw+"/re-enroll"), map[string]any{})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "expiresAt")
	ts.get("/authenticators/" + pw)
	st, out = ts.do(http.MethodPost, mgmt("/authenticators/nope/re-enroll"), map[string]any{"expiresAt": authnFuture()})
	wantError(t, st, out, 404, "NOT_FOUND", "")

	for _, c := range []struct{ id, method, caID, username string }{
		{pw, "updb", "", "dora"}, {fromCA, "ottca", caID, ""}, {plain, "ott", "", ""},
	} {
		enr := ts.create("/authenticators/"+c.id+"/re-enroll", map[string]any{"expiresAt": authnFuture()})
		e := ts.get("/enrollments/" + enr)
		if e["method"] != c.method || (c.caID != "" && e["caId"] != c.caID) || (c.username != "" && e["username"] != c.username) {
			t.Fatalf("re-enroll of %s: %v", c.method, e)
		}
		st, out := ts.do(http.MethodGet, mgmt("/authenticators/"+c.id), nil)
		wantError(t, st, out, 404, "NOT_FOUND", "")
	}
}

// A CA certificate cannot become a cert authenticator: whoever holds its key
// could mint any certificate below it.
func TestAuthenticators_ACACertificateIsRefused(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ident := ts.authnIdentity("ca-holder", nil)
	before, _ := ts.list("/authenticators")
	st, out := ts.do(http.MethodPost, mgmt("/authenticators"), map[string]any{"identityId": ident, "method": "cert", "certPem": newAuthnCA(t, "sub-ca").pem})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "certPem")
	if after, _ := ts.list("/authenticators"); len(after) != len(before) {
		t.Fatal("the refused authenticator was stored")
	}
}
