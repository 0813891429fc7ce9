package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// zitiProc is an OpenZiti process (a tunneler, an SDK program) stopped at
// the end of the test.
type zitiProc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	out  *benchkit.SyncBuffer
	done chan struct{}
}

func startZiti(t *testing.T, dir, name string, args ...string) *zitiProc {
	t.Helper()
	return startProgram(t, dir, name, zitiBinary(t), args...)
}

func startProgram(t *testing.T, dir, name, bin string, args ...string) *zitiProc {
	t.Helper()
	p := &zitiProc{t: t, name: name, out: &benchkit.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("---- %s ----\n%s", name, tail(p.out.String(), 30))
		}
	})
	return p
}

func (p *zitiProc) stop() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// enrolledIdentity creates an identity with an ott enrollment on n and
// enrolls it with `ziti edge enroll`, returning its id and identity file.
func enrolledIdentity(t *testing.T, n *node, token, dir, name string, attrs ...string) (string, string) {
	t.Helper()
	st, m := do(t, "POST", n.mgmt("/identities"), token, map[string]any{"name": name, "type": "Device", "isAdmin": false,
		"roleAttributes": attrs, "enrollment": map[string]any{"ott": true}})
	mustStatus(t, "create identity "+name, st, m, 201)
	id := jget(m, "data", "id").(string)
	st, m = do(t, "GET", n.mgmt("/identities/"+id), token, nil)
	mustStatus(t, "read identity", st, m, 200)
	jwt := filepath.Join(dir, name+".jwt")
	if err := os.WriteFile(jwt, []byte(jget(m, "data", "enrollment", "ott", "jwt").(string)), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name+".json")
	cmd := exec.Command(zitiBinary(t), "edge", "enroll", jwt, "-o", file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ziti edge enroll %s: %v\n%s", name, err, out)
	}
	return id, file
}

// echoServer serves TCP on loopback and writes back what it reads, until
// the test ends; it returns the port.
func echoServer(t *testing.T) int {
	t.Helper()
	ln, err := benchkit.EchoServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// echoOnce sends data through addr and checks it comes back byte for byte.
func echoOnce(addr string, data []byte) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	errc := make(chan error, 1)
	go func() { _, err := c.Write(data); errc <- err }()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		return fmt.Errorf("read back %d bytes: %w", len(data), err)
	}
	if err := <-errc; err != nil {
		return err
	}
	if !bytes.Equal(got, data) {
		return errors.New("the bytes came back changed")
	}
	return nil
}

// trafficNet is a network with an echo service hosted by `ziti tunnel host`
// and reached through `ziti tunnel proxy`, through one router.
type trafficNet struct {
	n            *node
	token        string
	router       *zitiRouter
	dir          string
	hostID       string
	clientID     string
	serviceID    string
	dialPolicyID string
	host, proxy  *zitiProc
	proxyAddr    string
	clientFile   string
}

func newTrafficNet(t *testing.T) *trafficNet {
	t.Helper()
	n := startNode(t, nodeOpts{})
	return newTrafficNetOn(t, n, login(t, n, adminUser, adminPassword))
}

// newTrafficNetOn builds the network through node n (its router enrolled
// there, its tunnelers' identities enrolled there).
func newTrafficNetOn(t *testing.T, n *node, token string) *trafficNet {
	t.Helper()
	return newTrafficNetWith(t, n, token, "")
}

// newTrafficNetWith is newTrafficNetOn with routerYAML appended to the
// router's configuration (its metrics' report interval, for example).
func newTrafficNetWith(t *testing.T, n *node, token, routerYAML string) *trafficNet {
	t.Helper()
	tn := &trafficNet{n: n, token: token, dir: t.TempDir()}
	if routerYAML == "" {
		tn.router = startZitiRouter(t, n, token, "er1")
	} else {
		r := createZitiRouter(t, n, token, "er1", "public")
		r.config = func(host string) string { return benchkit.ZitiRouterConfig(r.dir, host, r.edgeAddr) + routerYAML }
		r.enroll(n, token)
		r.start()
		waitOnline(t, n, token, r.id, true, 10*time.Second)
		tn.router = r
	}
	echo := echoServer(t)
	mk := creator(t, n, token)
	host := mk("/configs", map[string]any{"name": "echo-host", "configTypeId": "NH5p4FpGR",
		"data": map[string]any{"protocol": "tcp", "address": "127.0.0.1", "port": echo}})
	tn.serviceID = mk("/services", map[string]any{"name": "echo", "roleAttributes": []string{"echo"}, "configs": []string{host}})
	tn.dialPolicyID = mk("/service-policies", map[string]any{"name": "echo-dial", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#clients"}, "serviceRoles": []string{"#echo"}})
	mk("/service-policies", map[string]any{"name": "echo-bind", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []string{"#hosts"}, "serviceRoles": []string{"#echo"}})
	mk("/edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	mk("/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	var hostFile string
	tn.hostID, hostFile = enrolledIdentity(t, n, token, tn.dir, "echo-host", "hosts")
	tn.clientID, tn.clientFile = enrolledIdentity(t, n, token, tn.dir, "echo-client", "clients")
	tn.host = startZiti(t, tn.dir, "tunnel host", "tunnel", "host", "-i", hostFile)
	waitTerminators(t, "the host's terminator", n, token, "echo", 1)
	tn.startProxy(t)
	return tn
}

// waitTerminators waits until n lists want terminators, all of service.
func waitTerminators(t *testing.T, what string, n *node, token, service string, want int) {
	t.Helper()
	waitUntil(t, what, 20*time.Second, func() error {
		items, err := listAll(t, n, token, "/terminators")
		if err != nil {
			return err
		}
		if len(items) != want {
			return fmt.Errorf("%d terminators", len(items))
		}
		for _, it := range items {
			if got := jget(it, "service", "name"); got != service {
				return fmt.Errorf("a terminator of %v", got)
			}
		}
		return nil
	})
}

// startProxy runs `ziti tunnel proxy echo:PORT` as the client and waits
// until a first echo goes through.
func (tn *trafficNet) startProxy(t *testing.T) {
	t.Helper()
	port := freePort(t)
	tn.proxyAddr = fmt.Sprintf("127.0.0.1:%d", port)
	tn.proxy = startZiti(t, tn.dir, "tunnel proxy", "tunnel", "proxy", fmt.Sprintf("echo:%d", port), "-i", tn.clientFile)
	waitUntil(t, "a first echo through the proxy", 20*time.Second, func() error { return echoOnce(tn.proxyAddr, []byte("ping")) })
}

// openStream opens a connection through the proxy and checks it echoes.
func (tn *trafficNet) openStream(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", tn.proxyAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("a new stream does not echo: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	return c
}

// waitClosed waits until the stream's far end is gone (a read ends).
func waitClosed(t *testing.T, what string, c net.Conn, timeout time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	b := make([]byte, 64)
	for {
		if _, err := c.Read(b); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("%s: the stream stayed open for %s", what, timeout)
			}
			return
		}
	}
}

// concurrently runs fn n times at once and returns the first error.
func concurrently(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- fn(i) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// usr1Stack is the goroutine dump of a program that writes one to its
// output at SIGUSR1 between marker lines (sdkecho: dumpOnSignal).
func (p *zitiProc) usr1Stack() (string, error) {
	const begin, end = "---- goroutines ----\n", "---- end of goroutines ----\n"
	before := strings.Count(p.out.String(), end)
	if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return "", err
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out := p.out.String()
		if strings.Count(out, end) > before {
			i := strings.LastIndex(out, begin)
			j := strings.LastIndex(out, end)
			if i >= 0 && j > i {
				return out[i+len(begin) : j], nil
			}
		}
	}
	return "", fmt.Errorf("%s wrote no goroutine dump within 5 s of SIGUSR1", p.name)
}
