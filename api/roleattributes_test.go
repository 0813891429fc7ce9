package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// attrList joins the strings of a list answer.
func attrList(data []any) string {
	var l []string
	for _, d := range data {
		l = append(l, d.(string))
	}
	return strings.Join(l, ",")
}

func TestRoleAttributes_ListTheAttributesInUsePerKind(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	er := ts.create("/edge-routers", map[string]any{"name": "e1", "roleAttributes": []string{"west", "east"}})
	ts.create("/edge-routers", map[string]any{"name": "e2", "roleAttributes": []string{"east", "edge"}})
	ts.create("/identities", map[string]any{"name": "i1", "type": "User", "isAdmin": false, "roleAttributes": []string{"dev"}})
	ts.create("/services", map[string]any{"name": "s1", "roleAttributes": []string{"web"}})
	ts.create("/posture-checks", pcBody("MFA", "m", "roleAttributes", []string{"strict"}))
	for _, c := range []struct{ path, want string }{
		{"/edge-router-role-attributes", "east,edge,west"},
		{"/identity-role-attributes", "dev"},
		{"/service-role-attributes", "web"},
		{"/posture-check-role-attributes", "strict"},
	} {
		data, total := ts.list(c.path)
		if attrList(data) != c.want || total != strings.Count(c.want, ",")+1 {
			t.Errorf("%s: %v (total %d), want %s", c.path, data, total, c.want)
		}
	}

	q := func(filter string) string { return "/edge-router-role-attributes?filter=" + url.QueryEscape(filter) }
	for _, c := range []struct{ path, want string }{
		{q(`id contains "e"`), "east,edge,west"},
		{q(`name = "edge"`), "edge"},
		{q(`id in ["west", "nope"]`), "west"},
		{q(`id icontains "ST" sort by id desc`), "west,east"},
		{"/edge-router-role-attributes?limit=1&offset=1", "edge"},
	} {
		data, _ := ts.list(c.path)
		if attrList(data) != c.want {
			t.Errorf("%s: %v, want %s", c.path, data, c.want)
		}
	}
	st, out := ts.do(http.MethodGet, mgmt("/edge-router-role-attributes?limit=1&offset=1"), nil)
	pg := out["meta"].(map[string]any)["pagination"].(map[string]any)
	if st != 200 || pg["totalCount"].(float64) != 3 || pg["limit"].(float64) != 1 || pg["offset"].(float64) != 1 {
		t.Fatalf("pagination: %d %v", st, pg)
	}
	st, out = ts.do(http.MethodGet, mgmt("/edge-router-role-attributes?filter="+url.QueryEscape(`cost = 1`)), nil)
	wantError(t, st, out, 400, "INVALID_FILTER", "")
	st, out = ts.do(http.MethodGet, mgmt("/edge-router-role-attributes?roleFilter=%23x"), nil)
	wantError(t, st, out, 400, "INVALID_FILTER", "")

	// An attribute leaves the list when its last holder drops it.
	ts.mustDelete("/edge-routers/" + er)
	if data, _ := ts.list("/edge-router-role-attributes"); attrList(data) != "east,edge" {
		t.Fatalf("after delete: %v", data)
	}
}

func TestRouters_DeleteRemovesTheirTerminators(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	svc := ts.create("/services", map[string]any{"name": "svc"})
	er := ts.create("/edge-routers", map[string]any{"name": "er"})
	tr := ts.create("/transit-routers", map[string]any{"name": "tr"})
	other := ts.create("/edge-routers", map[string]any{"name": "other"})
	keep := ts.create("/terminators", map[string]any{"service": svc, "router": other, "binding": "transport", "address": "tcp:10.0.0.2:80"})
	for _, r := range []string{er, tr} {
		ts.create("/terminators", map[string]any{"service": svc, "router": r, "binding": "transport", "address": "tcp:10.0.0.1:80"})
	}
	ts.mustDelete("/edge-routers/" + er)
	ts.mustDelete("/transit-routers/" + tr)
	data, total := ts.list("/terminators")
	if total != 1 || data[0].(map[string]any)["id"] != keep {
		t.Fatalf("terminators left: %v", data)
	}
}
