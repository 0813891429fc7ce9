package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Links and circuits live on the node, not in the model: with no router
// connected both lists are empty on both APIs, an unknown id is 404 and a
// filter on a field they do not have is 400 naming it.
func TestNodeLocalLists_LinksAndCircuits(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for _, path := range []string{"/edge/management/v1/links", "/fabric/v1/links", "/edge/management/v1/circuits", "/fabric/v1/circuits"} {
		st, out := ts.do(http.MethodGet, path, nil)
		if data, _ := out["data"].([]any); st != http.StatusOK || data == nil || len(data) != 0 {
			t.Errorf("GET %s: %d %v, want 200 and an empty list", path, st, out)
		}
		st, out = ts.do(http.MethodGet, path+"/no-such-id", nil)
		wantError(t, st, out, http.StatusNotFound, "NOT_FOUND", "")
		st, out = ts.do(http.MethodGet, path+"?filter="+url.QueryEscape(`noSuchField="x"`), nil)
		wantError(t, st, out, http.StatusBadRequest, "INVALID_FILTER", "")
		if msg, _ := out["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "noSuchField") {
			t.Errorf("GET %s with a bad filter: %q does not name the field", path, msg)
		}
	}
	st, out := ts.do(http.MethodGet, "/fabric/v1/links?filter="+url.QueryEscape(`sourceRouterId="r1" and protocol="tls"`), nil)
	if st != http.StatusOK {
		t.Fatalf("a filter on the links' own fields: %d %v", st, out)
	}
}
