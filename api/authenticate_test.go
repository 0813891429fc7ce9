package api_test

import (
	"net/http"
	"testing"
)

// TestAuthenticate_ExpirationSecondsIsTheWholeSessionTimeout: the authenticate answer's expirationSeconds is
// the whole session timeout (1800 with the default 30 minutes), not one less.
func TestAuthenticate_ExpirationSecondsIsTheWholeSessionTimeout(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.doAs("", http.MethodPost, "/edge/client/v1/authenticate?method=password",
		map[string]any{"username": "admin", "password": testAdminPassword})
	if st != http.StatusOK {
		t.Fatalf("%d %v", st, out)
	}
	if v := out["data"].(map[string]any)["expirationSeconds"]; v != float64(1800) {
		t.Errorf("expirationSeconds %v, want 1800", v)
	}
}
