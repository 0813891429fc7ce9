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
