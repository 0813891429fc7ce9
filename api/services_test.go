package api_test

import (
	"net/http"
	"net/url"
	"testing"
)

// configFixture makes two config types and configs: a1, a2 of type A, b1 of type B.
func configFixture(ts *testServer) (a1, a2, b1 string) {
	ts.t.Helper()
	ta := ts.create("/config-types", map[string]any{"name": "A"})
	tb := ts.create("/config-types", map[string]any{"name": "B"})
	a1 = ts.create("/configs", map[string]any{"name": "a1", "configTypeId": ta, "data": map[string]any{"v": 1}})
	a2 = ts.create("/configs", map[string]any{"name": "a2", "configTypeId": ta, "data": map[string]any{"v": 2}})
	b1 = ts.create("/configs", map[string]any{"name": "b1", "configTypeId": tb, "data": map[string]any{"v": 3}})
	return a1, a2, b1
}

func TestServices_CreateValidatesEveryFieldAndStoresNothingOnError(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a1, a2, _ := configFixture(ts)
	ts.refusesCreates(t, "/services", []badCreate{
		{"missing name", map[string]any{}, "name"},
		{"empty name", map[string]any{"name": ""}, "name"},
		{"bad strategy", map[string]any{"name": "s", "terminatorStrategy": "roundrobin"}, "terminatorStrategy"},
		{"negative idle time", map[string]any{"name": "s", "maxIdleTimeMillis": -1}, "maxIdleTimeMillis"},
		{"fractional idle time", map[string]any{"name": "s", "maxIdleTimeMillis": 1.5}, "maxIdleTimeMillis"},
		{"encryption not a bool", map[string]any{"name": "s", "encryptionRequired": "yes"}, "encryptionRequired"},
		{"role not a string", map[string]any{"name": "s", "roleAttributes": []any{1}}, "roleAttributes"},
		{"empty config id", map[string]any{"name": "s", "configs": []string{""}}, "configs[0]"},
		{"unknown config", map[string]any{"name": "s", "configs": []string{a1, "nope"}}, "configs[1]"},
		{"two configs of one type", map[string]any{"name": "s", "configs": []string{a1, a2}}, "configs[1]"},
		{"same config twice", map[string]any{"name": "s", "configs": []string{a1, a1}}, "configs[1]"},
	})
	ts.create("/services", map[string]any{"name": "same"})
	st, out := ts.do(http.MethodPost, mgmt("/services"), map[string]any{"name": "same"})
	wantError(t, st, out, 409, "CONFLICT", "name")
}

func TestServices_DefaultsPatchPutAndReadOnlyEncryption(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a1, _, b1 := configFixture(ts)
	id := ts.create("/services", map[string]any{"name": "web", "encryptionRequired": true, "configs": []string{a1, b1},
		"roleAttributes": []string{"web"}, "maxIdleTimeMillis": 5000, "tags": map[string]any{"k": "v"}})
	got := ts.get("/services/" + id)
	if got["terminatorStrategy"] != "smartrouting" || got["encryptionRequired"] != true || got["maxIdleTimeMillis"].(float64) != 5000 ||
		len(got["configs"].([]any)) != 2 || got["tags"].(map[string]any)["k"] != "v" {
		t.Fatalf("view: %v", got)
	}
	if cfg := got["config"].(map[string]any); cfg["A"].(map[string]any)["v"].(float64) != 1 || cfg["B"].(map[string]any)["v"].(float64) != 3 {
		t.Fatalf("config by type name: %v", got["config"])
	}
	for _, rel := range []string{"configs", "terminators", "service-policies", "identities"} {
		if got["_links"].(map[string]any)[rel] == nil {
			t.Fatalf("link %s missing: %v", rel, got["_links"])
		}
	}

	st, out := ts.do(http.MethodPatch, mgmt("/services/"+id), map[string]any{"encryptionRequired": false})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "encryptionRequired")
	st, out = ts.do(http.MethodPut, mgmt("/services/"+id), map[string]any{"name": "web", "encryptionRequired": false})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "encryptionRequired")
	st, out = ts.do(http.MethodPatch, mgmt("/services/"+id), map[string]any{"terminatorStrategy": "first"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "terminatorStrategy")

	if st, out := ts.do(http.MethodPatch, mgmt("/services/"+id), map[string]any{"terminatorStrategy": "weighted", "encryptionRequired": true}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	got = ts.get("/services/" + id)
	if got["terminatorStrategy"] != "weighted" || got["name"] != "web" || len(got["configs"].([]any)) != 2 || got["maxIdleTimeMillis"].(float64) != 5000 {
		t.Fatalf("after patch: %v", got)
	}
	// PUT resets what it does not carry, but encryptionRequired stays as created.
	if st, out := ts.do(http.MethodPut, mgmt("/services/"+id), map[string]any{"name": "web2"}); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	got = ts.get("/services/" + id)
	if got["name"] != "web2" || got["encryptionRequired"] != true || got["terminatorStrategy"] != "smartrouting" ||
		len(got["configs"].([]any)) != 0 || len(got["roleAttributes"].([]any)) != 0 || got["maxIdleTimeMillis"].(float64) != 0 || len(got["tags"].(map[string]any)) != 0 {
		t.Fatalf("after put: %v", got)
	}
	st, out = ts.do(http.MethodPut, mgmt("/services/"+id), map[string]any{"roleAttributes": []string{"x"}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "name")
	st, out = ts.do(http.MethodPatch, mgmt("/services/nope"), map[string]any{"name": "x"})
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestServices_ConfigRelationsAndConfigInUseIsReferenced(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a1, a2, b1 := configFixture(ts)
	s1 := ts.create("/services", map[string]any{"name": "s1", "configs": []string{b1, a1}})
	ts.create("/services", map[string]any{"name": "s2", "configs": []string{a1}})

	data, total := ts.list("/services/" + s1 + "/configs")
	if total != 2 || data[0].(map[string]any)["id"] != b1 || data[1].(map[string]any)["id"] != a1 {
		t.Fatalf("configs of s1 in the service's order: %v", data)
	}
	data, total = ts.list("/configs/" + a1 + "/services")
	if total != 2 || data[0].(map[string]any)["name"] != "s1" || data[1].(map[string]any)["name"] != "s2" {
		t.Fatalf("services of a1: %v", data)
	}
	if _, total := ts.list("/configs/" + a2 + "/services"); total != 0 {
		t.Fatalf("a2 is used by no service, got %d", total)
	}

	st, out := ts.do(http.MethodDelete, mgmt("/configs/"+b1), nil)
	wantError(t, st, out, 409, "REFERENCED", "")
	// Swapping a1 for a2 (same type) frees a1 of s1; b1 goes away too.
	if st, out := ts.do(http.MethodPatch, mgmt("/services/"+s1), map[string]any{"configs": []string{a2}}); st != 200 {
		t.Fatalf("patch configs: %d %v", st, out)
	}
	ts.mustDelete("/configs/" + b1)
	if _, total := ts.list("/configs/" + a1 + "/services"); total != 1 {
		t.Fatalf("a1 should be left with s2, got %d", total)
	}
	st, out = ts.do(http.MethodPatch, mgmt("/services/"+s1), map[string]any{"configs": []string{a2, a1}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "configs[1]")
	st, out = ts.do(http.MethodGet, mgmt("/configs/nope/services"), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestServices_ListTakesRoleFilterAndFilter(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ts.create("/services", map[string]any{"name": "web-1", "roleAttributes": []string{"web", "eu"}})
	ts.create("/services", map[string]any{"name": "web-2", "roleAttributes": []string{"web"}, "terminatorStrategy": "random"})
	ts.create("/services", map[string]any{"name": "db-1", "roleAttributes": []string{"db", "eu"}})
	data, total := ts.list("/services?roleFilter=%23web&roleFilter=%23eu")
	if total != 1 || data[0].(map[string]any)["name"] != "web-1" {
		t.Fatalf("AllOf #web #eu: %v", data)
	}
	if _, total := ts.list("/services?roleFilter=%23web&roleFilter=%23eu&roleSemantic=AnyOf"); total != 3 {
		t.Fatalf("AnyOf #web #eu: %d", total)
	}
	if _, total := ts.list("/services?filter=" + url.QueryEscape(`terminatorStrategy = "random"`)); total != 1 {
		t.Fatalf("filter by strategy: %d", total)
	}
	st, out := ts.do(http.MethodGet, mgmt("/services?roleFilter=bad"), nil)
	wantError(t, st, out, 400, "INVALID_FILTER", "")
}
