package api_test

import (
	"net/http"
	"reflect"
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	ts.mustDelete("/edge-router-policies/" + id)
	st, out := ts.do(http.MethodGet, mgmt("/edge-router-policies/"+id), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

// Conventions §6: @id selects one entity. Deleting a service drops its @id
// entries from policies (as for edge routers and posture checks), and an
// @id entry whose entity is gone (an identity here) does not make every later
// update of the policy a 400: only entries the update adds must exist.
func TestPolicies_DeletedEntitiesDoNotBlockPolicyUpdates(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	svc := ts.create("/services", map[string]any{"name": "s"})
	keep := ts.create("/services", map[string]any{"name": "keep"})
	sp := ts.create("/service-policies", map[string]any{"name": "sp", "type": "Dial", "semantic": "AnyOf",
		"serviceRoles": []string{"@" + svc, "@" + keep, "#web"}})
	serp := ts.create("/service-edge-router-policies", map[string]any{"name": "serp", "semantic": "AllOf",
		"serviceRoles": []string{"@" + svc}})
	if st, out := ts.do(http.MethodDelete, mgmt("/services/"+svc), nil); st != http.StatusOK {
		t.Fatalf("delete service: %d %v", st, out)
	}
	v := ts.get("/service-policies/" + sp)
	if !reflect.DeepEqual(v["serviceRoles"], []any{"@" + keep, "#web"}) || len(v["serviceRolesDisplay"].([]any)) != 2 {
		t.Fatalf("service policy after the service's delete: %v", v)
	}
	if v := ts.get("/service-edge-router-policies/" + serp); len(v["serviceRoles"].([]any)) != 0 {
		t.Fatalf("serp after the service's delete: %v", v)
	}
	if st, out := ts.do(http.MethodPatch, mgmt("/service-policies/"+sp), map[string]any{"name": "sp2"}); st != http.StatusOK {
		t.Fatalf("patch: %d %v", st, out)
	}

	id := ts.create("/identities", map[string]any{"name": "i", "type": "User", "isAdmin": false})
	erp := ts.create("/edge-router-policies", map[string]any{"name": "erp", "semantic": "AnyOf", "identityRoles": []string{"@" + id}})
	if st, out := ts.do(http.MethodDelete, mgmt("/identities/"+id), nil); st != http.StatusOK {
		t.Fatalf("delete identity: %d %v", st, out)
	}
	if v := ts.get("/edge-router-policies/" + erp); len(v["identityRoles"].([]any)) != 0 {
		t.Fatalf("edge router policy after the identity's delete: %v", v)
	}
	if st, out := ts.do(http.MethodPatch, mgmt("/edge-router-policies/"+erp), map[string]any{"name": "erp2"}); st != http.StatusOK {
		t.Fatalf("patch of a policy naming a deleted identity: %d %v", st, out)
	}
	// A new @id entry must still name an existing entity.
	st, out := ts.do(http.MethodPatch, mgmt("/edge-router-policies/"+erp), map[string]any{"identityRoles": []string{"@nope"}})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "identityRoles[0]")
	if v := ts.get("/edge-router-policies/" + erp); v["name"] != "erp2" {
		t.Fatalf("after the refused patch: %v", v)
	}
}
