package api_test

import (
	"net/http"
	"strings"
	"testing"

	"edgectl/controller"
)

// corsDo sends a request with an Origin header (and, for a preflight, the
// method and headers it asks for) and returns the answer's status and headers.
func corsDo(t *testing.T, ts *testServer, method, path, origin string, preflight bool) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, ts.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	if preflight {
		req.Header.Set("Access-Control-Request-Method", "PATCH")
		req.Header.Set("Access-Control-Request-Headers", "content-type, zt-session")
	} else {
		req.Header.Set("zt-session", ts.token)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// CORS is opt-in and exact: an allowed origin gets its preflight answered
// without a session and its answers (errors included) carry
// Access-Control-Allow-Origin with Vary: Origin; any other origin's
// preflight is refused and its answers carry no CORS header.
func TestCORS_AnAllowedOriginIsServedAndAnyOtherRefused(t *testing.T) {
	t.Parallel()
	const zac = "https://zac.example:8443"
	ts := newTestServerWith(t, func(c *controller.Config) { c.CORSOrigins = []string{zac} })

	st, h := corsDo(t, ts, http.MethodOptions, mgmt("/identities/some-id"), zac, true)
	if st != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != zac || h.Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "PATCH") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "zt-session") ||
		!strings.Contains(h.Get("Vary"), "Origin") {
		t.Fatalf("preflight of an allowed origin: %d %v", st, h)
	}
	for _, c := range []struct {
		path string
		want int
	}{{mgmt("/identities"), 200}, {mgmt("/identities/nope"), 404}} {
		st, h = corsDo(t, ts, http.MethodGet, c.path, zac, false)
		if st != c.want || h.Get("Access-Control-Allow-Origin") != zac || !strings.Contains(h.Get("Vary"), "Origin") ||
			!strings.Contains(h.Get("Access-Control-Expose-Headers"), "zt-session") {
			t.Fatalf("GET %s from an allowed origin: %d %v", c.path, st, h)
		}
	}

	for _, other := range []string{"https://evil.example", "https://zac.example", "http://zac.example:8443", "null"} {
		st, h = corsDo(t, ts, http.MethodOptions, mgmt("/identities"), other, true)
		if st != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("preflight of %s: %d %v", other, st, h)
		}
		st, h = corsDo(t, ts, http.MethodGet, mgmt("/identities"), other, false)
		if h.Get("Access-Control-Allow-Origin") != "" || h.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("GET from %s carries CORS headers: %d %v", other, st, h)
		}
	}

	// Without --cors-origins no origin is allowed.
	plain := newTestServer(t)
	if st, h = corsDo(t, plain, http.MethodOptions, mgmt("/identities"), zac, true); st != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight with no origin allowed: %d %v", st, h)
	}
}

// GET /version lists the Client API also under "edge", as OpenZiti does
// (ZAC looks for it there).
func TestVersion_ListsTheClientAPIUnderEdge(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.doAs("", http.MethodGet, "/edge/client/v1/version", nil)
	if st != 200 || dig(out, "data", "apiVersions", "edge", "v1", "path") != "/edge/client/v1" {
		t.Fatalf("version: %d %v", st, dig(out, "data", "apiVersions"))
	}
}

// Blank optional strings, as generated clients send every optional string
// they were not given, mean "not set": the default on create, cleared on
// PATCH.
func TestBlankOptionalStringsMeanNotSet(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/identities", map[string]any{"name": "blank", "type": "User", "isAdmin": false, "externalId": ""})
	if got := ts.get("/identities/" + id)["externalId"]; got != nil {
		t.Fatalf("externalId: %v", got)
	}
	for _, v := range []string{"x-1", ""} {
		if st, out := ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"externalId": v}); st != 200 {
			t.Fatalf("PATCH externalId %q: %d %v", v, st, out)
		}
	}
	if got := ts.get("/identities/" + id)["externalId"]; got != nil {
		t.Fatalf("externalId after a blank PATCH: %v", got)
	}
	svc := ts.create("/services", map[string]any{"name": "blank-svc", "terminatorStrategy": ""})
	if got := ts.get("/services/" + svc)["terminatorStrategy"]; got != "smartrouting" {
		t.Fatalf("terminatorStrategy: %v", got)
	}
}
