package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestRestartKeepsIdentitiesAndSessions(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := login(t, n, adminUser, n.password)
	ids := map[string]string{}
	for _, name := range []string{"restart-a", "restart-b", "restart-c"} {
		ids[name] = createIdentity(t, n, tok, map[string]any{"name": name, "type": "User", "isAdmin": false, "roleAttributes": []string{"kept"}})
	}
	status, m := do(t, http.MethodPatch, n.mgmt("/identities/"+ids["restart-b"]), tok, map[string]any{"defaultHostingCost": 42})
	mustStatus(t, "patch", status, m, http.StatusOK)
	status, m = do(t, http.MethodDelete, n.mgmt("/identities/"+ids["restart-c"]), tok, nil)
	mustStatus(t, "delete", status, m, http.StatusOK)

	n.stop() // SIGTERM: must exit 0 within the deadline
	n2 := n.restart(t, nodeOpts{})

	// The old token still works: API sessions are replicated state. It must
	// work on the first request once the node answers, not some time later.
	firstAfterRestart(t, "the token from before the restart", func() (int, map[string]any) {
		return do(t, http.MethodGet, n2.client("/current-api-session"), tok, nil)
	})
	names, total := listNames(t, n2, tok, url.Values{"filter": {`name contains "restart-"`}})
	if total != 2 || strings.Join(names, ",") != "restart-a,restart-b" {
		t.Errorf("after restart: %v (totalCount %d), want [restart-a restart-b]", names, total)
	}
	if got := getIdentity(t, n2, tok, ids["restart-b"]); jget(got, "defaultHostingCost") != float64(42) {
		t.Errorf("after restart the PATCH is lost: %s", js(got))
	}
	status, m = do(t, http.MethodGet, n2.mgmt("/identities/"+ids["restart-c"]), tok, nil)
	wantError(t, "deleted identity after restart", status, m, http.StatusNotFound, "NOT_FOUND", "")

	// Writes still work, and names stay unique against the restored state.
	createIdentity(t, n2, tok, map[string]any{"name": "restart-d", "type": "User", "isAdmin": false})
	status, m = do(t, http.MethodPost, n2.mgmt("/identities"), tok, map[string]any{"name": "restart-a", "type": "User", "isAdmin": false})
	wantError(t, "duplicate of a restored name", status, m, http.StatusConflict, "CONFLICT", "")
	n2.stop()
}

func TestKillThenRestartKeepsCommittedWrites(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := login(t, n, adminUser, n.password)
	var ids []string
	for i := range 5 {
		ids = append(ids, createIdentity(t, n, tok, map[string]any{"name": fmt.Sprintf("crash-%d", i), "type": "Device", "isAdmin": false}))
	}
	n.kill() // no shutdown: only what Raft committed before the 201 survives
	n2 := n.restart(t, nodeOpts{})
	firstAfterRestart(t, "an identity created before the crash", func() (int, map[string]any) {
		return do(t, http.MethodGet, n2.mgmt("/identities/"+ids[0]), tok, nil)
	})
	for _, id := range ids {
		getIdentity(t, n2, tok, id)
	}
	n2.stop()
}

// firstAfterRestart checks that the first request to a restarted node, made
// as soon as it answers /version, already sees the state from before the
// restart (200). If not, that is a server bug: it fails the test, then waits
// to report how long the node served stale state, so the rest of the test
// can still check what survived.
func firstAfterRestart(t *testing.T, what string, req func() (int, map[string]any)) {
	t.Helper()
	status, m := req()
	if status == http.StatusOK {
		return
	}
	t.Errorf("right after the restart (the node answers /version), %s gets %d, want 200: %s", what, status, js(m))
	start := time.Now()
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			t.Fatalf("%s still gets %d 15s after the restart: the state is lost: %s", what, status, js(m))
		case <-tick.C:
		}
		if status, m = req(); status == http.StatusOK {
			t.Errorf("%s works %s later: the node served requests before it had replayed its Raft log", what, time.Since(start).Round(time.Millisecond))
			return
		}
	}
}

// passwordLine finds the generated password in the first start's stdout.
var passwordLine = regexp.MustCompile(`created with the password:\s+(\S+)`)

// waitStdout polls the node's stdout until it contains s.
func waitStdout(t *testing.T, n *node, s string) string {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if out := n.stdout.String(); strings.Contains(out, s) {
			return out
		}
		select {
		case <-deadline.C:
			t.Fatalf("stdout never contained %q; it is:\n%s", s, n.stdout.String())
		case <-tick.C:
		}
	}
}

func TestGeneratedAdminPasswordIsPrintedOnce(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{noAdminPassword: true})
	// "edgectl is running" comes after the password on the same stream.
	out := waitStdout(t, n, "edgectl is running")
	match := passwordLine.FindStringSubmatch(out)
	if match == nil {
		t.Fatalf("first start without --admin-password printed no generated password; stdout:\n%s", out)
	}
	password := match[1]
	if strings.Count(out, password) != 1 {
		t.Errorf("the generated password appears %d times on stdout, want once", strings.Count(out, password))
	}
	if strings.Contains(n.stderr.String(), password) {
		t.Errorf("the generated password is in the log (stderr) too")
	}
	tok := login(t, n, adminUser, password)
	status, m := do(t, http.MethodGet, n.client("/current-identity"), tok, nil)
	mustStatus(t, "current identity with the generated password", status, m, http.StatusOK)
	n.stop()

	n2 := n.restart(t, nodeOpts{noAdminPassword: true})
	out = waitStdout(t, n2, "edgectl is running")
	if strings.Contains(out, password) || passwordLine.MatchString(out) {
		t.Errorf("the second start printed the password again; stdout:\n%s", out)
	}
	firstAfterRestart(t, "login with the generated password", func() (int, map[string]any) {
		return do(t, http.MethodPost, n2.mgmt("/authenticate?method=password"), "",
			map[string]any{"username": adminUser, "password": password})
	})
	n2.stop()
}

func TestOtherNodeIDOnExistingDataDirIsRefused(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	n.stop()
	nodeJSON := filepath.Join(n.dataDir, "node.json")
	before, err := os.ReadFile(nodeJSON)
	if err != nil {
		t.Fatalf("the data dir has no node.json: %v", err)
	}
	var info struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(before, &info); err != nil || info.ID == "" {
		t.Fatalf("node.json: %v: %s", err, before)
	}

	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "run", "--data-dir", n.dataDir, "--node-id", "other",
		"--api-addr", fmt.Sprintf("127.0.0.1:%d", n.apiPort), "--cluster-addr", fmt.Sprintf("127.0.0.1:%d", n.clusterPort),
		"--admin-password", adminPassword)
	cmd.Env = envWithout("EDGECTL_ADMIN_PASSWORD")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("run with --node-id other did not exit within %s (it should refuse at once); output:\n%s", stopTimeout, out)
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() == 0 {
		t.Fatalf("run with --node-id other on %s's data dir: %v, want a non-zero exit; output:\n%s", info.ID, err, out)
	}
	msg := string(out)
	if !strings.Contains(msg, "--node-id") || !strings.Contains(msg, info.ID) {
		t.Errorf("the refusal should name the flag and the data dir's node id %q; output:\n%s", info.ID, msg)
	}
	after, _ := os.ReadFile(nodeJSON)
	if string(after) != string(before) {
		t.Errorf("the refused start changed node.json: %s -> %s", before, after)
	}
}

func TestBodyOverOneMiBIsRejectedAndNodeStaysUp(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := login(t, n, adminUser, n.password)
	before := countIdentities(t, n, tok)

	// Valid JSON, a valid identity but for its size: 1 MiB of tag value.
	big := `{"name":"too-big","type":"User","isAdmin":false,"tags":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`
	status, m, err := doErr(http.MethodPost, n.mgmt("/identities"), tok, big)
	if err != nil {
		t.Fatalf("POST of a %d-byte body: %v (want a 4xx answer, not a broken connection)", len(big), err)
	}
	if status < 400 || status > 499 {
		t.Errorf("POST of a %d-byte body: status %d, want 4xx: %s", len(big), status, js(m))
	}
	if jget(m, "error", "code") == nil {
		t.Errorf("POST of a %d-byte body: no error envelope: %s", len(big), js(m))
	}

	// The node is still up and nothing was stored.
	status, m = do(t, http.MethodGet, n.mgmt("/version"), "", nil)
	mustStatus(t, "version after the big body", status, m, http.StatusOK)
	if got := countIdentities(t, n, tok); got != before {
		t.Errorf("identity count after the big body = %d, want %d", got, before)
	}
	// Writes still work.
	createIdentity(t, n, tok, map[string]any{"name": "after-too-big", "type": "User", "isAdmin": false})
	n.stop()
}

// A second `edgectl run` on the data dir of a running node exits non-zero
// within 5 s with one line naming the dir and the holder's pid, and the
// running node keeps serving.
func TestSecondRunOnADataDirInUseIsRefused(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "run", "--data-dir", n.dataDir,
		"--api-addr", "127.0.0.1:0", "--cluster-addr", "127.0.0.1:0", "--admin-password", adminPassword)
	cmd.Env = envWithout("EDGECTL_ADMIN_PASSWORD")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("a second run on a data dir in use did not exit within 5 s; stderr:\n%s", stderr.String())
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() == 0 {
		t.Fatalf("second run: %v, want a non-zero exit; stderr:\n%s", err, stderr.String())
	}
	msg := lastLine(stderr.String())
	if !strings.Contains(msg, n.dataDir) || !strings.Contains(msg, fmt.Sprintf("process %d", n.cmd.Process.Pid)) {
		t.Errorf("the refusal should name the data dir and the pid %d: %q", n.cmd.Process.Pid, msg)
	}
	if err := n.probe(); err != nil {
		t.Errorf("the running node stopped serving: %v", err)
	}
}

// A new cluster gets the built-in identity type and config types right after
// its bootstrap.
func TestNewClusterHasTheBuiltins(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := login(t, n, adminUser, n.password)
	waitUntil(t, "the built-in config types", 10*time.Second, func() error {
		status, m := do(t, http.MethodGet, n.mgmt(`/config-types?filter=name%3D%22host.v2%22`), tok, nil)
		if status != http.StatusOK || jint(t, m, "meta", "pagination", "totalCount") != 1 {
			return fmt.Errorf("%d %s", status, js(m))
		}
		return nil
	})
	status, m := do(t, http.MethodGet, n.mgmt("/identity-types/Default"), tok, nil)
	mustStatus(t, "identity type Default", status, m, http.StatusOK)
}

// A first start reads well: raft's routine steps stay out of the info log,
// nothing is a warning, and the closing banner holds the password once and
// the login line to paste.
func TestFirstStartReadsWell(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{noAdminPassword: true})
	out := waitStdout(t, n, "Log in with")
	want := fmt.Sprintf("edgectl login https://127.0.0.1:%d -u %s --ca %s", n.apiPort, adminUser, filepath.Join(n.dataDir, "pki", "ca-bundle.pem"))
	if !strings.Contains(out, want) || !passwordLine.MatchString(out) {
		t.Fatalf("the banner lacks the password or the line %q:\n%s", want, out)
	}
	n.stop()
	logged := n.stderr.String()
	for _, bad := range []string{"[WARN]", "[ERROR]", "entering follower state", "entering candidate state"} {
		if strings.Contains(logged, bad) {
			t.Errorf("the first start logged %q:\n%s", bad, logged)
		}
	}
}
