package integration

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"edgectl"
	"edgectl/fsm"
)

// The release the upgrade test starts from: v0.1.0, the oldest release a
// cluster may upgrade from (docs/operations.md, "Upgrades and the
// compatibility floor"; CHANGELOG.md), built from its commit. Its binary
// publishes release v0.1.0 and command version 8.
const (
	upgradeFrom               = "d6ea2f4"
	upgradeFromRelease        = "v0.1.0"
	upgradeFromCommandVersion = 8
)

// buildAt builds the edgectl binary of commit into a temporary directory,
// from `git archive` of this repository (the test needs the history: a
// clean clone has it).
func buildAt(t *testing.T, commit string) string {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the upgrade test builds an earlier commit and needs this repository's git history: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("sh", "-c", fmt.Sprintf("git -C %q archive %s | tar -x -C %q", strings.TrimSpace(string(root)), commit, src))
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", commit, err, out)
	}
	bin := filepath.Join(dir, "edgectl-"+commit)
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	build := exec.Command(goTool, "build", "-o", bin, "./cmd/edgectl")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building edgectl at %s: %v\n%s", commit, err, out)
	}
	return bin
}

// memberRelease is what a member publishes in its controller record.
type memberRelease struct {
	version        string
	commandVersion float64
}

// controllerVersions maps member id to the release and command version n's
// /controllers shows.
func controllerVersions(t *testing.T, n *node, token string) map[string]memberRelease {
	t.Helper()
	status, m := do(t, http.MethodGet, n.mgmt("/controllers"), token, nil)
	mustStatus(t, "controllers", status, m, http.StatusOK)
	out := map[string]memberRelease{}
	for _, v := range m["data"].([]any) {
		ctl := v.(map[string]any)
		r := memberRelease{}
		r.version, _ = ctl["version"].(string)
		r.commandVersion, _ = ctl["commandVersion"].(float64)
		out[ctl["id"].(string)] = r
	}
	return out
}

// A cluster of the oldest release a cluster may upgrade from (v0.1.0) is
// upgraded one node at a time under writes: old commands work throughout,
// through old and new nodes, each forwarding to a leader of the other
// release; no acknowledged write is lost; and the cluster ends on the new
// binary, every member publishing its release and command version. (No
// command is newer than v0.1.0's yet: that the gate refuses one some member
// cannot apply is TestCommandGate_RefusesACommandAMemberCannotApply's.)
func TestRollingUpgradeFromAnEarlierRelease(t *testing.T) {
	t.Parallel()
	old := buildAt(t, upgradeFrom)
	c := startCluster(t, clusterOpts{size: 3, bin: old})

	client, err := newTLSClient(filepath.Join(c.nodes[0].dataDir, "pki", "ca-bundle.pem"), 8)
	if err != nil {
		t.Fatal(err)
	}
	client.Timeout = 20 * time.Second
	var mu sync.Mutex
	hosts := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var hs []string
		for _, n := range c.nodes {
			hs = append(hs, n.host())
		}
		return hs
	}
	stop := make(chan struct{})
	const writers = 3
	results := make([][]loadWrite, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				hs := hosts()
				name := fmt.Sprintf("upg-w%d-%06d", w, i)
				st, m, err := postJSON(client, fmt.Sprintf("https://%s%s/identities", hs[(w+i)%len(hs)], mgmtPrefix), c.token,
					map[string]any{"name": name, "type": "Device", "isAdmin": false})
				lw := classifyWrite(name, st, m, err)
				results[w] = append(results[w], lw)
				if lw.outcome != writeApplied {
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	upgrade := func(i int) {
		t.Helper()
		c.nodes[i].stop()
		mu.Lock()
		defer mu.Unlock()
		nn := c.nodes[i].restart(t, nodeOpts{})
		nn.name = c.nodes[i].name + "(new)"
		c.nodes[i] = nn
	}

	// An enrollment made by the old release.
	legacy := createIdentity(t, c.nodes[0], c.token, map[string]any{"name": "legacy-enrollee", "type": "Device", "isAdmin": false,
		"enrollment": map[string]any{"ott": true}})

	oldRelease := memberRelease{upgradeFromRelease, upgradeFromCommandVersion}
	newRelease := memberRelease{edgectl.Version, fsm.CommandVersion}
	if newRelease == oldRelease {
		t.Fatalf("this tree's release %v is the one the test upgrades from", newRelease)
	}
	waitUntil(t, "every node publishes the old release", 15*time.Second, func() error {
		vs := controllerVersions(t, c.nodes[0], c.token)
		for _, id := range c.ids {
			if vs[id] != oldRelease {
				return fmt.Errorf("before the upgrade, %s publishes %v, want %v", id, vs[id], oldRelease)
			}
		}
		return nil
	})

	// One node upgraded: a mixed cluster.
	upgrade(2)
	newNode := c.nodes[2]
	waitUntil(t, "the upgraded node publishes its release", 15*time.Second, func() error {
		vs := controllerVersions(t, newNode, c.token)
		if vs[c.ids[2]] != newRelease || vs[c.ids[0]] != oldRelease || vs[c.ids[1]] != oldRelease {
			return fmt.Errorf("releases %v", vs)
		}
		return nil
	})
	// Old commands work through the new node and through an old one.
	createIdentity(t, newNode, c.token, map[string]any{"name": "mixed-new", "type": "User", "isAdmin": false})
	createIdentity(t, c.nodes[0], c.token, map[string]any{"name": "mixed-old", "type": "User", "isAdmin": false})
	status, m := do(t, http.MethodGet, newNode.mgmt("/identities?consistency=linearizable&filter=name%3D%22mixed-old%22"), c.token, nil)
	mustStatus(t, "a linearizable read on the new node", status, m, http.StatusOK)
	if n := jint(t, m, "meta", "pagination", "totalCount"); n != 1 {
		t.Fatalf("linearizable read on the new node found %d", n)
	}
	// The newest of v0.1.0's commands, taken by both.
	for _, n := range []*node{newNode, c.nodes[0]} {
		status, m = do(t, http.MethodPost, n.mgmt("/cluster/join-tokens"), c.token, map[string]any{"ttlSeconds": 600})
		mustStatus(t, "a join token in a mixed cluster", status, m, http.StatusCreated)
		tokenID, _ := jget(m, "data", "id").(string)
		status, m = do(t, http.MethodDelete, n.mgmt("/cluster/join-tokens/"+tokenID), c.token, nil)
		mustStatus(t, "revoking a join token in a mixed cluster", status, m, http.StatusOK)
	}

	// Edge routers with a tunneler, made in the mixed cluster through the
	// new node (its router identity commands wait: it uses the old ones)
	// and through an old one; the upgrade step gives them identities later.
	var tunnelers []string
	for i, n := range []*node{newNode, c.nodes[0]} {
		status, m := do(t, http.MethodPost, n.mgmt("/edge-routers"), c.token, map[string]any{"name": fmt.Sprintf("mixed-tun-%d", i), "isTunnelerEnabled": true})
		mustStatus(t, "a tunneler edge router in a mixed cluster", status, m, http.StatusCreated)
		tunnelers = append(tunnelers, jget(m, "data", "id").(string))
	}

	// The others, one by one.
	upgrade(0)
	upgrade(1)
	waitUntil(t, "every node publishes the new release", 15*time.Second, func() error {
		for _, n := range c.nodes {
			vs := controllerVersions(t, n, c.token)
			for _, id := range c.ids {
				if vs[id] != newRelease {
					return fmt.Errorf("%s shows %v", n.name, vs)
				}
			}
		}
		return nil
	})
	status, m = do(t, http.MethodPost, c.nodes[0].mgmt("/cluster/join-tokens"), c.token, map[string]any{"ttlSeconds": 600})
	mustStatus(t, "a join token once every node is upgraded", status, m, http.StatusCreated)
	tokenID, _ := jget(m, "data", "id").(string)
	status, m = do(t, http.MethodDelete, c.nodes[0].mgmt("/cluster/join-tokens/"+tokenID), c.token, nil)
	mustStatus(t, "revoking the join token once every node is upgraded", status, m, http.StatusOK)
	// The built-in config types, made by v0.1.0 with the cluster, are on
	// every node.
	waitUntil(t, "the built-in config types on every node", 30*time.Second, func() error {
		for _, n := range c.nodes {
			status, m := do(t, http.MethodGet, n.mgmt(`/config-types?filter=name%3D%22intercept.v1%22`), c.token, nil)
			if status != http.StatusOK || jint(t, m, "meta", "pagination", "totalCount") != 1 {
				return fmt.Errorf("%s: %d %s", n.name, status, js(m))
			}
		}
		return nil
	})
	// The tunneler routers made mid-upgrade have their identities now.
	waitUntil(t, "the identities of the routers made mid-upgrade", 30*time.Second, func() error {
		for _, id := range tunnelers {
			status, m := do(t, http.MethodGet, c.nodes[1].mgmt("/identities/"+id), c.token, nil)
			if status != http.StatusOK || jget(m, "data", "typeId") != "Router" {
				return fmt.Errorf("identity of router %s: %d %s", id, status, js(m))
			}
		}
		return nil
	})
	// and the leader that made them said so in its log.
	waitUntil(t, "the upgrade step's line in a node's log", 15*time.Second, func() error {
		var said string
		for _, n := range c.nodes {
			for _, line := range strings.Split(n.stderr.String(), "\n") {
				if strings.Contains(line, "upgrade step: upgrading edge routers with a tunneler: their identities made") {
					said += line
				}
			}
		}
		for _, id := range tunnelers {
			if !strings.Contains(said, id) {
				return fmt.Errorf("no node logged the identity of router %s it made (%q)", id, said)
			}
		}
		return nil
	})
	// The old release's enrollment JWT verifies as OpenZiti's enrollers
	// check it (issuer's server certificate key, bare issuer).
	waitUntil(t, "the old release's enrollment JWT verifies as the SDK checks it", 30*time.Second, func() error {
		tok, _ := jget(getIdentity(t, c.nodes[1], c.token, legacy), "enrollment", "ott", "jwt").(string)
		_, err := verifyAsSDK(tok)
		return err
	})
	close(stop)
	wg.Wait()

	var all []loadWrite
	applied := 0
	for _, rs := range results {
		all = append(all, rs...)
		for _, r := range rs {
			if r.outcome == writeApplied {
				applied++
			}
		}
	}
	t.Logf("%d writes during the upgrade, %d acknowledged", len(all), applied)
	if applied < 30 {
		t.Fatalf("only %d writes succeeded: the test proves nothing", applied)
	}
	lists := c.convergedIdentities(30 * time.Second)
	checkWrites(t, all, lists[0])
}

// verifyAsSDK checks an enrollment JWT the way openziti/sdk-golang's
// enroller does: the key of the TLS certificate that the server at "iss"
// presents must verify it. It returns the claims.
func verifyAsSDK(token string) (jwt.MapClaims, error) {
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser().ParseWithClaims(token, claims, func(tok *jwt.Token) (any, error) {
		iss, _ := tok.Claims.(jwt.MapClaims)["iss"].(string)
		if strings.Count(iss, "/") != 2 {
			return nil, fmt.Errorf("iss %q is not a bare https://host:port", iss)
		}
		insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // as the SDK does
		resp, err := insecure.Get(iss)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0].PublicKey, nil
	})
	return claims, err
}
