package api_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// causeValue returns error.cause.value of an error response.
func causeValue(t *testing.T, out map[string]any) any {
	t.Helper()
	e, _ := out["error"].(map[string]any)
	c, _ := e["cause"].(map[string]any)
	if c == nil {
		t.Fatalf("no cause: %v", out)
	}
	return c["value"]
}

// Conventions §3: a field that fails validation names the field and the value sent.
func TestR2Review_TypeErrorsShowTheValueSent(t *testing.T) {
	ts := newTestServer(t)
	cases := []struct {
		path string
		body string
		fld  string
		want any
	}{
		{"/services", `{"name":"s","encryptionRequired":"x"}`, "encryptionRequired", "x"},
		{"/edge-routers", `{"name":"e","isTunnelerEnabled":"yes"}`, "isTunnelerEnabled", "yes"},
		{"/edge-router-policies", `{"name":"p","semantic":"AnyOf","identityRoles":"#a"}`, "identityRoles", "#a"},
		{"/config-types", `{"name":"ct","schema":5}`, "schema", float64(5)},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt(c.path), c.body)
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", c.fld)
		if got := causeValue(t, out); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s %s: cause.value %#v, want %#v", c.path, c.body, got, c.want)
		}
	}
	ct := ts.create("/config-types", map[string]any{"name": "ct"})
	st, out := ts.do(http.MethodPost, mgmt("/configs"), map[string]any{"name": "c", "configTypeId": ct, "data": []any{1}})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "data")
	if got := causeValue(t, out); !reflect.DeepEqual(got, []any{float64(1)}) {
		t.Fatalf("data cause.value %#v", got)
	}
	if _, n := ts.list("/configs"); n != 0 {
		t.Fatalf("a refused config was stored")
	}
}

// Posture check: the spec's narrative DOMAIN sample carries the names in
// macAddresses, and the PROCESS_MULTI table names the process OS field "os".
func TestR2Review_PostureCheckSpellingsOfTheSpec(t *testing.T) {
	ts := newTestServer(t)
	id := ts.create("/posture-checks", map[string]any{"name": "d", "typeId": "DOMAIN", "macAddresses": []string{"corp.example"}})
	if v := ts.get("/posture-checks/" + id); !reflect.DeepEqual(v["domains"], []any{"corp.example"}) || v["macAddresses"] != nil {
		t.Fatalf("domain check from the narrative sample: %v", v)
	}
	st, out := ts.do(http.MethodPatch, mgmt("/posture-checks/"+id), map[string]any{"typeId": "DOMAIN", "macAddresses": []string{"b.example"}})
	if st != http.StatusOK {
		t.Fatalf("patch: %d %v", st, out)
	}
	if v := ts.get("/posture-checks/" + id); !reflect.DeepEqual(v["domains"], []any{"b.example"}) || v["version"] != float64(2) {
		t.Fatalf("after patch: %v", v)
	}
	st, out = ts.do(http.MethodPost, mgmt("/posture-checks"), map[string]any{"name": "d2", "typeId": "DOMAIN", "macAddresses": []string{}})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "domains")

	h := strings.Repeat("a", 64)
	id = ts.create("/posture-checks", map[string]any{"name": "pm", "typeId": "PROCESS_MULTI", "semantic": "AllOf",
		"processes": []any{map[string]any{"os": "Windows", "path": `C:\a.exe`, "hashes": []string{h}}}})
	p := ts.get("/posture-checks/" + id)["processes"].([]any)[0].(map[string]any)
	if p["os"] != "WINDOWS" || p["osType"] != "WINDOWS" || p["path"] != `C:\a.exe` {
		t.Fatalf("process view: %v", p)
	}
}

// Conventions §6: @id selects one entity. Deleting a service drops its @id
// entries from policies (as for edge routers and posture checks), and an
// @id entry whose entity is gone (an identity here) does not make every later
// update of the policy a 400: only entries the update adds must exist.
func TestR2Review_DeletedEntitiesDoNotBlockPolicyUpdates(t *testing.T) {
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
