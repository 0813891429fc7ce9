package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var enrollTokenRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// checkRouterEnrollment checks the one-time enrollment a router view shows.
func checkRouterEnrollment(t *testing.T, ts *testServer, v map[string]any) {
	t.Helper()
	tok, _ := v["enrollmentToken"].(string)
	if !enrollTokenRE.MatchString(tok) {
		t.Fatalf("enrollmentToken %q is not a UUID", tok)
	}
	c := authnClaims(t, v["enrollmentJwt"].(string))
	if c["em"] != "erott" || c["sub"] != v["id"] || c["jti"] != tok || c["iss"] != ts.base {
		t.Fatalf("enrollment JWT claims %v for router %v", c, v["id"])
	}
	if v["enrollmentCreatedAt"] == nil || v["enrollmentExpiresAt"] == nil || v["isVerified"] != false || v["isOnline"] != false {
		t.Fatalf("enrollment state: %v", v)
	}
}

func TestEdgeRouters_CreateGetPatchPutDelete(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/edge-routers", map[string]any{"name": "er1", "cost": 7, "disabled": true, "isTunnelerEnabled": true,
		"noTraversal": true, "roleAttributes": []string{"east"}, "appData": map[string]any{"k": "v"}, "tags": map[string]any{"t": "1"}})
	v := ts.get("/edge-routers/" + id)
	for _, f := range []string{"_links", "id", "createdAt", "updatedAt", "tags", "name", "cost", "enrollmentCreatedAt", "enrollmentExpiresAt",
		"enrollmentJwt", "enrollmentToken", "fingerprint", "hostname", "isOnline", "isTunnelerEnabled", "isVerified", "noTraversal",
		"roleAttributes", "supportedProtocols", "disabled", "appData", "syncStatus"} {
		if _, ok := v[f]; !ok {
			t.Errorf("view lacks %s", f)
		}
	}
	if v["name"] != "er1" || v["cost"].(float64) != 7 || v["disabled"] != true || v["isTunnelerEnabled"] != true || v["noTraversal"] != true ||
		v["appData"].(map[string]any)["k"] != "v" || v["tags"].(map[string]any)["t"] != "1" || v["fingerprint"] != nil {
		t.Fatalf("view: %v", v)
	}
	checkRouterEnrollment(t, ts, v)
	if _, ok := v["certPem"]; ok {
		t.Fatal("the view shows the certificate PEM")
	}

	if st, out := ts.do(http.MethodPatch, mgmt("/edge-routers/"+id), map[string]any{"cost": 9, "roleAttributes": []string{"west"}}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	v2 := ts.get("/edge-routers/" + id)
	if v2["cost"].(float64) != 9 || v2["roleAttributes"].([]any)[0] != "west" || v2["name"] != "er1" || v2["disabled"] != true ||
		v2["enrollmentToken"] != v["enrollmentToken"] {
		t.Fatalf("after patch: %v", v2)
	}
	if st, out := ts.do(http.MethodPut, mgmt("/edge-routers/"+id), map[string]any{"name": "er1b", "cost": nil}); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	v3 := ts.get("/edge-routers/" + id)
	if v3["name"] != "er1b" || v3["cost"].(float64) != 0 || v3["disabled"] != false || v3["isTunnelerEnabled"] != false ||
		len(v3["roleAttributes"].([]any)) != 0 || len(v3["appData"].(map[string]any)) != 0 || len(v3["tags"].(map[string]any)) != 0 ||
		v3["enrollmentJwt"] != v["enrollmentJwt"] {
		t.Fatalf("after put: %v", v3)
	}
	ts.mustDelete("/edge-routers/" + id)
	ts.fails(http.MethodGet, mgmt("/edge-routers/"+id), nil, 404, "NOT_FOUND", "")
	for _, m := range []string{http.MethodPut, http.MethodPatch, http.MethodDelete} {
		ts.fails(m, mgmt("/edge-routers/nope"), map[string]any{"name": "x"}, 404, "NOT_FOUND", "")
	}
	ts.fails(http.MethodPost, mgmt("/edge-routers/nope/re-enroll"), nil, 404, "NOT_FOUND", "")
}

func TestEdgeRouters_ValidationAndConflictStoreNothing(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/edge-routers", map[string]any{"name": "taken"})
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing name", map[string]any{"cost": 1}, "name"},
		{"empty name", map[string]any{"name": ""}, "name"},
		{"cost too high", map[string]any{"name": "x", "cost": 65536}, "cost"},
		{"cost negative", map[string]any{"name": "x", "cost": -1}, "cost"},
		{"cost string", map[string]any{"name": "x", "cost": "1"}, "cost"},
		{"disabled string", map[string]any{"name": "x", "disabled": "yes"}, "disabled"},
		{"tunneler number", map[string]any{"name": "x", "isTunnelerEnabled": 1}, "isTunnelerEnabled"},
		{"noTraversal string", map[string]any{"name": "x", "noTraversal": "no"}, "noTraversal"},
		{"role not string", map[string]any{"name": "x", "roleAttributes": []any{1}}, "roleAttributes"},
		{"empty role", map[string]any{"name": "x", "roleAttributes": []any{""}}, "roleAttributes[0]"},
		{"appData array", map[string]any{"name": "x", "appData": []any{}}, "appData"},
		{"nested tag", map[string]any{"name": "x", "tags": map[string]any{"a": []any{}}}, "tags.a"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt("/edge-routers"), c.body)
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field) })
	}
	ts.fails(http.MethodPost, mgmt("/edge-routers"), map[string]any{"name": "taken"}, 409, "CONFLICT", "name")
	if _, n := ts.list("/edge-routers"); n != 1 {
		t.Fatalf("%d edge routers after bad creates, want 1", n)
	}
	ts.fails(http.MethodPut, mgmt("/edge-routers/"+id), map[string]any{"cost": 3}, 400, "COULD_NOT_VALIDATE", "name")
	ts.fails(http.MethodPatch, mgmt("/edge-routers/"+id), map[string]any{"cost": 70000}, 400, "COULD_NOT_VALIDATE", "cost")
	if v := ts.get("/edge-routers/" + id); v["cost"].(float64) != 0 {
		t.Fatalf("a rejected update changed the router: %v", v)
	}
}

func TestEdgeRouters_ReEnrollReplacesTheEnrollmentAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/edge-routers", map[string]any{"name": "er", "cost": 4, "roleAttributes": []string{"a"}})
	before := ts.get("/edge-routers/" + id)
	if st, out := ts.do(http.MethodPost, mgmt("/edge-routers/"+id+"/re-enroll"), nil); st != 200 {
		t.Fatalf("re-enroll: %d %v", st, out)
	}
	after := ts.get("/edge-routers/" + id)
	checkRouterEnrollment(t, ts, after)
	if after["enrollmentToken"] == before["enrollmentToken"] || after["enrollmentJwt"] == before["enrollmentJwt"] {
		t.Fatal("re-enroll kept the outstanding enrollment")
	}
	if after["name"] != "er" || after["cost"].(float64) != 4 || after["roleAttributes"].([]any)[0] != "a" || after["createdAt"] != before["createdAt"] {
		t.Fatalf("re-enroll changed other fields: %v", after)
	}
}

func TestEdgeRouters_ListFiltersByRoleAndField(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ts.create("/edge-routers", map[string]any{"name": "e1", "roleAttributes": []string{"east", "big"}, "cost": 1})
	ts.create("/edge-routers", map[string]any{"name": "e2", "roleAttributes": []string{"east"}, "cost": 2})
	w := ts.create("/edge-routers", map[string]any{"name": "w1", "roleAttributes": []string{"west"}, "isTunnelerEnabled": true})
	names := func(data []any) string {
		var l []string
		for _, d := range data {
			l = append(l, d.(map[string]any)["name"].(string))
		}
		return strings.Join(l, ",")
	}
	for _, c := range []struct{ q, want string }{
		{"", "e1,e2,w1"},
		{"?roleFilter=%23east", "e1,e2"},
		{"?roleFilter=%23east&roleFilter=%23big", "e1"},
		{"?roleFilter=%23big&roleFilter=%23west&roleSemantic=AnyOf", "e1,w1"},
		{"?roleFilter=%40" + w, "w1"},
		{"?filter=" + "cost%20%3E%201", "e2"},
		{"?filter=isTunnelerEnabled%20%3D%20true", "w1"},
		{"?filter=anyOf(roleAttributes)%20%3D%20%22east%22%20sort%20by%20name%20desc", "e2,e1"},
	} {
		data, total := ts.list("/edge-routers" + c.q)
		if got := names(data); got != c.want || total != len(data) {
			t.Errorf("%s: got %s (total %d), want %s", c.q, got, total, c.want)
		}
	}
	ts.fails(http.MethodGet, mgmt("/edge-routers?filter=nosuch%3D1"), nil, 400, "INVALID_FILTER", "")
}

func TestEdgeRouters_DeleteDropsPolicyReferencesToIt(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	er := ts.create("/edge-routers", map[string]any{"name": "er"})
	keep := ts.create("/edge-routers", map[string]any{"name": "keep"})
	p := ts.create("/edge-router-policies", map[string]any{"name": "erp", "semantic": "AnyOf",
		"edgeRouterRoles": []string{"@" + er, "@" + keep, "#x"}, "identityRoles": []string{"#all"}})
	if data, _ := ts.list("/edge-router-policies/" + p + "/edge-routers"); len(data) != 2 {
		t.Fatalf("policy selects %d routers, want 2", len(data))
	}
	ts.mustDelete("/edge-routers/" + er)
	roles := ts.get("/edge-router-policies/" + p)["edgeRouterRoles"].([]any)
	if len(roles) != 2 || roles[0] != "@"+keep || roles[1] != "#x" {
		t.Fatalf("policy roles after delete: %v", roles)
	}
}

func TestRouters_BothPathsServeTheSameRouters(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/transit-routers", map[string]any{"name": "r1", "cost": 12, "noTraversal": true, "tags": map[string]any{"a": true}})
	v := ts.get("/routers/" + id)
	for _, f := range []string{"_links", "id", "createdAt", "updatedAt", "tags", "cost", "disabled", "enrollmentCreatedAt", "enrollmentExpiresAt",
		"enrollmentJwt", "enrollmentToken", "fingerprint", "isOnline", "isVerified", "name", "noTraversal", "unverifiedCertPem", "unverifiedFingerprint"} {
		if _, ok := v[f]; !ok {
			t.Errorf("view lacks %s", f)
		}
	}
	if v["name"] != "r1" || v["cost"].(float64) != 12 || v["noTraversal"] != true || v["disabled"] != false {
		t.Fatalf("view: %v", v)
	}
	checkRouterEnrollment(t, ts, v)
	if _, n := ts.list("/transit-routers"); n != 1 {
		t.Fatalf("transit-routers lists %d", n)
	}
	if _, n := ts.list("/edge-routers"); n != 0 {
		t.Fatal("a transit router shows up as an edge router")
	}
	if st, out := ts.do(http.MethodPatch, mgmt("/transit-routers/"+id), map[string]any{"disabled": true}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	if v := ts.get("/routers/" + id); v["disabled"] != true || v["cost"].(float64) != 12 {
		t.Fatalf("after patch: %v", v)
	}
	if st, out := ts.do(http.MethodPut, mgmt("/routers/"+id), map[string]any{"name": "r2"}); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	if v := ts.get("/transit-routers/" + id); v["name"] != "r2" || v["cost"].(float64) != 0 || v["noTraversal"] != false || v["enrollmentToken"] == nil {
		t.Fatalf("after put: %v", v)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{{map[string]any{}, "name"}, {map[string]any{"name": "x", "cost": 65536}, "cost"}, {map[string]any{"name": "x", "disabled": 1}, "disabled"}} {
		ts.fails(http.MethodPost, mgmt("/routers"), c.body, 400, "COULD_NOT_VALIDATE", c.field)
	}
	ts.fails(http.MethodPost, mgmt("/routers"), map[string]any{"name": "r2"}, 409, "CONFLICT", "name")
	if _, n := ts.list("/routers?filter=name%20%3D%20%22r2%22"); n != 1 {
		t.Fatalf("bad creates stored routers: %d", n)
	}
	ts.mustDelete("/transit-routers/" + id)
	ts.fails(http.MethodGet, mgmt("/routers/"+id), nil, 404, "NOT_FOUND", "")
}
