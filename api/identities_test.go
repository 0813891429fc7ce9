package api_test

import (
	"net/http"
	"testing"
)

func TestIdentities_CreateValidatesEveryFieldAndStoresNothingOnError(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ts.refusesCreates(t, "/identities", []badCreate{
		{"missing name", map[string]any{"type": "User", "isAdmin": false}, "name"},
		{"empty name", map[string]any{"name": "", "type": "User", "isAdmin": false}, "name"},
		{"bad type", map[string]any{"name": "x", "type": "Robot", "isAdmin": false}, "type"},
		{"isAdmin missing", map[string]any{"name": "x", "type": "User"}, "isAdmin"},
		{"isAdmin string", map[string]any{"name": "x", "type": "User", "isAdmin": "yes"}, "isAdmin"},
		{"cost too high", map[string]any{"name": "x", "type": "User", "isAdmin": false, "defaultHostingCost": 70000}, "defaultHostingCost"},
		{"cost negative", map[string]any{"name": "x", "type": "User", "isAdmin": false, "defaultHostingCost": -1}, "defaultHostingCost"},
		{"cost fraction", map[string]any{"name": "x", "type": "User", "isAdmin": false, "defaultHostingCost": 1.5}, "defaultHostingCost"},
		{"bad precedence", map[string]any{"name": "x", "type": "User", "isAdmin": false, "defaultHostingPrecedence": "top"}, "defaultHostingPrecedence"},
		{"bad service precedence", map[string]any{"name": "x", "type": "User", "isAdmin": false, "serviceHostingPrecedences": map[string]any{"s": "top"}}, "serviceHostingPrecedences.s"},
		{"bad service cost", map[string]any{"name": "x", "type": "User", "isAdmin": false, "serviceHostingCosts": map[string]any{"s": 99999}}, "serviceHostingCosts.s"},
		{"nested tag", map[string]any{"name": "x", "type": "User", "isAdmin": false, "tags": map[string]any{"a": map[string]any{}}}, "tags.a"},
		{"role not string", map[string]any{"name": "x", "type": "User", "isAdmin": false, "roleAttributes": []any{1}}, "roleAttributes"},
		{"unknown auth policy", map[string]any{"name": "x", "type": "User", "isAdmin": false, "authPolicyId": "nope"}, "authPolicyId"},
		{"malformed json", `{"name": `, ""},
		{"array body", `[]`, ""},
	})
}

func TestIdentities_PatchChangesOnlyGivenFieldsAndPutResetsTheRest(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/identities", map[string]any{"name": "dev1", "type": "Device", "isAdmin": false,
		"roleAttributes": []string{"a"}, "tags": map[string]any{"k": "v"}, "defaultHostingCost": 5})
	if st, out := ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"roleAttributes": []string{"b", "c"}}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	got := ts.get("/identities/" + id)
	if got["name"] != "dev1" || got["defaultHostingCost"].(float64) != 5 || len(got["roleAttributes"].([]any)) != 2 || got["tags"].(map[string]any)["k"] != "v" {
		t.Fatalf("after patch: %v", got)
	}
	if st, out := ts.do(http.MethodPut, mgmt("/identities/"+id), map[string]any{"name": "dev2", "type": "User", "isAdmin": false}); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	got = ts.get("/identities/" + id)
	if got["name"] != "dev2" || got["typeId"] != "User" || got["defaultHostingCost"].(float64) != 0 || len(got["roleAttributes"].([]any)) != 0 || len(got["tags"].(map[string]any)) != 0 {
		t.Fatalf("after put: %v", got)
	}
	st, out := ts.do(http.MethodPut, mgmt("/identities/"+id), map[string]any{"name": "dev3"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "type")
}

func TestIdentities_ListFiltersSortsAndPages(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for _, n := range []string{"web-1", "web-2", "web-3", "db-1"} {
		ts.create("/identities", map[string]any{"name": n, "type": "Device", "isAdmin": false})
	}
	data, total := ts.list(`/identities?filter=name%20contains%20%22web%22%20sort%20by%20name%20desc&limit=2&offset=1`)
	if total != 3 || len(data) != 2 || data[0].(map[string]any)["name"] != "web-2" {
		t.Fatalf("got %d of %d: %v", len(data), total, data)
	}
	st, out := ts.do(http.MethodGet, mgmt("/identities?filter=name%20%3D"), nil)
	wantError(t, st, out, 400, "INVALID_FILTER", "")
	// As OpenZiti's clients send them: above the maximum is the maximum,
	// -1 is no limit; below -1 is refused.
	st, out = ts.do(http.MethodGet, mgmt("/identities?limit=1000"), nil)
	if st != 200 || dig(out, "meta", "pagination", "limit") != 500.0 || len(out["data"].([]any)) != 5 {
		t.Fatalf("limit=1000: %d %v", st, dig(out, "meta", "pagination"))
	}
	st, out = ts.do(http.MethodGet, mgmt("/identities?limit=-1"), nil)
	if st != 200 || len(out["data"].([]any)) != 5 {
		t.Fatalf("limit=-1: %d %v", st, dig(out, "meta", "pagination"))
	}
	st, out = ts.do(http.MethodGet, mgmt("/identities?limit=-2"), nil)
	wantError(t, st, out, 400, "INVALID_FILTER", "limit")
	st, out = ts.do(http.MethodGet, mgmt("/identities?filter=nosuchfield%3D1"), nil)
	wantError(t, st, out, 400, "INVALID_FILTER", "")
}

func TestIdentities_NeedAnAdminSession(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.doAs("", http.MethodGet, mgmt("/identities"), nil)
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	st, out = ts.doAs("garbage", http.MethodGet, mgmt("/identities"), nil)
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
}

func TestIdentities_DuplicateNameIsAConflict(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ts.create("/identities", map[string]any{"name": "same", "type": "User", "isAdmin": false})
	st, out := ts.do(http.MethodPost, mgmt("/identities"), map[string]any{"name": "same", "type": "User", "isAdmin": false})
	wantError(t, st, out, 409, "CONFLICT", "name")
}

func TestLogout_EndsTheSession(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	tok := ts.login("admin", testAdminPassword)
	if st, _ := ts.doAs(tok, http.MethodDelete, "/edge/client/v1/current-api-session", nil); st != 200 {
		t.Fatalf("logout: %d", st)
	}
	st, out := ts.doAs(tok, http.MethodGet, "/edge/client/v1/current-identity", nil)
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
}

func TestAuthenticate_WrongPasswordAndUnknownUserLookTheSame(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st1, out1 := ts.doAs("", http.MethodPost, mgmt("/authenticate?method=password"), map[string]any{"username": "admin", "password": "wrong-password"})
	st2, out2 := ts.doAs("", http.MethodPost, mgmt("/authenticate?method=password"), map[string]any{"username": "nobody", "password": "wrong-password"})
	wantError(t, st1, out1, 401, "INVALID_AUTH", "")
	wantError(t, st2, out2, 401, "INVALID_AUTH", "")
	if out1["error"].(map[string]any)["message"] != out2["error"].(map[string]any)["message"] {
		t.Fatal("the messages tell a wrong password from an unknown user")
	}
}
