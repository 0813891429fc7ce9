// Package integration holds black-box tests: they build the edgectl binary,
// run it as a real process on free loopback ports and talk to it over HTTPS,
// trusting only the CA bundle the node wrote into its data dir.
package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// binPath is the edgectl binary TestMain builds once for the whole package.
var binPath string

const (
	adminUser     = "admin"
	adminPassword = "integration-secret-1"

	mgmtPrefix   = "/edge/management/v1"
	clientPrefix = "/edge/client/v1"

	readyTimeout = 30 * time.Second // first start: PKI, Raft bootstrap, bootstrap records
	stopTimeout  = 20 * time.Second // SIGTERM to exit
	pollInterval = 25 * time.Millisecond
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "edgectl-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: temp dir:", err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "edgectl")
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	build := exec.Command(goTool, "build", "-o", binPath, "edgectl/cmd/edgectl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "integration: building edgectl:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// nodeOpts says how to start a node. The zero value starts a fresh node
// with the package's admin password on new free ports.
type nodeOpts struct {
	// dataDir is the data dir; "" means a new t.TempDir().
	dataDir string
	// apiPort, clusterPort: 0 picks free ports. A restart on an existing
	// data dir must reuse the cluster port: Raft remembers its address.
	apiPort, clusterPort int
	// adminPassword is passed as --admin-password; "" means adminPassword.
	adminPassword string
	// noAdminPassword starts the node with neither --admin-password nor
	// EDGECTL_ADMIN_PASSWORD, so that it generates one on first start.
	noAdminPassword bool
	// args are extra flags for `edgectl run`.
	args []string
	// bin is the edgectl binary to run; "" means the one built from this tree.
	bin string
	// apiSocket is the node's API port, open in the test, passed to the node
	// as systemd passes a socket (socket activation): it stays open across
	// the node's restarts. apiPort must be its port.
	apiSocket *os.File
}

// node is one running edgectl process.
type node struct {
	t           *testing.T
	name        string
	dataDir     string
	apiPort     int
	clusterPort int
	password    string   // the admin password it was started with ("" if generated)
	apiSocket   *os.File // nodeOpts.apiSocket
	args        []string // the extra flags it was started with

	cmd     *exec.Cmd
	stdout  *benchkit.SyncBuffer
	stderr  *benchkit.SyncBuffer
	done    chan struct{} // closed when the process has exited
	waitErr error         // cmd.Wait's result, set before done closes
	httpc   *http.Client  // trusts this node's CA bundle; registered for its address
}

// mgmt is the URL of a Management API path on this node.
func (n *node) mgmt(path string) string {
	return fmt.Sprintf("https://127.0.0.1:%d%s%s", n.apiPort, mgmtPrefix, path)
}

// client is the URL of a Client API path on this node.
func (n *node) client(path string) string {
	return fmt.Sprintf("https://127.0.0.1:%d%s%s", n.apiPort, clientPrefix, path)
}

// host is the node's API address.
func (n *node) host() string { return fmt.Sprintf("127.0.0.1:%d", n.apiPort) }

// exited reports whether the process has ended.
func (n *node) exited() bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

// errPortInUse means the node could not bind a port: pick others and retry.
var errPortInUse = errors.New("port in use")

// startNode starts edgectl as a process and waits until its Management API
// answers /version over TLS verified with the node's own CA bundle. The
// process is killed at the end of the test if still running, and its output
// is printed when the test failed.
func startNode(t *testing.T, opts nodeOpts) *node {
	t.Helper()
	const attempts = 4
	for i := 1; ; i++ {
		o := opts
		if o.dataDir == "" {
			o.dataDir = t.TempDir() // a new one per attempt: a failed start leaves state behind
		}
		if o.apiPort == 0 {
			o.apiPort = freePort(t)
		}
		if o.clusterPort == 0 {
			for o.clusterPort == 0 || o.clusterPort == o.apiPort { // two calls can return the same free port
				o.clusterPort = freePort(t)
			}
		}
		n, err := tryStart(t, o)
		if err == nil {
			return n
		}
		// Only a fresh port pair can fix a bind failure; a restart's ports are fixed.
		if errors.Is(err, errPortInUse) && i < attempts && (opts.apiPort == 0 || opts.clusterPort == 0) && opts.dataDir == "" {
			t.Logf("node start attempt %d: %v; retrying on other ports", i, err)
			continue
		}
		t.Fatalf("starting edgectl: %v", err)
	}
}

func tryStart(t *testing.T, o nodeOpts) (*node, error) {
	t.Helper()
	n := &node{
		t: t, name: fmt.Sprintf("node@%d", o.apiPort), dataDir: o.dataDir,
		apiPort: o.apiPort, clusterPort: o.clusterPort,
		stdout: &benchkit.SyncBuffer{}, stderr: &benchkit.SyncBuffer{}, done: make(chan struct{}),
	}
	args := []string{"run",
		"--data-dir", o.dataDir,
		"--api-addr", fmt.Sprintf("127.0.0.1:%d", o.apiPort),
		"--cluster-addr", fmt.Sprintf("127.0.0.1:%d", o.clusterPort),
	}
	if !o.noAdminPassword {
		n.password = o.adminPassword
		if n.password == "" {
			n.password = adminPassword
		}
		args = append(args, "--admin-password", n.password)
	}
	args = append(args, o.args...)
	n.args = o.args
	bin := o.bin
	if bin == "" {
		bin = binPath
	}
	n.cmd = exec.Command(bin, args...)
	if o.apiSocket != nil {
		// The shell execs edgectl in its own process: LISTEN_PID is its pid.
		n.apiSocket = o.apiSocket
		n.cmd = exec.Command("/bin/sh", append([]string{"-c", `export LISTEN_PID=$$ LISTEN_FDS=1; exec "$0" "$@"`, bin}, args...)...)
		n.cmd.ExtraFiles = []*os.File{o.apiSocket}
	}
	n.cmd.Env = envWithout("EDGECTL_ADMIN_PASSWORD")
	n.cmd.Stdout, n.cmd.Stderr = n.stdout, n.stderr
	if err := n.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		n.waitErr = n.cmd.Wait()
		close(n.done)
	}()
	t.Cleanup(func() {
		if !n.exited() {
			_ = n.cmd.Process.Kill()
			<-n.done
		}
		n.forget()
		if t.Failed() {
			t.Logf("---- %s (%s) stdout ----\n%s", n.name, n.dataDir, n.stdout.String())
			t.Logf("---- %s (%s) stderr ----\n%s", n.name, n.dataDir, n.stderr.String())
		}
	})
	if err := n.waitReady(); err != nil {
		if !n.exited() {
			_ = n.cmd.Process.Kill()
			<-n.done
		}
		n.forget()
		if strings.Contains(n.stderr.String(), "address already in use") {
			return nil, fmt.Errorf("%w: %s", errPortInUse, lastLine(n.stderr.String()))
		}
		return nil, err
	}
	return n, nil
}

// waitReady polls until /version answers 200 over verified TLS, the process
// exits, or readyTimeout passes.
func (n *node) waitReady() error {
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		if last = n.probe(); last == nil {
			return nil
		}
		select {
		case <-n.done:
			return fmt.Errorf("edgectl exited before it was ready (%v): %s", n.waitErr, lastLine(n.stderr.String()))
		case <-deadline.C:
			return fmt.Errorf("edgectl not ready after %s: last probe: %v", readyTimeout, last)
		case <-tick.C:
		}
	}
}

// probe tries one GET /version, registering the node's HTTP client once the CA bundle exists.
func (n *node) probe() error {
	if n.httpc == nil {
		c, err := newTLSClient(filepath.Join(n.dataDir, "pki", "ca-bundle.pem"), 0)
		if err != nil {
			return err // no bundle yet
		}
		n.httpc = c
		registerClient(n.host(), c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.mgmt("/version"), nil)
	resp, err := n.httpc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /version: %s", resp.Status)
	}
	return nil
}

// stop sends SIGTERM and waits for the process to exit. A non-zero exit
// or a hang longer than stopTimeout fails the test.
func (n *node) stop() {
	n.t.Helper()
	if n.exited() {
		n.t.Fatalf("%s had already exited (%v) before stop", n.name, n.waitErr)
	}
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		n.t.Fatalf("SIGTERM %s: %v", n.name, err)
	}
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-n.done:
	case <-timer.C:
		_ = n.cmd.Process.Kill()
		<-n.done
		n.t.Fatalf("%s did not exit within %s of SIGTERM", n.name, stopTimeout)
	}
	n.forget()
	if n.waitErr != nil {
		n.t.Fatalf("%s exited with %v after SIGTERM; want exit status 0", n.name, n.waitErr)
	}
}

// kill ends the process with SIGKILL (a crash) and waits for it.
func (n *node) kill() {
	n.t.Helper()
	_ = n.cmd.Process.Kill()
	<-n.done
	n.forget()
}

// restart starts a new process on the same data dir and ports, after stop or kill.
func (n *node) restart(t *testing.T, opts nodeOpts) *node {
	t.Helper()
	if !n.exited() {
		t.Fatalf("restart of %s while it is still running", n.name)
	}
	opts.dataDir, opts.apiPort, opts.clusterPort, opts.apiSocket = n.dataDir, n.apiPort, n.clusterPort, n.apiSocket
	if opts.adminPassword == "" && !opts.noAdminPassword {
		opts.adminPassword = n.password
	}
	return startNode(t, opts)
}

// freePort is a free loopback port below the kernel's ephemeral range
// (benchkit.FreePort). Another process may take it before the node binds
// it; startNode retries on that.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := benchkit.FreePort()
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	return p
}

func envWithout(name string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, name+"=") {
			env = append(env, kv)
		}
	}
	return env
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// HTTP clients per node address, each trusting only that node's CA bundle.
var (
	clientsMu sync.Mutex
	clients   = map[string]*http.Client{}
)

func clientFor(host string) *http.Client {
	clientsMu.Lock()
	defer clientsMu.Unlock()
	return clients[host]
}

func registerClient(host string, c *http.Client) {
	clientsMu.Lock()
	defer clientsMu.Unlock()
	clients[host] = c
}

// forget unregisters the node's client (unless a newer node on the same
// address replaced it) and closes its idle connections.
func (n *node) forget() {
	if n.httpc == nil {
		return
	}
	clientsMu.Lock()
	if clients[n.host()] == n.httpc {
		delete(clients, n.host())
	}
	clientsMu.Unlock()
	n.httpc.CloseIdleConnections()
}

// newTLSClient is an HTTP client that verifies the server with the CA bundle
// at bundlePath (and nothing else). maxConns > 0 sizes its keep-alive pool.
func newTLSClient(bundlePath string, maxConns int) (*http.Client, error) {
	pem, err := os.ReadFile(bundlePath)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no certificates", bundlePath)
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: max(maxConns, 4),
		IdleConnTimeout:     30 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, nil
}

// doErr sends one request with the client of the node at the URL's host
// (doWith). body: nil, []byte or string (sent as is), or anything else (sent
// as JSON). The answer is decoded as a JSON object.
func doErr(method, url, token string, body any) (int, map[string]any, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return 0, nil, err
	}
	c := clientFor(req.URL.Host)
	if c == nil {
		return 0, nil, fmt.Errorf("no running node at %s", req.URL.Host)
	}
	return doWith(c, method, url, token, body)
}

// creator returns a function that creates a record of a Management API
// collection on n and returns its id; it fails the test unless the answer
// is 201.
func creator(t *testing.T, n *node, token string) func(path string, body map[string]any) string {
	return func(path string, body map[string]any) string {
		t.Helper()
		st, m := do(t, "POST", n.mgmt(path), token, body)
		mustStatus(t, "create "+path, st, m, 201)
		return jget(m, "data", "id").(string)
	}
}

// do is doErr that fails the test on a transport or decoding error.
func do(t *testing.T, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	status, m, err := doErr(method, url, token, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return status, m
}

// login authenticates with a password on the Management API and returns the token.
func login(t *testing.T, n *node, user, pass string) string {
	t.Helper()
	status, m := do(t, http.MethodPost, n.mgmt("/authenticate?method=password"), "",
		map[string]any{"username": user, "password": pass})
	if status != http.StatusOK {
		t.Fatalf("login as %q: status %d: %s", user, status, js(m))
	}
	tok, _ := jget(m, "data", "token").(string)
	if tok == "" {
		t.Fatalf("login as %q: no data.token in %s", user, js(m))
	}
	return tok
}

// mustStatus fails the test unless status is want.
func mustStatus(t *testing.T, what string, status int, m map[string]any, want int) {
	t.Helper()
	if status != want {
		t.Fatalf("%s: status %d, want %d: %s", what, status, want, js(m))
	}
}

// wantError checks an error answer: status, error.code and, when field is
// not "", that error.cause.field is field or starts with field+"." / "[".
func wantError(t *testing.T, what string, status int, m map[string]any, wantStatus int, code, field string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("%s: status %d, want %d: %s", what, status, wantStatus, js(m))
		return
	}
	if got, _ := jget(m, "error", "code").(string); got != code {
		t.Errorf("%s: error.code %q, want %q: %s", what, got, code, js(m))
	}
	if field != "" {
		got, _ := jget(m, "error", "cause", "field").(string)
		if got != field && !strings.HasPrefix(got, field+".") && !strings.HasPrefix(got, field+"[") {
			t.Errorf("%s: error.cause.field %q, want %q: %s", what, got, field, js(m))
		}
	}
	if jget(m, "meta", "apiVersion") == nil {
		t.Errorf("%s: error answer without meta.apiVersion: %s", what, js(m))
	}
}

// createIdentity creates an identity and returns its id.
func createIdentity(t *testing.T, n *node, token string, body map[string]any) string {
	t.Helper()
	status, m := do(t, http.MethodPost, n.mgmt("/identities"), token, body)
	mustStatus(t, fmt.Sprintf("create identity %v", body["name"]), status, m, http.StatusCreated)
	id, _ := jget(m, "data", "id").(string)
	if id == "" {
		t.Fatalf("create identity: no data.id in %s", js(m))
	}
	return id
}

// getIdentity returns the data of GET /identities/{id}, which must answer 200.
func getIdentity(t *testing.T, n *node, token, id string) map[string]any {
	t.Helper()
	status, m := do(t, http.MethodGet, n.mgmt("/identities/"+id), token, nil)
	mustStatus(t, "get identity "+id, status, m, http.StatusOK)
	d, ok := m["data"].(map[string]any)
	if !ok {
		t.Fatalf("get identity %s: data is not an object: %s", id, js(m))
	}
	return d
}

// countIdentities is meta.pagination.totalCount of the identity list.
func countIdentities(t *testing.T, n *node, token string) int {
	t.Helper()
	status, m := do(t, http.MethodGet, n.mgmt("/identities?limit=1"), token, nil)
	mustStatus(t, "count identities", status, m, http.StatusOK)
	return jint(t, m, "meta", "pagination", "totalCount")
}

// jget walks decoded JSON: object keys, or indexes for arrays. nil when absent.
func jget(v any, path ...string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// jint is jget for an integer; it fails the test when the value is not a number.
func jint(t *testing.T, v any, path ...string) int {
	t.Helper()
	f, ok := jget(v, path...).(float64)
	if !ok {
		t.Fatalf("%s: not a number in %s", strings.Join(path, "."), js(v))
	}
	return int(f)
}

// js renders decoded JSON for messages.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}
