package api_test

import (
	"bufio"
	"net/http"
	"os"
	"strings"
	"testing"
)

// specRoute is one row of routes.md.
type specRoute struct {
	api, method, path, op, need string
}

// readRoutes parses the routes table (a copy of shared/spec/routes.md in testdata).
func readRoutes(t *testing.T) []specRoute {
	f, err := os.Open("testdata/routes.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []specRoute
	api := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## Client API"):
			api = "/edge/client/v1"
		case strings.HasPrefix(line, "## Management API"):
			api = "/edge/management/v1"
		}
		cols := strings.Split(line, "|")
		if api == "" || len(cols) < 7 {
			continue
		}
		method := strings.TrimSpace(cols[1])
		if method != "GET" && method != "POST" && method != "PUT" && method != "PATCH" && method != "DELETE" {
			continue
		}
		out = append(out, specRoute{api: api, method: method, path: strings.Trim(strings.TrimSpace(cols[2]), "`"),
			op: strings.TrimSpace(cols[3]), need: strings.Trim(strings.TrimSpace(cols[5]), "*")})
	}
	return out
}

// TestRoutes_EveryMustAndShouldRouteHasARealHandler walks routes.md and calls
// every operation marked must or should: none may fall through to the
// router's "no operation" 404 or to a 405.
func TestRoutes_EveryMustAndShouldRouteHasARealHandler(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	routes := readRoutes(t)
	if len(routes) < 200 {
		t.Fatalf("parsed only %d routes from routes.md", len(routes))
	}
	for _, r := range routes {
		if r.need != "must" && r.need != "should" {
			continue
		}
		path := strings.NewReplacer("{id}", "no-such-id", "{serviceId}", "no-such-id").Replace(r.path)
		var body any
		if r.method != http.MethodGet && r.method != http.MethodDelete {
			body = map[string]any{}
		}
		st, out := ts.doAs(ts.token, r.method, r.api+path, body)
		msg := ""
		if e, ok := out["error"].(map[string]any); ok {
			msg, _ = e["message"].(string)
		}
		if st == http.StatusMethodNotAllowed || strings.HasPrefix(msg, "no operation at") {
			t.Errorf("%s %s%s (%s, %s): not served: %d %s", r.method, r.api, r.path, r.op, r.need, st, msg)
		}
	}
}

// TestRoutes_OperationIdsAreThoseOfRoutesMd checks the OpenAPI documents the
// node serves: every operation of routes.md that is served carries the
// operationId routes.md gives it.
func TestRoutes_OperationIdsAreThoseOfRoutesMd(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	specs := map[string]string{"/edge/client/v1": "edge-client", "/edge/management/v1": "edge-management"}
	checked := 0
	for api, id := range specs {
		st, doc := ts.doAs(ts.token, http.MethodGet, api+"/specs/"+id+"/spec", nil)
		data, _ := doc["data"].(map[string]any)
		paths, _ := data["paths"].(map[string]any)
		if st != http.StatusOK || len(paths) == 0 {
			t.Fatalf("%s spec: %d %v", api, st, doc)
		}
		for _, r := range readRoutes(t) {
			if r.api != api || (r.need != "must" && r.need != "should") {
				continue
			}
			ops, _ := paths[r.path].(map[string]any)
			op, _ := ops[strings.ToLower(r.method)].(map[string]any)
			if op == nil {
				t.Errorf("%s %s%s is not in the served OpenAPI document", r.method, api, r.path)
				continue
			}
			checked++
			if op["operationId"] != r.op {
				t.Errorf("%s %s%s: operationId %v, routes.md says %s", r.method, api, r.path, op["operationId"], r.op)
			}
		}
	}
	if checked < 200 {
		t.Fatalf("checked only %d operations", checked)
	}
}
