package api_test

import (
	"net/http"
	"testing"
)

func TestRoot_AnswersWithAndWithoutTheTrailingSlash(t *testing.T) {
	ts := newTestServer(t)
	for _, p := range []string{"/edge/client/v1", "/edge/client/v1/", "/edge/management/v1", "/edge/management/v1/"} {
		st, out := ts.doAs("", http.MethodGet, p, nil)
		if st != 200 || out["data"].(map[string]any)["apiVersions"] == nil {
			t.Fatalf("%s: %d %v", p, st, out)
		}
	}
}
