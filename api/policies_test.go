package api_test

import (
	"net/http"
	"sort"
	"testing"
)

func names(data []any) []string {
	var out []string
	for _, d := range data {
		out = append(out, d.(map[string]any)["name"].(string))
	}
	sort.Strings(out)
	return out
}

func TestServicePolicy_SelectsIdentitiesByAttributeAndFollowsChanges(t *testing.T) {
	ts := newTestServer(t)
	a := ts.create("/identities", map[string]any{"name": "alice", "type": "User", "isAdmin": false, "roleAttributes": []string{"ops", "eu"}})
	ts.create("/identities", map[string]any{"name": "bob", "type": "User", "isAdmin": false, "roleAttributes": []string{"ops"}})
	c := ts.create("/identities", map[string]any{"name": "carol", "type": "User", "isAdmin": false})
	all := ts.create("/service-policies", map[string]any{"name": "allof", "type": "Dial", "semantic": "AllOf", "identityRoles": []string{"#ops", "#eu"}})
	anyp := ts.create("/service-policies", map[string]any{"name": "anyof", "type": "Bind", "semantic": "AnyOf", "identityRoles": []string{"#eu", "@" + c}})

	if got, _ := ts.list("/service-policies/" + all + "/identities"); len(got) != 1 || names(got)[0] != "alice" {
		t.Fatalf("AllOf selects %v, want [alice]", names(got))
	}
	if got, _ := ts.list("/service-policies/" + anyp + "/identities"); len(got) != 2 || names(got)[0] != "alice" || names(got)[1] != "carol" {
		t.Fatalf("AnyOf with @id selects %v, want [alice carol]", names(got))
	}
	// alice loses eu: she leaves both policies (carol stays in anyof by @id).
	ts.do(http.MethodPatch, mgmt("/identities/"+a), map[string]any{"roleAttributes": []string{"ops"}})
	if got, _ := ts.list("/service-policies/" + all + "/identities"); len(got) != 0 {
		t.Fatalf("after the attribute change AllOf selects %v", names(got))
	}
	if got, _ := ts.list("/identities/" + a + "/service-policies"); len(got) != 0 {
		t.Fatalf("alice is still in policies %v", names(got))
	}
	if got, _ := ts.list("/identities/" + c + "/service-policies"); len(got) != 1 || names(got)[0] != "anyof" {
		t.Fatalf("carol's policies %v, want [anyof]", names(got))
	}
	// Deleting carol removes her from the resolved set.
	ts.do(http.MethodDelete, mgmt("/identities/"+c), nil)
	if got, _ := ts.list("/service-policies/" + anyp + "/identities"); len(got) != 0 {
		t.Fatalf("after delete anyof selects %v", names(got))
	}
}

func TestServicePolicy_ValidatesRolesSemanticAndType(t *testing.T) {
	ts := newTestServer(t)
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no semantic", map[string]any{"name": "p", "type": "Dial"}, "semantic"},
		{"bad semantic", map[string]any{"name": "p", "type": "Dial", "semantic": "Some"}, "semantic"},
		{"no type", map[string]any{"name": "p", "semantic": "AllOf"}, "type"},
		{"bad type", map[string]any{"name": "p", "type": "Host", "semantic": "AllOf"}, "type"},
		{"malformed role", map[string]any{"name": "p", "type": "Dial", "semantic": "AllOf", "identityRoles": []string{"#ok", "plain"}}, "identityRoles[1]"},
		{"missing @id", map[string]any{"name": "p", "type": "Dial", "semantic": "AllOf", "serviceRoles": []string{"@nope"}}, "serviceRoles[0]"},
		{"no name", map[string]any{"type": "Dial", "semantic": "AllOf"}, "name"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt("/service-policies"), c.body)
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field) })
	}
	if _, total := ts.list("/service-policies"); total != 0 {
		t.Fatalf("%d policies stored by bad requests", total)
	}
}

func TestPolicies_DisplayPutPatchAndDelete(t *testing.T) {
	ts := newTestServer(t)
	i := ts.create("/identities", map[string]any{"name": "dev", "type": "Device", "isAdmin": false})
	id := ts.create("/edge-router-policies", map[string]any{"name": "erp", "semantic": "AnyOf", "identityRoles": []string{"#all", "#x", "@" + i}, "edgeRouterRoles": []string{"#all"}})
	got := ts.get("/edge-router-policies/" + id)
	disp := got["identityRolesDisplay"].([]any)
	if len(disp) != 3 || disp[0].(map[string]any)["name"] != "all" || disp[1].(map[string]any)["name"] != "x" || disp[2].(map[string]any)["name"] != "dev" {
		t.Fatalf("display %v", disp)
	}
	if got["isSystem"] != false {
		t.Fatalf("isSystem %v", got["isSystem"])
	}
	if st, out := ts.do(http.MethodPatch, mgmt("/edge-router-policies/"+id), map[string]any{"name": "erp2"}); st != 200 {
		t.Fatalf("patch %d %v", st, out)
	}
	if got := ts.get("/edge-router-policies/" + id); got["name"] != "erp2" || len(got["identityRoles"].([]any)) != 3 {
		t.Fatalf("patch changed more than the name: %v", got)
	}
	if st, out := ts.do(http.MethodPut, mgmt("/edge-router-policies/"+id), map[string]any{"name": "erp3", "semantic": "AllOf"}); st != 200 {
		t.Fatalf("put %d %v", st, out)
	}
	if got := ts.get("/edge-router-policies/" + id); len(got["identityRoles"].([]any)) != 0 || got["semantic"] != "AllOf" {
		t.Fatalf("put kept old roles: %v", got)
	}
	if st, _ := ts.do(http.MethodDelete, mgmt("/edge-router-policies/"+id), nil); st != 200 {
		t.Fatalf("delete %d", st)
	}
	st, out := ts.do(http.MethodGet, mgmt("/edge-router-policies/"+id), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}
