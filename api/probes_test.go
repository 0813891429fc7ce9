package api_test

import (
	"encoding/json"
	"testing"
)

// TestProbes: /livez and /readyz answer at the root of the API port without
// authentication; /readyz tells why it is or is not ready.
func TestProbes(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	get := func(path string) (int, map[string]any) {
		t.Helper()
		resp, err := ts.client.Get(ts.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.StatusCode, m
	}
	if st, m := get("/livez"); st != 200 || m["status"] != "ok" {
		t.Fatalf("/livez: %d %v", st, m)
	}
	for _, p := range []string{"/readyz", "/readyz?leader=true", "/readyz?leader=false"} {
		st, m := get(p)
		if st != 200 || m["status"] != "ok" || m["nodeId"] != "local" || m["leaderId"] != "local" ||
			m["appliedIndex"] == nil || m["commitIndex"] == nil || m["term"] == nil {
			t.Fatalf("%s: %d %v", p, st, m)
		}
		if checks, _ := m["checks"].(map[string]any); checks["leader"] != "ok" || checks["caughtUp"] != "ok" {
			t.Fatalf("%s checks: %v", p, m["checks"])
		}
	}
	if st, m := get("/readyz?leader=yes"); st != 400 {
		t.Fatalf("/readyz?leader=yes: %d %v", st, m)
	}
}
