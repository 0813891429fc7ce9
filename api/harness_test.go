package api_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"edgectl/controller"
)

// testServer is one in-process node with a logged-in admin.
type testServer struct {
	t      *testing.T
	node   *controller.Node
	client *http.Client
	base   string
	token  string
}

const testAdminPassword = "admin-password-1"

// startNode starts a one-node controller on loopback ports (edit may adjust
// its configuration) and returns it with a pool that trusts its CA bundle.
func startNode(tb testing.TB, edit func(*controller.Config)) (*controller.Node, *x509.CertPool) {
	tb.Helper()
	dir := tb.TempDir()
	cfg := controller.Config{
		DataDir: dir, APIAddr: "127.0.0.1:0", ClusterAddr: "127.0.0.1:0",
		AdminPassword: testAdminPassword, MaintenanceInterval: time.Hour,
	}
	if edit != nil {
		edit(&cfg)
	}
	n, err := controller.Start(context.Background(), cfg, nil, io.Discard)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = n.Shutdown(sctx)
	})
	bundle, err := os.ReadFile(filepath.Join(dir, "pki", "ca-bundle.pem"))
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle)
	return n, pool
}

// newTestServer starts a one-node controller and logs the admin in.
func newTestServer(t *testing.T) *testServer { return newTestServerWith(t, nil) }

// newTestServerWith is newTestServer with an adjusted configuration.
func newTestServerWith(t *testing.T, edit func(*controller.Config)) *testServer {
	t.Helper()
	n, pool := startNode(t, edit)
	ts := &testServer{t: t, node: n, base: n.APIURL(),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	ts.token = ts.login("admin", testAdminPassword)
	return ts
}

// login authenticates with a password on the Management API and returns the token.
func (ts *testServer) login(user, pass string) string {
	ts.t.Helper()
	st, body := ts.doAs("", http.MethodPost, "/edge/management/v1/authenticate?method=password", map[string]any{"username": user, "password": pass})
	if st != http.StatusOK {
		ts.t.Fatalf("login %s: %d %v", user, st, body)
	}
	return body["data"].(map[string]any)["token"].(string)
}

// do sends a request as the admin. body may be nil, a string (sent raw) or any JSON value.
func (ts *testServer) do(method, path string, body any) (int, map[string]any) {
	ts.t.Helper()
	return ts.doAs(ts.token, method, path, body)
}

// doAs sends a request with token (none when "").
func (ts *testServer) doAs(token, method, path string, body any) (int, map[string]any) {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, ts.base+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("svc-session", token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		out["raw"] = string(raw)
	}
	return resp.StatusCode, out
}

// mgmt is the Management API path of p.
func mgmt(p string) string { return "/edge/management/v1" + p }

// create posts body to a Management collection, expects 201 and returns the id.
func (ts *testServer) create(collection string, body any) string {
	ts.t.Helper()
	st, out := ts.do(http.MethodPost, mgmt(collection), body)
	if st != http.StatusCreated {
		ts.t.Fatalf("create %s: %d %v", collection, st, out)
	}
	return out["data"].(map[string]any)["id"].(string)
}

// get fetches a Management record and returns its data.
func (ts *testServer) get(path string) map[string]any {
	ts.t.Helper()
	st, out := ts.do(http.MethodGet, mgmt(path), nil)
	if st != http.StatusOK {
		ts.t.Fatalf("get %s: %d %v", path, st, out)
	}
	return out["data"].(map[string]any)
}

// list fetches a Management list and returns its data and total count.
func (ts *testServer) list(path string) ([]any, int) {
	ts.t.Helper()
	st, out := ts.do(http.MethodGet, mgmt(path), nil)
	if st != http.StatusOK {
		ts.t.Fatalf("list %s: %d %v", path, st, out)
	}
	total := int(out["meta"].(map[string]any)["pagination"].(map[string]any)["totalCount"].(float64))
	return out["data"].([]any), total
}

// wantError checks the status and error code of a response and, when field is set, cause.field.
func wantError(t *testing.T, st int, out map[string]any, status int, code, field string) {
	t.Helper()
	if st != status {
		t.Fatalf("status %d, want %d: %v", st, status, out)
	}
	e, _ := out["error"].(map[string]any)
	if e == nil || e["code"] != code {
		t.Fatalf("error code %v, want %s: %v", e["code"], code, out)
	}
	if field != "" {
		c, _ := e["cause"].(map[string]any)
		if c == nil || c["field"] != field {
			t.Fatalf("cause %v, want field %s", e["cause"], field)
		}
	}
}
