package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestCurrentIdentityAuthenticators_ListGetAndChangeTheOwnPassword(t *testing.T) {
	t.Parallel()
	ts, _ := newAuthFlowServer(t, nil)
	pol := ts.policyWith("digits", func(p, _ map[string]any) { p["updb"].(map[string]any)["requireNumberChar"] = true })
	id := ts.userWithPassword("self-service", "password-1", map[string]any{"authPolicyId": pol})
	leaf := newAuthnCA(t, "ca").leaf(t, "self-service")
	certAuth := ts.create("/authenticators", map[string]any{"identityId": id, "method": "cert", "certPem": leaf})
	otherID := ts.userWithPassword("neighbour", "password-1", nil)
	data, _ := ts.list("/identities/" + otherID + "/authenticators")
	otherAuth := data[0].(map[string]any)["id"].(string)
	token, _ := ts.okSession(ts.passwordLogin("self-service", "password-1"))

	for _, prefix := range []string{"/edge/client/v1", "/edge/management/v1"} {
		st, out, _ := ts.send(req{method: http.MethodGet, path: prefix + "/current-identity/authenticators", token: token})
		list, _ := out["data"].([]any)
		if st != 200 || len(list) != 2 || dig(out, "meta", "pagination", "totalCount") != 2.0 {
			t.Fatalf("%s list: %d %v", prefix, st, out)
		}
		st, out, _ = ts.send(req{method: http.MethodGet, path: prefix + "/current-identity/authenticators?filter=method%3D%22cert%22", token: token})
		if list, _ := out["data"].([]any); st != 200 || len(list) != 1 || dig(list[0], "id") != certAuth {
			t.Fatalf("%s filtered list: %d %v", prefix, st, out)
		}
		st, out, _ = ts.send(req{method: http.MethodGet, path: prefix + "/current-identity/authenticators/" + certAuth, token: token})
		if st != 200 || dig(out, "data", "fingerprint") == "" || dig(out, "data", "identityId") != id {
			t.Fatalf("%s get: %d %v", prefix, st, out)
		}
		st, out, _ = ts.send(req{method: http.MethodGet, path: prefix + "/current-identity/authenticators/" + otherAuth, token: token})
		wantError(t, st, out, 404, "NOT_FOUND", "")
	}
	data, _ = ts.list("/identities/" + id + "/authenticators?filter=method%3D%22updb%22")
	own := data[0].(map[string]any)["id"].(string)
	path := clientPath("/current-identity/authenticators/" + own)
	before := ts.get("/authenticators/" + own)["updatedAt"]
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"currentPassword missing", map[string]any{"username": "self-service", "password": "password-2"}, "currentPassword"},
		{"currentPassword too short", map[string]any{"currentPassword": "abc", "username": "self-service", "password": "password-2"}, "currentPassword"},
		{"currentPassword wrong", map[string]any{"currentPassword": "password-9", "username": "self-service", "password": "password-2"}, "currentPassword"},
		{"password missing in PUT", map[string]any{"currentPassword": "password-1", "username": "self-service"}, "password"},
		{"new password breaks the policy", map[string]any{"currentPassword": "password-1", "username": "self-service", "password": "no-digits"}, "password"},
		{"username too short", map[string]any{"currentPassword": "password-1", "username": "me", "password": "password-2"}, "username"},
	} {
		st, out, _ := ts.send(req{method: http.MethodPut, path: path, token: token, body: c.body})
		t.Run(c.name, func(t *testing.T) {
			wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field)
			if strings.Contains(c.field, "assword") && dig(out, "error", "cause", "value") != nil {
				t.Fatalf("the error echoes a password: %v", out)
			}
		})
	}
	if ts.get("/authenticators/" + own)["updatedAt"] != before {
		t.Fatal("a refused change was stored")
	}
	st, out, _ := ts.send(req{method: http.MethodPut, path: clientPath("/current-identity/authenticators/" + certAuth), token: token,
		body: map[string]any{"currentPassword": "password-1", "username": "x-user", "password": "password-2"}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "method")
	st, out, _ = ts.send(req{method: http.MethodPatch, path: clientPath("/current-identity/authenticators/" + otherAuth), token: token,
		body: map[string]any{"currentPassword": "password-1", "password": "password-2"}})
	wantError(t, st, out, 404, "NOT_FOUND", "")

	if st, out, _ := ts.send(req{method: http.MethodPatch, path: path, token: token,
		body: map[string]any{"currentPassword": "password-1", "password": "password-2"}}); st != 200 {
		t.Fatalf("patch own password: %d %v", st, out)
	}
	st, out, _ = ts.passwordLogin("self-service", "password-1")
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	ts.okSession(ts.passwordLogin("self-service", "password-2"))
	if st, out, _ := ts.send(req{method: http.MethodPut, path: mgmt("/current-identity/authenticators/" + own), token: token,
		body: map[string]any{"currentPassword": "password-2", "username": "renamed-self", "password": "password-3"}}); st != 200 {
		t.Fatalf("put own authenticator: %d %v", st, out)
	}
	ts.okSession(ts.passwordLogin("renamed-self", "password-3"))
}
