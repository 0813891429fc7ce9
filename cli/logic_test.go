package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"edgectl/controller"
)

// The logic of export, apply, verify and why, against a real one-node
// controller in this process (TLS, Raft, the served OpenAPI document).

const testPassword = "admin-password-1"

// testClient starts a node and returns a client logged in as its admin.
func testClient(t *testing.T) *client {
	t.Helper()
	dir := t.TempDir()
	n, err := controller.Start(context.Background(), controller.Config{DataDir: dir, APIAddr: "127.0.0.1:0",
		ClusterAddr: "127.0.0.1:0", AdminPassword: testPassword, MaintenanceInterval: time.Hour}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = n.Shutdown(ctx)
	})
	ca, err := os.ReadFile(filepath.Join(dir, "pki", "ca-bundle.pem"))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := httpClient(string(ca), "", "")
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := doAPI(hc, n.APIURL(), "", http.MethodPost, "/authenticate?method=password",
		map[string]any{"username": "admin", "password": testPassword})
	if err != nil {
		t.Fatal(err)
	}
	var sess struct{ Token string }
	if err := json.Unmarshal(data, &sess); err != nil || sess.Token == "" {
		t.Fatalf("login: %v %s", err, data)
	}
	return &client{name: "test", p: &profile{URL: n.APIURL(), CAPEM: string(ca), Token: sess.Token}, http: hc}
}

// mustCreate creates a record (names in role arrays and reference fields
// resolved, as the CLI's create does) and returns its id.
func mustCreate(t *testing.T, c *client, path string, body map[string]any) string {
	t.Helper()
	if err := c.resolveRoleNames(body); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, _, err := c.do(http.MethodPost, "/"+path, body)
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	var out struct{ ID string }
	_ = json.Unmarshal(data, &out)
	return out.ID
}

// A small network exported writes names for ids, leaves out what the
// controller made, and lists kinds in apply order; applied to an empty
// controller it makes the same network, and applied again changes nothing.
func TestExportThenApplyMakesTheSameNetwork(t *testing.T) {
	src := testClient(t)
	mustCreate(t, src, "config-types", map[string]any{"name": "app.v1"})
	mustCreate(t, src, "configs", map[string]any{"name": "app-cfg", "configTypeId": "app.v1", "data": map[string]any{"port": 80}})
	mustCreate(t, src, "services", map[string]any{"name": "app", "configs": []any{"app-cfg"}, "roleAttributes": []any{"web"}})
	mustCreate(t, src, "identities", map[string]any{"name": "alice", "type": "User", "isAdmin": false})
	mustCreate(t, src, "service-policies", map[string]any{"name": "alice-dials", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []any{"@alice"}, "serviceRoles": []any{"#web"}})
	// An edge router's tunneler identity: made by its router, its attributes
	// the user's, named by a policy.
	tun := mustCreate(t, src, "edge-routers", map[string]any{"name": "tun", "isTunnelerEnabled": true})
	if _, _, err := src.do(http.MethodPatch, "/identities/"+tun, map[string]any{"roleAttributes": []any{"hosts"}}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, src, "service-policies", map[string]any{"name": "tun-binds", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []any{"@tun"}, "serviceRoles": []any{"#web"}})

	kinds, err := kindsOf(nil)
	if err != nil {
		t.Fatal(err)
	}
	// A record only names records of earlier kinds.
	place := map[string]int{}
	for i, k := range kinds {
		place[k] = i + 1
	}
	for _, dep := range [][2]string{{"auth-policies", "identities"}, {"config-types", "configs"}, {"configs", "services"},
		{"services", "service-policies"}, {"identities", "service-policies"}, {"posture-checks", "service-policies"},
		{"edge-routers", "edge-router-policies"}, {"services", "service-edge-router-policies"},
		{"edge-routers", "identities"}} { // an edge router makes its tunneler's identity
		if place[dep[0]] == 0 || place[dep[1]] == 0 || place[dep[0]] > place[dep[1]] {
			t.Errorf("export order %v: %s must come before %s", kinds, dep[0], dep[1])
		}
	}
	nw, err := src.readNetwork(kinds)
	if err != nil {
		t.Fatal(err)
	}
	file := nw.exportFile(kinds)
	if len(file["auth-policies"]) != 0 || len(file["edge-router-policies"]) != 0 || len(file["config-types"]) != 1 {
		t.Fatalf("controller-made records exported: %v", file)
	}
	routerIdentity := false
	for _, ident := range file["identities"] {
		if ident["name"] == "admin" {
			t.Fatal("the default admin was exported")
		}
		routerIdentity = routerIdentity || ident["name"] == "tun" && ident["type"] == "Router"
	}
	if !routerIdentity {
		t.Errorf("the router's identity (its attributes) was not exported: %v", file["identities"])
	}
	if got := file["configs"][0]["configTypeId"]; got != "app.v1" {
		t.Errorf("config's type exported as %v, want its name", got)
	}
	if got := file["services"][0]["configs"]; len(got.([]any)) != 1 || got.([]any)[0] != "app-cfg" {
		t.Errorf("service's configs exported as %v, want names", got)
	}
	if got := file["service-policies"][0]["identityRoles"]; got.([]any)[0] != "@alice" {
		t.Errorf("policy's identity roles exported as %v, want @name", got)
	}

	dst := testClient(t)
	// Through JSON, as the file travels.
	raw, _ := json.Marshal(file)
	var want map[string][]map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	created := captureStdout(t, func() {
		if err := dst.apply(kinds, want, false, false); err != nil {
			t.Fatal(err)
		}
	})
	if !strings.Contains(created, "+ service-policy alice-dials") {
		t.Errorf("apply said: %s", created)
	}
	nw2, err := dst.readNetwork(kinds)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(nw2.exportFile(kinds))
	if string(again) != string(raw) {
		t.Fatalf("applied network exports differently:\n%s\nwant\n%s", again, raw)
	}
	out := captureStdout(t, func() {
		if err := dst.apply(kinds, want, false, false); err != nil {
			t.Fatal(err)
		}
	})
	if strings.Contains(out, "+") || strings.Contains(out, "~") {
		t.Fatalf("a second apply changed something: %s", out)
	}
	// Prune leaves a router's identity to its router.
	delete(want, "identities")
	out = captureStdout(t, func() {
		if err := dst.apply(kinds, want, false, true); err != nil {
			t.Fatal(err)
		}
	})
	if !strings.Contains(out, "- identity alice") || strings.Contains(out, "- identity tun") {
		t.Fatalf("prune without identities: %s", out)
	}
}

// verify finds a grant no edge router can carry, a policy that selects no
// identity and an unused posture check; why explains the same grant.
func TestVerifyAndWhyExplainAGrantWithoutRouters(t *testing.T) {
	c := testClient(t)
	mustCreate(t, c, "services", map[string]any{"name": "db"})
	mustCreate(t, c, "identities", map[string]any{"name": "bob", "type": "User", "isAdmin": false})
	mustCreate(t, c, "service-policies", map[string]any{"name": "bob-dials", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []any{"@bob"}, "serviceRoles": []any{"@db"}})
	carol := mustCreate(t, c, "identities", map[string]any{"name": "carol", "type": "User", "isAdmin": false})
	mustCreate(t, c, "service-policies", map[string]any{"name": "gone", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []any{"@carol"}, "serviceRoles": []any{"@db"}})
	if _, _, err := c.do(http.MethodDelete, "/identities/"+carol, nil); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "posture-checks", map[string]any{"name": "mac", "typeId": "MAC", "macAddresses": []any{"aa:bb:cc:dd:ee:ff"}})

	fs, err := c.verify()
	if err != nil {
		t.Fatal(err)
	}
	has := func(sev, subject, text string) bool {
		for _, f := range fs {
			if f.Severity == sev && f.Subject == subject && strings.Contains(f.Message, text) {
				return true
			}
		}
		return false
	}
	if !has("error", "bob", `granted Dial on service "db" but no edge router`) {
		t.Errorf("no error for the grant without a router: %+v", fs)
	}
	if !has("warning", "gone", "selects no identities") {
		t.Errorf("no warning for the policy whose identity is gone: %+v", fs)
	}
	if !has("warning", "mac", "no service policy uses it") {
		t.Errorf("no warning for the unused posture check: %+v", fs)
	}
	if fs[0].Severity != "error" {
		t.Errorf("errors do not come first: %+v", fs)
	}

	out, err := c.why("bob", "db")
	if err != nil {
		t.Fatal(err)
	}
	dial := out["dial"].(map[string]any)
	if dial["allowed"] != false || len(dial["policies"].([]any)) != 1 {
		t.Fatalf("why: %v", dial)
	}
	if r := dial["reasons"].([]any); len(r) != 1 || !strings.Contains(r[0].(string), "no edge router is usable by both") {
		t.Fatalf("why's reasons: %v", r)
	}
	if _, err := c.why("nobody", "db"); err == nil {
		t.Fatal("why of an unknown identity answered")
	}
}

// A router's tunneler identity is checked and explained like any other,
// with the edge router it belongs to.
func TestVerifyAndWhyNameARouterIdentitysRouter(t *testing.T) {
	c := testClient(t)
	mustCreate(t, c, "services", map[string]any{"name": "db"})
	tun := mustCreate(t, c, "edge-routers", map[string]any{"name": "tun", "isTunnelerEnabled": true})
	if _, _, err := c.do(http.MethodPatch, "/edge-routers/"+tun, map[string]any{"name": "tun-east"}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "service-policies", map[string]any{"name": "tun-binds", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []any{"@tun-east"}, "serviceRoles": []any{"@db"}})

	fs, err := c.verify()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range fs {
		if f.Subject == "tun-east" && f.Kind == "identity" {
			if f.EdgeRouter != "tun-east" || strings.Contains(f.Message, "no edge router policy gives it") {
				t.Errorf("finding on the router's identity: %+v", f)
			}
			found = found || strings.Contains(f.Message, `granted Bind on service "db" but no edge router is usable by both`)
		}
	}
	if !found {
		t.Errorf("no error for the router identity's grant without a common router: %+v", fs)
	}

	out, err := c.why("tun-east", "db")
	if err != nil {
		t.Fatal(err)
	}
	er, _ := out["identity"].(map[string]any)["edgeRouter"].(map[string]any)
	if got := er["name"]; got != "tun-east" {
		t.Fatalf("why's identity: %v", out["identity"])
	}
	printed := captureStdout(t, func() { printWhy(out) })
	if !strings.HasPrefix(printed, "tun-east (the tunneler of edge router tun-east) → db") {
		t.Fatalf("why printed: %s", printed)
	}
}

// captureStdout returns what fn prints.
func captureStdout(t *testing.T, fn func()) string { return capture(t, &os.Stdout, fn) }

// capture returns what fn writes to *f (os.Stdout or os.Stderr).
func capture(t *testing.T, f **os.File, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := *f
	*f = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	fn()
	*f = old
	w.Close()
	return <-done
}

// A change made on every node (a link's) names on stderr each node where it
// was not made, and nothing when every node made it.
func TestWarnNodes(t *testing.T) {
	got := capture(t, &os.Stderr, func() {
		warnNodes([]byte(`{"nodes":{"n2":"not reached: timeout","n1":"changed","n3":"kept until its routers report the link to this node"}}`))
		warnNodes([]byte(`{"nodes":{"n1":"changed"}}`))
		warnNodes([]byte(`{}`))
	})
	want := "edgectl: node n2: not reached: timeout\nedgectl: node n3: kept until its routers report the link to this node\n"
	if got != want {
		t.Fatalf("stderr %q, want %q", got, want)
	}
}
