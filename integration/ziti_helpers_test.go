package integration

import (
	"edgectl/bench/benchkit"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// zitiBinary is OpenZiti's `ziti` (v1.7.2: router, tunnelers, enroll),
// built once and cached by scripts/ziti.sh. `make test` builds it first;
// without it the data-plane tests skip, except in CI (CI=true), where
// they fail: the data plane must be checked there.
func zitiBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("EDGECTL_ZITI")
	if p == "" {
		base := os.Getenv("EDGECTL_CACHE")
		if base == "" {
			if d, err := os.UserCacheDir(); err == nil {
				base = filepath.Join(d, "edgectl")
			}
		}
		p = filepath.Join(base, "ziti-v1.7.2", "ziti")
	}
	if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
		msg := fmt.Sprintf("OpenZiti's ziti binary is not at %s: `sh scripts/ziti.sh` builds it (make test does)", p)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// zitiRouter is a `ziti router` process with its own directory.
type zitiRouter struct {
	t        *testing.T
	bin      string
	dir      string
	name     string
	id       string
	edgeAddr string // the edge listener's host:port
	// config writes its configuration (nil: benchkit.ZitiRouterConfig).
	config func(ctrl string) string
	cmd    *exec.Cmd
	out    *benchkit.SyncBuffer
	done   chan struct{}
}

// newZitiRouter creates edge router name on n (tunneler enabled, role
// attribute "public"), enrolls a router directory for it with
// `ziti router enroll` and returns it, not yet running.
func newZitiRouter(t *testing.T, n *node, token, name string) *zitiRouter {
	t.Helper()
	r := createZitiRouter(t, n, token, name, "public")
	r.enroll(n, token)
	return r
}

// startZitiRouter is newZitiRouter, started, once n shows it online (within
// 10 s).
func startZitiRouter(t *testing.T, n *node, token, name string) *zitiRouter {
	t.Helper()
	r := newZitiRouter(t, n, token, name)
	r.start()
	waitOnline(t, n, token, r.id, true, 10*time.Second)
	return r
}

// createZitiRouter creates edge router name on n, with role attribute
// attr, and its directory; it is not enrolled yet.
func createZitiRouter(t *testing.T, n *node, token, name, attr string) *zitiRouter {
	t.Helper()
	bin := zitiBinary(t)
	st, m := do(t, "POST", n.mgmt("/edge-routers"), token, map[string]any{"name": name, "isTunnelerEnabled": true, "roleAttributes": []string{attr}})
	mustStatus(t, "create edge router", st, m, 201)
	return &zitiRouter{t: t, bin: bin, dir: t.TempDir(), name: name, id: jget(m, "data", "id").(string), edgeAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
}

// enroll writes the router's config and enrolls it with the edge router's current JWT.
func (r *zitiRouter) enroll(n *node, token string) {
	t := r.t
	t.Helper()
	st, m := do(t, "GET", n.mgmt("/edge-routers/"+r.id), token, nil)
	mustStatus(t, "read edge router", st, m, 200)
	jwt, _ := jget(m, "data", "enrollmentJwt").(string)
	if jwt == "" {
		t.Fatalf("edge router %s has no enrollment JWT: %s", r.name, js(m))
	}
	if err := os.WriteFile(filepath.Join(r.dir, "router.jwt"), []byte(jwt), 0o600); err != nil {
		t.Fatal(err)
	}
	config := benchkit.ZitiRouterConfig(r.dir, n.host(), r.edgeAddr)
	if r.config != nil {
		config = r.config(n.host())
	}
	if err := os.WriteFile(filepath.Join(r.dir, "config.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(r.bin, "router", "enroll", filepath.Join(r.dir, "config.yml"), "--jwt", filepath.Join(r.dir, "router.jwt"))
	cmd.Dir = r.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ziti router enroll: %v\n%s", err, out)
	}
}

// start runs the router (with extra `ziti router run` flags); it is
// stopped at the end of the test.
func (r *zitiRouter) start(flags ...string) {
	t := r.t
	t.Helper()
	r.out, r.done = &benchkit.SyncBuffer{}, make(chan struct{})
	_ = os.Remove(r.agentSocket()) // a killed router leaves its socket behind
	// The CLI agent on a socket of its own, with the debug operations, lets
	// the test read the router's API sessions (dumpAPISessions).
	args := append([]string{"router", "run", filepath.Join(r.dir, "config.yml"), "--debug-ops", "--cli-agent-addr", "unix:" + r.agentSocket()}, flags...)
	r.cmd = exec.Command(r.bin, args...)
	r.cmd.Dir = r.dir
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := r.done
	cmd := r.cmd
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("---- router %s ----\n%s", r.name, tail(r.out.String(), 60))
		}
	})
}

// stop ends the router process.
func (r *zitiRouter) stop() {
	if r.cmd == nil {
		return
	}
	select {
	case <-r.done:
	default:
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func (r *zitiRouter) agentSocket() string { return filepath.Join(r.dir, "agent.sock") }

// dumpAPISessions is the router's own list of the API sessions it knows,
// one "N: id: ID, token: TOKEN" line each: the debug operation behind
// `ziti agent router dump-api-sessions`, asked on the router's agent socket.
// (The v1.7.2 CLI sends it as an asynchronous operation, which the router
// answers by waiting for a channel hello, so the CLI prints nothing.) The
// agent protocol: its magic bytes, the custom-operation signal 0x12, the
// router's application id 2, the operation 128; the answer is text.
func (r *zitiRouter) dumpAPISessions() (string, error) {
	return agentCall(r.agentSocket(), 0x12, 2, 128)
}

// knowsAPISession reports whether the router's list holds API session id.
func (r *zitiRouter) knowsAPISession(id string) (bool, error) {
	out, err := r.dumpAPISessions()
	if err != nil {
		return false, err
	}
	return strings.Contains(out, "id: "+id+","), nil
}

// logged reports whether the router's output has a line containing s.
func (r *zitiRouter) logged(s string) bool { return strings.Contains(r.out.String(), s) }

// edgeRouterState reads router id on n: isOnline and syncStatus.
func edgeRouterState(n *node, token, id string) (online bool, sync string, err error) {
	st, m, err := doErr("GET", n.mgmt("/edge-routers/"+id), token, nil)
	if err != nil {
		return false, "", err
	}
	if st != 200 {
		return false, "", fmt.Errorf("GET edge router: %d %s", st, js(m))
	}
	online, _ = jget(m, "data", "isOnline").(bool)
	sync, _ = jget(m, "data", "syncStatus").(string)
	return online, sync, nil
}

// waitOnline waits until n reports router id online (want true) or offline.
func waitOnline(t *testing.T, n *node, token, id string, want bool, timeout time.Duration) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("router %s isOnline=%v on %s", id, want, n.name), timeout, func() error {
		online, _, err := edgeRouterState(n, token, id)
		if err != nil {
			return err
		}
		if online != want {
			return errors.New("isOnline is " + fmt.Sprint(online))
		}
		return nil
	})
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// zitiCLI logs OpenZiti's `ziti` CLI in to node n as the admin, in a home
// of its own, and returns a function that runs it and returns its output
// (the test fails when it fails).
func zitiCLI(t *testing.T, n *node) func(args ...string) string {
	t.Helper()
	run := zitiCLIStatus(t, n)
	return func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("ziti %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
}

// zitiCLIStatus is zitiCLI for commands that may fail: it returns the
// output and the command's error.
func zitiCLIStatus(t *testing.T, n *node) func(args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	ziti := func(args ...string) (string, error) {
		cmd := exec.Command(zitiBinary(t), args...)
		cmd.Env = append(os.Environ(), "HOME="+home)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := ziti("edge", "login", n.host(), "-u", adminUser, "-p", adminPassword, "-y"); err != nil {
		t.Fatalf("ziti edge login: %v\n%s", err, out)
	}
	return ziti
}

// agentStack is the goroutine dump of the OpenZiti process whose CLI agent
// listens on socket: the stack-trace signal 0x1, answered with pprof's
// goroutine profile at debug level 2.
func agentStack(socket string) (string, error) { return agentCall(socket, 0x1) }

// agentCall asks an OpenZiti CLI agent listening on socket: its protocol's
// magic bytes, then the request (a signal and what it takes); the answer
// is read to its end.
func agentCall(socket string, request ...byte) (string, error) {
	conn, err := net.DialTimeout("unix", socket, 3*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := append([]byte{0x1, 0xB, 0xA, 0xD, 0xE, 0xC, 0xA, 0xF, 0xE, 0xF, 0x0, 0x0, 0xD}, request...)
	if _, err := conn.Write(req); err != nil {
		return "", err
	}
	out, err := io.ReadAll(conn)
	if err != nil && len(out) == 0 {
		return "", err
	}
	return string(out), nil
}

// stack is the router's goroutine dump (agentStack).
func (r *zitiRouter) stack() (string, error) { return agentStack(r.agentSocket()) }

// stack is the goroutine dump of a `ziti` process (its CLI agent is on by
// default, on a socket named after its pid in the temporary directory).
func (p *zitiProc) stack() (string, error) {
	return agentStack(filepath.Join(os.TempDir(), fmt.Sprintf("gops-agent.%d.sock", p.cmd.Process.Pid)))
}

// goroutineGroups summarises a goroutine dump: goroutines grouped by the
// first frame of OpenZiti's own code (the Go runtime's, the standard
// library's and the channel and foundation libraries' skipped) and their
// state, the largest groups first, at most limit: "N × func [state]
// (longest: D)".
func goroutineGroups(dump string, limit int) []string {
	counts := map[string]int{}
	longest := map[string]string{}
	for _, g := range strings.Split(dump, "\n\n") {
		header, rest, _ := strings.Cut(strings.TrimSpace(g), "\n")
		open, close := strings.Index(header, "["), strings.LastIndex(header, "]")
		if open < 0 || close < open {
			continue
		}
		state, waited, _ := strings.Cut(header[open+1:close], ", ")
		frame := ""
		for _, l := range strings.Split(rest, "\n") {
			if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "created by ") || !strings.Contains(l, "openziti/") ||
				strings.Contains(l, "openziti/channel") || strings.Contains(l, "openziti/foundation") {
				continue
			}
			frame = l
			if i := strings.LastIndex(l, "("); i > 0 && strings.HasSuffix(l, ")") {
				frame = l[:i] // the arguments
			}
			break
		}
		if frame == "" {
			continue
		}
		k := frame + " [" + state + "]"
		counts[k]++
		if minutes(waited) > minutes(longest[k]) {
			longest[k] = waited
		}
	}
	var out []string
	for k, n := range counts {
		line := fmt.Sprintf("%d × %s", n, k)
		if longest[k] != "" {
			line += " (longest: " + longest[k] + ")"
		}
		out = append(out, line)
	}
	slices.SortFunc(out, func(a, b string) int {
		na, _ := strconv.Atoi(strings.Fields(a)[0])
		nb, _ := strconv.Atoi(strings.Fields(b)[0])
		return nb - na
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// minutes is the number of a goroutine's "N minutes" wait, 0 without one.
func minutes(waited string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(waited, " minutes"), " minute"))
	if err != nil {
		return 0
	}
	return n
}
