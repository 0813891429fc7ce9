package api_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const (
	pcSHA256 = "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"
	pcSHA1   = "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709"
)

// pcObj builds a JSON object from key, value pairs.
func pcObj(kv ...any) map[string]any {
	b := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		b[kv[i].(string)] = kv[i+1]
	}
	return b
}

// pcBody builds a posture check body of typeId with a name and the given fields.
func pcBody(typeID, name string, kv ...any) map[string]any {
	return pcObj(append([]any{"typeId", typeID, "name", name}, kv...)...)
}

func TestPostureChecks_CreateEachTypeAndShowItsFields(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cases := []struct {
		body  map[string]any
		check func(v map[string]any) bool
	}{
		{pcBody("OS", "os", "operatingSystems", []any{map[string]any{"type": "WINDOWS", "versions": []string{">=10.0.19041", "<11 || >=12"}},
			map[string]any{"type": "Windows Server"}, map[string]any{"type": "macOS", "versions": []string{"~13.1"}}}),
			func(v map[string]any) bool {
				os := v["operatingSystems"].([]any)
				return len(os) == 3 && os[0].(map[string]any)["type"] == "WINDOWS" && len(os[0].(map[string]any)["versions"].([]any)) == 2 &&
					os[1].(map[string]any)["type"] == "WINDOWS_SERVER" && len(os[1].(map[string]any)["versions"].([]any)) == 0 &&
					os[2].(map[string]any)["type"] == "MACOS"
			}},
		{pcBody("MAC", "mac", "macAddresses", []string{"aa-bb-cc-dd-ee-ff", "01:23:45:67:89:AB"}),
			func(v map[string]any) bool {
				m := v["macAddresses"].([]any)
				return len(m) == 2 && m[0] == "AA-BB-CC-DD-EE-FF" && m[1] == "01-23-45-67-89-AB"
			}},
		{pcBody("MFA", "mfa", "timeoutSeconds", 300, "promptOnWake", true),
			func(v map[string]any) bool {
				return v["timeoutSeconds"].(float64) == 300 && v["promptOnWake"] == true && v["promptOnUnlock"] == false
			}},
		{pcBody("PROCESS", "proc", "process", map[string]any{"osType": "WINDOWS", "path": `C:\a.exe`, "hashes": []string{pcSHA256}, "signerFingerprints": []string{pcSHA1}}),
			func(v map[string]any) bool {
				p := v["process"].(map[string]any)
				return p["osType"] == "WINDOWS" && p["path"] == `C:\a.exe` && p["hashes"].([]any)[0] == strings.ToLower(pcSHA256) &&
					p["signerFingerprints"].([]any)[0] == strings.ToLower(pcSHA1)
			}},
		{pcBody("PROCESS_MULTI", "multi", "semantic", "OneOf", "processes", []any{map[string]any{"osType": "LINUX", "path": "/bin/a"}, map[string]any{"path": "/bin/b"}}),
			func(v map[string]any) bool {
				ps := v["processes"].([]any)
				return v["semantic"] == "OneOf" && len(ps) == 2 && ps[0].(map[string]any)["osType"] == "LINUX" && ps[1].(map[string]any)["path"] == "/bin/b" &&
					len(ps[1].(map[string]any)["hashes"].([]any)) == 0
			}},
		{pcBody("DOMAIN", "dom", "domains", []string{"corp.example"}),
			func(v map[string]any) bool { return v["domains"].([]any)[0] == "corp.example" }},
		{pcBody("postureCheckDomainCreate", "dom2", "domains", []string{"x.example"}, "roleAttributes", []string{"r"}, "tags", map[string]any{"k": 1}),
			func(v map[string]any) bool {
				return v["typeId"] == "DOMAIN" && v["roleAttributes"].([]any)[0] == "r" && v["tags"].(map[string]any)["k"].(float64) == 1
			}},
	}
	for _, c := range cases {
		id := ts.create("/posture-checks", c.body)
		v := ts.get("/posture-checks/" + id)
		for _, f := range []string{"_links", "createdAt", "id", "name", "roleAttributes", "tags", "typeId", "updatedAt", "version"} {
			if _, ok := v[f]; !ok {
				t.Errorf("%s: view lacks %s", c.body["name"], f)
			}
		}
		if v["version"].(float64) != 1 || v["name"] != c.body["name"] || !c.check(v) {
			t.Errorf("%s: view %v", c.body["name"], v)
		}
	}
	if _, n := ts.list("/posture-checks"); n != len(cases) {
		t.Fatalf("%d posture checks listed, want %d", n, len(cases))
	}
}

func TestPostureChecks_EveryRuleRejectsABadValueAndStoresNothing(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ts.create("/posture-checks", pcBody("MFA", "taken"))
	osl := func(os ...any) []any { return os }
	proc := func(kv ...any) map[string]any { return pcBody("PROCESS", "p", "process", pcObj(kv...)) }
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no typeId", map[string]any{"name": "x", "domains": []string{"a"}}, "typeId"},
		{"unknown typeId", pcBody("FACE", "x"), "typeId"},
		{"typeId number", map[string]any{"typeId": 1, "name": "x"}, "typeId"},
		{"no name", map[string]any{"typeId": "MFA"}, "name"},
		{"role not string", pcBody("MFA", "x", "roleAttributes", []any{true}), "roleAttributes"},
		{"OS missing list", pcBody("OS", "x"), "operatingSystems"},
		{"OS empty list", pcBody("OS", "x", "operatingSystems", []any{}), "operatingSystems"},
		{"OS no type", pcBody("OS", "x", "operatingSystems", osl(map[string]any{"versions": []string{}})), "operatingSystems[0].type"},
		{"OS bad type", pcBody("OS", "x", "operatingSystems", osl(map[string]any{"type": "LINUX"}, map[string]any{"type": "BEOS"})), "operatingSystems[1].type"},
		{"OS bad version", pcBody("OS", "x", "operatingSystems", osl(map[string]any{"type": "LINUX", "versions": []string{">=1.0", "not a version"}})), "operatingSystems[0].versions[1]"},
		{"OS version number", pcBody("OS", "x", "operatingSystems", osl(map[string]any{"type": "LINUX", "versions": []any{5}})), "operatingSystems[0].versions[0]"},
		{"MAC empty", pcBody("MAC", "x", "macAddresses", []string{}), "macAddresses"},
		{"MAC bad", pcBody("MAC", "x", "macAddresses", []string{"AA-BB-CC-DD-EE-FF", "AA-BB-CC-DD-EE"}), "macAddresses[1]"},
		{"MAC mixed separators", pcBody("MAC", "x", "macAddresses", []string{"AA-BB:CC-DD-EE-FF"}), "macAddresses[0]"},
		{"MAC not hex", pcBody("MAC", "x", "macAddresses", []string{"GG-BB-CC-DD-EE-FF"}), "macAddresses[0]"},
		{"MFA timeout below -1", pcBody("MFA", "x", "timeoutSeconds", -2), "timeoutSeconds"},
		{"MFA timeout fraction", pcBody("MFA", "x", "timeoutSeconds", 1.5), "timeoutSeconds"},
		{"MFA wake string", pcBody("MFA", "x", "promptOnWake", "yes"), "promptOnWake"},
		{"PROCESS missing", pcBody("PROCESS", "x"), "process"},
		{"PROCESS no path", proc("osType", "LINUX"), "process.path"},
		{"PROCESS bad os", proc("path", "/a", "osType", "PLAN9"), "process.osType"},
		{"PROCESS short hash", proc("path", "/a", "hashes", []string{"abc"}), "process.hashes[0]"},
		{"PROCESS bad fingerprint", proc("path", "/a", "signerFingerprints", []string{pcSHA256}), "process.signerFingerprints[0]"},
		{"MULTI no semantic", pcBody("PROCESS_MULTI", "x", "processes", []any{map[string]any{"path": "/a"}}), "semantic"},
		{"MULTI bad semantic", pcBody("PROCESS_MULTI", "x", "semantic", "SomeOf", "processes", []any{map[string]any{"path": "/a"}}), "semantic"},
		{"MULTI empty", pcBody("PROCESS_MULTI", "x", "semantic", "AllOf", "processes", []any{}), "processes"},
		{"MULTI bad hash", pcBody("PROCESS_MULTI", "x", "semantic", "AllOf", "processes", []any{map[string]any{"path": "/a"}, map[string]any{"path": "/b", "hashes": []string{pcSHA1}}}), "processes[1].hashes[0]"},
		{"DOMAIN missing", pcBody("DOMAIN", "x"), "domains"},
		{"DOMAIN empty", pcBody("DOMAIN", "x", "domains", []string{}), "domains"},
		{"DOMAIN blank entry", pcBody("DOMAIN", "x", "domains", []string{"a", ""}), "domains[1]"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt("/posture-checks"), c.body)
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field) })
	}
	ts.fails(http.MethodPost, mgmt("/posture-checks"), pcBody("MFA", "taken"), 409, "CONFLICT", "name")
	if _, n := ts.list("/posture-checks"); n != 1 {
		t.Fatalf("%d posture checks after bad creates, want 1", n)
	}
}

func TestPostureChecks_UpdatesRaiseTheVersionAndKeepTheType(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/posture-checks", pcBody("MFA", "mfa", "timeoutSeconds", 60, "promptOnUnlock", true, "roleAttributes", []string{"a"}))
	ts.fails(http.MethodPatch, mgmt("/posture-checks/"+id), map[string]any{"promptOnWake": true}, 400, "COULD_NOT_VALIDATE", "typeId")
	ts.fails(http.MethodPatch, mgmt("/posture-checks/"+id), map[string]any{"typeId": "DOMAIN", "domains": []string{"a"}}, 400, "COULD_NOT_VALIDATE", "typeId")
	ts.fails(http.MethodPut, mgmt("/posture-checks/"+id), pcBody("OS", "mfa"), 400, "COULD_NOT_VALIDATE", "typeId")
	ts.fails(http.MethodPatch, mgmt("/posture-checks/"+id), map[string]any{"typeId": "MFA", "timeoutSeconds": -5}, 400, "COULD_NOT_VALIDATE", "timeoutSeconds")
	if v := ts.get("/posture-checks/" + id); v["version"].(float64) != 1 {
		t.Fatalf("rejected updates raised the version: %v", v)
	}

	if st, out := ts.do(http.MethodPatch, mgmt("/posture-checks/"+id), map[string]any{"typeId": "MFA", "promptOnWake": true}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	v := ts.get("/posture-checks/" + id)
	if v["version"].(float64) != 2 || v["promptOnWake"] != true || v["promptOnUnlock"] != true || v["timeoutSeconds"].(float64) != 60 || v["name"] != "mfa" {
		t.Fatalf("after patch: %v", v)
	}
	if st, out := ts.do(http.MethodPut, mgmt("/posture-checks/"+id), pcBody("MFA", "mfa2", "timeoutSeconds", -1)); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	v = ts.get("/posture-checks/" + id)
	if v["version"].(float64) != 3 || v["name"] != "mfa2" || v["timeoutSeconds"].(float64) != -1 || v["promptOnWake"] != false ||
		v["promptOnUnlock"] != false || len(v["roleAttributes"].([]any)) != 0 {
		t.Fatalf("after put: %v", v)
	}

	dom := ts.create("/posture-checks", pcBody("DOMAIN", "dom", "domains", []string{"a.example"}))
	if st, out := ts.do(http.MethodPatch, mgmt("/posture-checks/"+dom), map[string]any{"typeId": "postureCheckDomainPatch", "domains": []string{"b.example", "c.example"}}); st != 200 {
		t.Fatalf("domain patch with the typed-schema typeId: %d %v", st, out)
	}
	if v := ts.get("/posture-checks/" + dom); v["version"].(float64) != 2 || len(v["domains"].([]any)) != 2 {
		t.Fatalf("after domain patch: %v", v)
	}
	ts.fails(http.MethodPatch, mgmt("/posture-checks/nope"), map[string]any{"typeId": "MFA"}, 404, "NOT_FOUND", "")
}

func TestPostureChecks_ListByRoleAndDeleteDropsPolicyReferences(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a := ts.create("/posture-checks", pcBody("MFA", "a", "roleAttributes", []string{"strict"}))
	ts.create("/posture-checks", pcBody("DOMAIN", "b", "domains", []string{"x"}, "roleAttributes", []string{"lax"}))
	if data, n := ts.list("/posture-checks?roleFilter=%23strict"); n != 1 || data[0].(map[string]any)["id"] != a {
		t.Fatalf("role filter: %v", data)
	}
	if _, n := ts.list(`/posture-checks?filter=typeId%20%3D%20%22DOMAIN%22`); n != 1 {
		t.Fatalf("typeId filter: %d", n)
	}
	sp := ts.create("/service-policies", map[string]any{"name": "sp", "type": "Dial", "semantic": "AnyOf",
		"postureCheckRoles": []string{"@" + a, "#lax"}})
	ts.mustDelete("/posture-checks/" + a)
	if roles := ts.get("/service-policies/" + sp)["postureCheckRoles"].([]any); len(roles) != 1 || roles[0] != "#lax" {
		t.Fatalf("policy roles after delete: %v", roles)
	}
	ts.fails(http.MethodDelete, mgmt("/posture-checks/"+a), nil, 404, "NOT_FOUND", "")
}

func TestPostureCheckTypes_AreTheBootstrapTypes(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	data, n := ts.list("/posture-check-types")
	if n != 6 || len(data) != 6 {
		t.Fatalf("%d posture check types", n)
	}
	v := ts.get("/posture-check-types/OS")
	if v["name"] != "OS" || v["version"] != "1" || len(v["operatingSystems"].([]any)) == 0 || v["_links"] == nil || v["tags"] == nil {
		t.Fatalf("OS type: %v", v)
	}
	if v := ts.get("/posture-check-types/MFA"); len(v["operatingSystems"].([]any)) != 0 {
		t.Fatalf("MFA type: %v", v)
	}
	ts.fails(http.MethodGet, mgmt("/posture-check-types/NOPE"), nil, 404, "NOT_FOUND", "")
}

// Posture check: the spec's narrative DOMAIN sample carries the names in
// macAddresses, and the PROCESS_MULTI table names the process OS field "os".
func TestPostureChecks_AcceptTheSpellingsOfTheSpec(t *testing.T) {
	t.Parallel()
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
	ts.fails(http.MethodPost, mgmt("/posture-checks"), map[string]any{"name": "d2", "typeId": "DOMAIN", "macAddresses": []string{}}, http.StatusBadRequest, "COULD_NOT_VALIDATE", "domains")

	h := strings.Repeat("a", 64)
	id = ts.create("/posture-checks", map[string]any{"name": "pm", "typeId": "PROCESS_MULTI", "semantic": "AllOf",
		"processes": []any{map[string]any{"os": "Windows", "path": `C:\a.exe`, "hashes": []string{h}}}})
	p := ts.get("/posture-checks/" + id)["processes"].([]any)[0].(map[string]any)
	if p["os"] != "WINDOWS" || p["osType"] != "WINDOWS" || p["path"] != `C:\a.exe` {
		t.Fatalf("process view: %v", p)
	}
}
