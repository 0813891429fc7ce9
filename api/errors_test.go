package api_test

import (
	"net/http"
	"reflect"
	"testing"
)

// TestErrors_ABodyOfTheWrongKindCannotBeParsed: a body that is not an object where one is
// expected is 400 COULD_NOT_PARSE_BODY (docs/api.md), not a validation error
// on a field "body" naming a Go type; a wrong type of a top-level field
// reports the value sent.
func TestErrors_ABodyOfTheWrongKindCannotBeParsed(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	pc := ts.create("/posture-checks", map[string]any{"name": "dom", "typeId": "DOMAIN", "domains": []string{"x.com"}})
	for _, p := range []string{"/edge/client/v1/posture-response", "/edge/client/v1/authenticate?method=password"} {
		st, out := ts.do(http.MethodPost, p, "[]")
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_PARSE_BODY", "")
	}
	st, out := ts.do(http.MethodPost, "/edge/client/v1/posture-response", map[string]any{"id": pc, "typeId": "DOMAIN", "domain": 5})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "domain")
	if v := out["error"].(map[string]any)["cause"].(map[string]any)["value"]; v != float64(5) {
		t.Errorf("cause.value %v, want 5", v)
	}
}

// Conventions §3: a field that fails validation names the field and the value sent.
func TestErrors_TypeErrorsShowTheValueSent(t *testing.T) {
	t.Parallel()
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
