package api_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// portSchema needs an integer port and allows a list of host strings.
var portSchema = map[string]any{
	"type":     "object",
	"required": []string{"port"},
	"properties": map[string]any{
		"port":  map[string]any{"type": "integer", "minimum": 1, "maximum": 65535},
		"hosts": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
}

func TestConfigTypes_CreateValidatesTheSchemaAndStoresNothingOnError(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ts.refusesCreates(t, "/config-types", []badCreate{
		{"missing name", map[string]any{"schema": map[string]any{}}, "name"},
		{"empty name", map[string]any{"name": ""}, "name"},
		{"schema not an object", map[string]any{"name": "x", "schema": "object"}, "schema"},
		{"schema a boolean", map[string]any{"name": "x", "schema": true}, "schema"},
		{"bad type keyword", map[string]any{"name": "x", "schema": map[string]any{"type": 5}}, "schema"},
		{"bad minimum keyword", map[string]any{"name": "x", "schema": map[string]any{"properties": map[string]any{"a": map[string]any{"minimum": "x"}}}}, "schema"},
		{"remote reference", map[string]any{"name": "x", "schema": map[string]any{"$ref": "http://example.com/s.json"}}, "schema"},
		{"nested tag", map[string]any{"name": "x", "tags": map[string]any{"a": []any{}}}, "tags.a"},
	})
	ts.create("/config-types", map[string]any{"name": "same"})
	st, out := ts.do(http.MethodPost, mgmt("/config-types"), map[string]any{"name": "same"})
	wantError(t, st, out, http.StatusConflict, "CONFLICT", "name")
}

func TestConfigTypes_GetPatchPutDelete(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/config-types", map[string]any{"name": "port.v1", "schema": portSchema, "tags": map[string]any{"k": "v"}})
	got := ts.get("/config-types/" + id)
	if got["name"] != "port.v1" || got["schema"].(map[string]any)["type"] != "object" || got["tags"].(map[string]any)["k"] != "v" {
		t.Fatalf("view: %v", got)
	}
	if got["_links"].(map[string]any)["configs"] == nil {
		t.Fatalf("no configs link: %v", got["_links"])
	}
	if st, out := ts.do(http.MethodPatch, mgmt("/config-types/"+id), map[string]any{"name": "intercept.v2"}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	got = ts.get("/config-types/" + id)
	if got["name"] != "intercept.v2" || got["schema"].(map[string]any)["type"] != "object" {
		t.Fatalf("patch changed more than the name: %v", got)
	}
	// PUT without schema resets it to none, shown as {}; tags reset too.
	if st, out := ts.do(http.MethodPut, mgmt("/config-types/"+id), map[string]any{"name": "intercept.v3"}); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	got = ts.get("/config-types/" + id)
	if got["name"] != "intercept.v3" || len(got["schema"].(map[string]any)) != 0 || len(got["tags"].(map[string]any)) != 0 {
		t.Fatalf("after put: %v", got)
	}
	st, out := ts.do(http.MethodPut, mgmt("/config-types/"+id), map[string]any{"schema": map[string]any{}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "name")
	st, out = ts.do(http.MethodPatch, mgmt("/config-types/"+id), map[string]any{"schema": map[string]any{"type": "nope"}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "schema")
	ts.mustDelete("/config-types/" + id)
	for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
		st, out := ts.do(m, mgmt("/config-types/"+id), map[string]any{})
		wantError(t, st, out, 404, "NOT_FOUND", "")
	}
}

func TestConfigs_DataIsValidatedAgainstTheSchemaNamingThePath(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	typeID := ts.create("/config-types", map[string]any{"name": "port.v1", "schema": portSchema})
	ts.refusesCreates(t, "/configs", []badCreate{
		{"missing type", map[string]any{"name": "c", "data": map[string]any{"port": 1}}, "configTypeId"},
		{"unknown type", map[string]any{"name": "c", "configTypeId": "nope", "data": map[string]any{"port": 1}}, "configTypeId"},
		{"missing name", map[string]any{"configTypeId": typeID, "data": map[string]any{"port": 1}}, "name"},
		{"missing data", map[string]any{"name": "c", "configTypeId": typeID}, "data"},
		{"null data", map[string]any{"name": "c", "configTypeId": typeID, "data": nil}, "data"},
		{"data not an object", map[string]any{"name": "c", "configTypeId": typeID, "data": []any{1}}, "data"},
		{"missing required property", map[string]any{"name": "c", "configTypeId": typeID, "data": map[string]any{}}, "data.port"},
		{"wrong type", map[string]any{"name": "c", "configTypeId": typeID, "data": map[string]any{"port": "80"}}, "data.port"},
		{"above maximum", map[string]any{"name": "c", "configTypeId": typeID, "data": map[string]any{"port": 70000}}, "data.port"},
		{"array item", map[string]any{"name": "c", "configTypeId": typeID, "data": map[string]any{"port": 80, "hosts": []any{"a", 3}}}, "data.hosts[1]"},
	})

	id := ts.create("/configs", map[string]any{"name": "web", "configTypeId": typeID, "data": map[string]any{"port": 443, "hosts": []string{"a"}}})
	got := ts.get("/configs/" + id)
	ref, _ := got["configType"].(map[string]any)
	if got["name"] != "web" || got["configTypeId"] != typeID || ref["name"] != "port.v1" || got["data"].(map[string]any)["port"].(float64) != 443 {
		t.Fatalf("view: %v", got)
	}
	st, out := ts.do(http.MethodPatch, mgmt("/configs/"+id), map[string]any{"data": map[string]any{"port": 0}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "data.port")
	st, out = ts.do(http.MethodPut, mgmt("/configs/"+id), map[string]any{"name": "web", "data": map[string]any{"hosts": []any{}}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "data.port")
	st, out = ts.do(http.MethodPut, mgmt("/configs/"+id), map[string]any{"name": "web"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "data")
	other := ts.create("/config-types", map[string]any{"name": "other.v1"})
	st, out = ts.do(http.MethodPatch, mgmt("/configs/"+id), map[string]any{"configTypeId": other})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "configTypeId")
	if got := ts.get("/configs/" + id); got["data"].(map[string]any)["port"].(float64) != 443 || got["configTypeId"] != typeID {
		t.Fatalf("a refused update changed the config: %v", got)
	}

	if st, out := ts.do(http.MethodPatch, mgmt("/configs/"+id), map[string]any{"name": "web2"}); st != 200 {
		t.Fatalf("patch name: %d %v", st, out)
	}
	if st, out := ts.do(http.MethodPut, mgmt("/configs/"+id), map[string]any{"name": "web3", "data": map[string]any{"port": 8443}}); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	got = ts.get("/configs/" + id)
	if got["name"] != "web3" || got["data"].(map[string]any)["port"].(float64) != 8443 || got["data"].(map[string]any)["hosts"] != nil {
		t.Fatalf("after put: %v", got)
	}
	// Large integers keep their precision: data is stored as sent.
	big := ts.create("/configs", `{"name": "big", "configTypeId": "`+other+`", "data": {"n": 9007199254740993}}`)
	if raw := ts.rawGet(mgmt("/configs/" + big)); !strings.Contains(raw, `"n":9007199254740993`) {
		t.Fatalf("large integer lost precision: %s", raw)
	}
}

// rawGet sends a GET as the admin and returns the response body undecoded.
func (ts *testServer) rawGet(path string) string {
	ts.t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.base+path, nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("svc-session", ts.token)
	resp, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestConfigTypes_SchemaChangeMustKeepExistingConfigsValidAndDeleteIsReferenced(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	typeID := ts.create("/config-types", map[string]any{"name": "port.v1", "schema": portSchema})
	cfg := ts.create("/configs", map[string]any{"name": "web", "configTypeId": typeID, "data": map[string]any{"port": 8080}})

	strict := map[string]any{"type": "object", "properties": map[string]any{"port": map[string]any{"type": "integer", "maximum": 1024}}}
	st, out := ts.do(http.MethodPatch, mgmt("/config-types/"+typeID), map[string]any{"schema": strict})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "schema")
	if reason := out["error"].(map[string]any)["cause"].(map[string]any)["reason"].(string); !strings.Contains(reason, cfg) || !strings.Contains(reason, "data.port") {
		t.Fatalf("the reason should name the config and the path: %q", reason)
	}
	if got := ts.get("/config-types/" + typeID); got["schema"].(map[string]any)["required"] == nil {
		t.Fatalf("a refused schema change was stored: %v", got["schema"])
	}

	// A compatible change is taken, and new data is checked against the new schema at once.
	loose := map[string]any{"type": "object", "properties": map[string]any{"port": map[string]any{"type": "integer", "maximum": 9000}}}
	if st, out := ts.do(http.MethodPatch, mgmt("/config-types/"+typeID), map[string]any{"schema": loose}); st != 200 {
		t.Fatalf("compatible schema: %d %v", st, out)
	}
	st, out = ts.do(http.MethodPatch, mgmt("/configs/"+cfg), map[string]any{"data": map[string]any{"port": 9001}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "data.port")
	if st, out := ts.do(http.MethodPatch, mgmt("/configs/"+cfg), map[string]any{"data": map[string]any{}}); st != 200 {
		t.Fatalf("port no longer required: %d %v", st, out)
	}

	st, out = ts.do(http.MethodDelete, mgmt("/config-types/"+typeID), nil)
	wantError(t, st, out, 409, "REFERENCED", "")
	ts.get("/config-types/" + typeID)
	ts.mustDelete("/configs/" + cfg)
	ts.mustDelete("/config-types/" + typeID)
}

func TestConfigs_ListsFilterAndListByType(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a := ts.create("/config-types", map[string]any{"name": "a.v1"})
	b := ts.create("/config-types", map[string]any{"name": "b.v1"})
	for _, n := range []string{"z", "y", "x"} {
		ts.create("/configs", map[string]any{"name": "a-" + n, "configTypeId": a, "data": map[string]any{}})
	}
	ts.create("/configs", map[string]any{"name": "b-1", "configTypeId": b, "data": map[string]any{}})

	data, total := ts.list("/config-types/" + a + "/configs")
	if total != 3 || len(data) != 3 || data[0].(map[string]any)["name"] != "a-x" || data[2].(map[string]any)["name"] != "a-z" {
		t.Fatalf("configs of type a: %d %v", total, data)
	}
	data, total = ts.list("/config-types/" + a + "/configs?limit=1&offset=1")
	if total != 3 || len(data) != 1 || data[0].(map[string]any)["name"] != "a-y" {
		t.Fatalf("paged configs of type a: %d %v", total, data)
	}
	if _, total := ts.list("/configs?filter=" + url.QueryEscape(`configTypeId = "`+b+`"`)); total != 1 {
		t.Fatalf("filter by type: %d", total)
	}
	if _, total := ts.list("/config-types?filter=" + url.QueryEscape(`name contains "b"`)); total != 1 {
		t.Fatalf("filter config types: %d", total)
	}
	st, out := ts.do(http.MethodGet, mgmt("/config-types/nope/configs"), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}
