package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Backup and restore: a snapshot of a three-node cluster, downloaded and
// restored with `edgectl restore` into a new one-node cluster.

func TestClusterSnapshotDownloadRestoreKeepsEveryRecord(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{size: 3})
	l := c.leader(10 * time.Second)
	src := c.nodes[(l+1)%3] // a follower: its snapshot holds its own writes (read-your-writes)
	populated := populate(t, src, c.token)

	kinds := listedKinds(t, src, c.token)
	before := map[string][]any{}
	for _, path := range kinds {
		items, err := listAll(t, src, c.token, path)
		if err != nil {
			t.Fatal(err)
		}
		before[path] = items
	}
	var summary []string
	for _, path := range kinds {
		summary = append(summary, fmt.Sprintf("%s %d", path, len(before[path])))
		if len(before[path]) == 0 {
			if populated[path] {
				t.Errorf("%s is empty before the snapshot: the comparison would prove nothing for it", path)
			} else {
				t.Logf("%s is empty (populate makes none): compared empty", path)
			}
		}
	}
	t.Logf("compared lists: %s", strings.Join(summary, ", "))
	status, m := do(t, http.MethodPost, src.mgmt("/database/snapshot"), c.token, nil)
	mustStatus(t, "take a snapshot", status, m, http.StatusOK)
	id, _ := jget(m, "data", "id").(string)
	status, body, err := getRaw(src, c.token, "/database/snapshots/"+id)
	if err != nil || status != http.StatusOK || len(body) == 0 {
		t.Fatalf("download snapshot %s: %d %v %.200s", id, status, err, body)
	}
	file := filepath.Join(t.TempDir(), id+".snapshot")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}

	// A file that is not a whole snapshot is refused, and leaves no data dir behind.
	for what, content := range map[string][]byte{"a truncated snapshot": body[:len(body)/2], "an error answer saved as a file": []byte(`{"error":{"code":"NOT_FOUND"}}`)} {
		bad := filepath.Join(t.TempDir(), "bad.snapshot")
		if err := os.WriteFile(bad, content, 0o600); err != nil {
			t.Fatal(err)
		}
		badDir := filepath.Join(t.TempDir(), "never")
		out, err := runEdgectl(t, time.Minute, "restore", "--data-dir", badDir, bad)
		if err == nil || !strings.Contains(out, "not a complete edgectl snapshot") {
			t.Errorf("restore of %s: %v, want a refusal:\n%s", what, err, out)
		}
		if _, err := os.Stat(badDir); err == nil {
			t.Errorf("the refused restore of %s left %s behind", what, badDir)
		}
	}

	dir := filepath.Join(t.TempDir(), "restored")
	apiPort, clusterPort := freePort(t), freePort(t)
	flags := []string{"--data-dir", dir, "--api-addr", fmt.Sprintf("127.0.0.1:%d", apiPort), "--cluster-addr", fmt.Sprintf("127.0.0.1:%d", clusterPort)}
	out, err := runEdgectl(t, time.Minute, append(append([]string{"restore"}, flags...), file)...)
	if err != nil {
		t.Fatalf("edgectl restore: %v\n%s", err, out)
	}
	if !strings.Contains(out, "edgectl run --") {
		t.Errorf("restore does not say what to run next:\n%s", out)
	}
	out, err = runEdgectl(t, time.Minute, append(append([]string{"restore"}, flags...), file)...)
	if err == nil || !strings.Contains(out, "already has data") {
		t.Errorf("a restore into a dir with data: %v, want a refusal:\n%s", err, out)
	}

	r := startNode(t, nodeOpts{dataDir: dir, apiPort: apiPort, clusterPort: clusterPort})
	r.name = "restored"
	// API sessions are restored with the rest: the old token works.
	status, m = do(t, http.MethodGet, r.client("/current-api-session"), c.token, nil)
	mustStatus(t, "a session from before the snapshot, on the restored node", status, m, http.StatusOK)
	login(t, r, adminUser, c.nodes[0].password)
	for _, path := range kinds {
		got, err := listAll(t, r, c.token, path)
		if err != nil {
			t.Fatal(err)
		}
		if path == "/api-sessions" || path == "/events" {
			// Sessions change after the snapshot (activity, new logins), and
			// the login above is an event of its own: the snapshot's are all there.
			have := map[string]bool{}
			for _, s := range got {
				have[fmt.Sprint(jget(s, "id"))] = true
			}
			for _, s := range before[path] {
				if !have[fmt.Sprint(jget(s, "id"))] {
					t.Errorf("%s: %v is not restored", path, jget(s, "id"))
				}
			}
			continue
		}
		if d := sameLists(before[path], got); d != "" {
			t.Errorf("%s after the restore: %s", path, d)
		}
	}
	// The restore is in the event log.
	waitUntil(t, "the restored event", 10*time.Second, func() error {
		status, m := do(t, http.MethodGet, r.mgmt("/events?filter="+url.QueryEscape(`namespace = "cluster" and action = "restored"`)), c.token, nil)
		if status != http.StatusOK || len(m["data"].([]any)) != 1 || jget(m["data"].([]any)[0], "after", "snapshot") != id+".snapshot" {
			return fmt.Errorf("%d %s", status, js(m))
		}
		return nil
	})
	rc := &testCluster{t: t, nodes: []*node{r}, ids: []string{readNodeID(t, r)}, token: c.token}
	rc.waitMembers(rc.ids, 10*time.Second)
	createIdentity(t, r, c.token, map[string]any{"name": "after-restore", "type": "User", "isAdmin": false})
}

// listedKinds are the list paths of /summary's kinds that have a list route
// (controllers, which describe the running members, are left out).
func listedKinds(t *testing.T, n *node, token string) []string {
	t.Helper()
	status, m := do(t, http.MethodGet, n.mgmt("/summary"), token, nil)
	mustStatus(t, "summary", status, m, http.StatusOK)
	var paths []string
	for table := range m["data"].(map[string]any) {
		if table == "controllers" {
			continue
		}
		path := "/" + kebab(table)
		if status, _ := do(t, http.MethodGet, n.mgmt(path+"?limit=1"), token, nil); status == http.StatusOK {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	if len(paths) < 10 {
		t.Fatalf("only %d of /summary's kinds have a list: %v", len(paths), paths)
	}
	return paths
}

// kebab turns a camelCase table name into its URL path segment.
func kebab(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// populate creates records of most kinds (every kind a test can make
// without outside parties: not CAs, which need a verification) and returns
// the list paths it filled.
func populate(t *testing.T, n *node, token string) map[string]bool {
	t.Helper()
	filled := map[string]bool{"/api-sessions": true, "/identity-types": true, "/posture-check-types": true}
	mk := func(path string, body map[string]any) string {
		t.Helper()
		filled[path] = true
		status, m := do(t, http.MethodPost, n.mgmt(path), token, body)
		if status != http.StatusCreated && status != http.StatusOK {
			t.Fatalf("POST %s %s: %d %s", path, js(body), status, js(m))
		}
		id, _ := jget(m, "data", "id").(string)
		return id
	}
	future := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	alice := mk("/identities", map[string]any{"name": "r-alice", "type": "User", "isAdmin": false, "roleAttributes": []string{"ops"}})
	dev := mk("/identities", map[string]any{"name": "r-device", "type": "Device", "isAdmin": false, "tags": map[string]any{"k": "v"}})
	mk("/authenticators", map[string]any{"identityId": alice, "method": "updb", "username": "r-alice", "password": "password1"})
	mk("/enrollments", map[string]any{"identityId": dev, "method": "ott", "expiresAt": future})
	mk("/auth-policies", map[string]any{"name": "r-ap", "primary": map[string]any{
		"cert":   map[string]any{"allowed": true, "allowExpiredCerts": false},
		"extJwt": map[string]any{"allowed": false, "allowedSigners": []string{}},
		"updb": map[string]any{"allowed": true, "lockoutDurationMinutes": 5, "maxAttempts": 3, "minPasswordLength": 8,
			"requireMixedCase": true, "requireNumberChar": true, "requireSpecialChar": false},
	}, "secondary": map[string]any{"requireExtJwtSigner": nil, "requireTotp": false}})
	mk("/external-jwt-signers", map[string]any{"name": "r-idp", "enabled": true, "issuer": "https://idp.example",
		"audience": "edge", "jwksEndpoint": "https://idp.example/.well-known/jwks.json"})
	ct := mk("/config-types", map[string]any{"name": "r-type.v1"})
	cfg := mk("/configs", map[string]any{"name": "r-config", "configTypeId": ct, "data": map[string]any{"port": 443}})
	svc := mk("/services", map[string]any{"name": "r-service", "roleAttributes": []string{"web"}, "configs": []string{cfg}})
	mk("/edge-routers", map[string]any{"name": "r-edge-router", "roleAttributes": []string{"east"}})
	router := mk("/routers", map[string]any{"name": "r-router"})
	mk("/terminators", map[string]any{"service": svc, "router": router, "binding": "transport", "address": "tcp:10.0.0.1:80"})
	mk("/posture-checks", map[string]any{"typeId": "DOMAIN", "name": "r-posture", "domains": []string{"example.com"}})
	mk("/service-policies", map[string]any{"name": "r-sp", "type": "Dial", "semantic": "AnyOf", "identityRoles": []string{"#ops"}, "serviceRoles": []string{"#web"}})
	mk("/edge-router-policies", map[string]any{"name": "r-erp", "semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#east"}})
	mk("/service-edge-router-policies", map[string]any{"name": "r-serp", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})

	// A session: r-alice may dial r-service through r-sp.
	status, m := do(t, http.MethodPost, n.client("/authenticate?method=password"), "", map[string]any{"username": "r-alice", "password": "password1"})
	mustStatus(t, "r-alice logs in", status, m, http.StatusOK)
	aliceTok, _ := jget(m, "data", "token").(string)
	status, m = do(t, http.MethodPost, n.client("/sessions"), aliceTok, map[string]any{"serviceId": svc, "type": "Dial"})
	mustStatus(t, "r-alice dials r-service", status, m, http.StatusCreated)
	filled["/sessions"] = true
	return filled
}
