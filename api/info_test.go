package api_test

import (
	"net/http"
	"testing"
	"time"
)

func TestRoot_AnswersWithAndWithoutTheTrailingSlash(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for _, p := range []string{"/edge/client/v1", "/edge/client/v1/", "/edge/management/v1", "/edge/management/v1/"} {
		st, out := ts.doAs("", http.MethodGet, p, nil)
		if st != 200 || out["data"].(map[string]any)["apiVersions"] == nil {
			t.Fatalf("%s: %d %v", p, st, out)
		}
	}
}

// TestSpecs_AreBaseEntitiesWithAName: a Spec is BaseEntity plus name.
func TestSpecs_AreBaseEntitiesWithAName(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.do(http.MethodGet, "/edge/client/v1/specs/edge-client", nil)
	if st != http.StatusOK {
		t.Fatalf("%d %v", st, out)
	}
	d := out["data"].(map[string]any)
	for _, f := range []string{"_links", "id", "name", "createdAt", "updatedAt", "tags"} {
		if _, ok := d[f]; !ok {
			t.Errorf("spec view has no %s: %v", f, d)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, d["createdAt"].(string)); err != nil {
		t.Errorf("createdAt: %v", err)
	}
}
