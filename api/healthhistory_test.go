package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// GET /health-history: the node's samples, oldest first, each with its
// indexes and members; only an admin reads them.
func TestHealthHistory(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ts.api.SampleHealth(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, out := ts.do(http.MethodGet, mgmt("/health-history"), nil)
		if st != 200 {
			t.Fatalf("health history: %d %v", st, out)
		}
		if data, _ := out["data"].([]any); len(data) > 0 {
			s := data[0].(map[string]any)
			if s["members"] != 1.0 || s["membersUp"] != 1.0 || s["appliedIndex"].(float64) < 1 || s["at"] == nil || dig(out, "meta", "intervalSeconds") != 30.0 {
				t.Fatalf("a sample: %v (meta %v)", s, out["meta"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no sample within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, alice := ts.newClientIdentity("alice")
	if st, _ := ts.doAs(alice.token, http.MethodGet, mgmt("/health-history"), nil); st != 401 && st != 403 {
		t.Fatalf("a client reads the health history: %d", st)
	}
}
