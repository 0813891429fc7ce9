package integration

import (
	"crypto/rand"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// The router-embedded tunneler (issue 44): a real `ziti router` v1.7.2
// with isTunnelerEnabled and a `tunnel` listener hosts a service (mode
// host) or intercepts one (mode proxy) as its own identity, the identity
// of type Router with the router's id; policies apply to it as to any
// identity.

// startTunnelerRouter creates edge router name (tunneler enabled) on n
// with a tunnel listener in mode (host or proxy), enrolls and starts it.
func startTunnelerRouter(t *testing.T, n *node, token, name, mode string) *zitiRouter {
	t.Helper()
	r := createZitiRouter(t, n, token, name, "public")
	r.config = func(ctrl string) string {
		c := benchkit.ZitiRouterConfig(r.dir, ctrl, r.edgeAddr)
		// The tunnel listener after the edge one (both need the edge section).
		return strings.Replace(c, "\nedge:\n", fmt.Sprintf("\n  - binding: tunnel\n    options:\n      mode: %s\nedge:\n", mode), 1)
	}
	r.enroll(n, token)
	r.start()
	waitOnline(t, n, token, r.id, true, 20*time.Second)
	return r
}

// tunnelerNet is a node with a router whose tunneler runs in one mode,
// and what both modes' tests start from: an echo server, the config
// echo-host that hosts it (host.v1), and edge router policies letting
// every identity and service use every router. Those come first: a
// terminator asked for before its service may use the router is refused
// (and retried minutes later).
type tunnelerNet struct {
	n        *node
	token    string
	dir      string
	r        *zitiRouter
	mk       func(path string, body map[string]any) string
	echoHost string // the echo-host config's id
}

// newTunnelerNet starts a node and router name with its tunneler in mode
// (host or proxy), then the echo server and what goes with it.
func newTunnelerNet(t *testing.T, name, mode string) *tunnelerNet {
	t.Helper()
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	tn := &tunnelerNet{n: n, token: token, dir: t.TempDir(), r: startTunnelerRouter(t, n, token, name, mode), mk: creator(t, n, token)}
	echo := echoServer(t)
	tn.mk("/edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	tn.mk("/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	tn.echoHost = tn.mk("/configs", map[string]any{"name": "echo-host", "configTypeId": "NH5p4FpGR",
		"data": map[string]any{"protocol": "tcp", "address": "127.0.0.1", "port": echo}})
	return tn
}

// setIdentityRoles sets the identity roles of service policy id.
func setIdentityRoles(t *testing.T, n *node, token, id string, roles ...string) {
	t.Helper()
	if roles == nil {
		roles = []string{}
	}
	st, m := do(t, "PATCH", n.mgmt("/service-policies/"+id), token, map[string]any{"identityRoles": roles})
	mustStatus(t, "patch service policy", st, m, 200)
}

// echoes checks 1 MiB of random bytes come back byte for byte through addr.
func echoes(t *testing.T, what, addr string) {
	t.Helper()
	mib := make([]byte, 1<<20)
	_, _ = rand.Read(mib)
	if err := echoOnce(addr, mib); err != nil {
		t.Fatalf("%s: 1 MiB: %v", what, err)
	}
}

// waitRefused waits until a new connection through addr no longer echoes.
func waitRefused(t *testing.T, what, addr string, within time.Duration) {
	t.Helper()
	waitUntil(t, what+": new connections fail", within, func() error {
		if err := echoOnce(addr, []byte("still?")); err == nil {
			return errString("a new connection still echoes")
		}
		return nil
	})
}

// waitEchoes waits until a connection through addr echoes again.
func waitEchoes(t *testing.T, what, addr string, within time.Duration) {
	t.Helper()
	waitUntil(t, what+": a connection echoes", within, func() error { return echoOnce(addr, []byte("ping")) })
}

// tunnelTerminator waits for the one terminator of service, and checks it
// is the router's tunneler's: binding tunnel, on the router, hosted by the
// router's identity.
func tunnelTerminator(t *testing.T, n *node, token, service string, r *zitiRouter) {
	t.Helper()
	waitTerminators(t, "the router's tunnel terminator", n, token, service, 1)
	items, err := listAll(t, n, token, "/terminators")
	if err != nil {
		t.Fatal(err)
	}
	if got := items[0]; jget(got, "binding") != "tunnel" || jget(got, "router", "id") != r.id || jget(got, "hostId") != r.id {
		t.Fatalf("the terminator is not the router's tunneler's: binding %v router %v host %v",
			jget(got, "binding"), jget(got, "router", "id"), jget(got, "hostId"))
	}
}

// TestRouterTunnel_HostMode: a router's tunneler in mode host hosts an echo
// service (host.v1) for a Bind policy naming @<router id>, reached through
// `ziti tunnel proxy`: 1 MiB echoed byte for byte. The router's identity
// taken out of the Bind policy: its terminator goes and new connections
// fail; put back: they work again.
func TestRouterTunnel_HostMode(t *testing.T) {
	t.Parallel()
	tn := newTunnelerNet(t, "er-host", "host")
	n, token, dir, r, mk := tn.n, tn.token, tn.dir, tn.r, tn.mk
	mk("/services", map[string]any{"name": "echo", "roleAttributes": []string{"echo"}, "configs": []string{tn.echoHost}})
	mk("/service-policies", map[string]any{"name": "echo-dial", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#clients"}, "serviceRoles": []string{"#echo"}})
	bind := mk("/service-policies", map[string]any{"name": "echo-bind", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []string{"@" + r.id}, "serviceRoles": []string{"#echo"}})
	tunnelTerminator(t, n, token, "echo", r)

	_, clientFile := enrolledIdentity(t, n, token, dir, "echo-client", "clients")
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startZiti(t, dir, "tunnel proxy", "tunnel", "proxy", "echo:"+strings.TrimPrefix(proxyAddr, "127.0.0.1:"), "-i", clientFile)
	waitEchoes(t, "the proxy started", proxyAddr, 30*time.Second)
	echoes(t, "hosted by the router", proxyAddr)

	setIdentityRoles(t, n, token, bind)
	waitTerminators(t, "the router's identity out of the Bind policy: its terminator gone", n, token, "echo", 0)
	waitRefused(t, "the router's identity out of the Bind policy", proxyAddr, 15*time.Second)

	setIdentityRoles(t, n, token, bind, "@"+r.id)
	tunnelTerminator(t, n, token, "echo", r)
	waitEchoes(t, "the router's identity back in the Bind policy", proxyAddr, 30*time.Second)
	echoes(t, "hosted by the router again", proxyAddr)
}

// TestRouterTunnel_ProxyMode: a router's tunneler in mode proxy intercepts
// an echo service (proxy.v1, on 127.0.0.1) hosted by `ziti tunnel host`,
// for a Dial policy naming @<router id>: 1 MiB echoed byte for byte. The
// router's identity taken out of the Dial policy: new connections fail;
// put back: they work again.
func TestRouterTunnel_ProxyMode(t *testing.T) {
	t.Parallel()
	tn := newTunnelerNet(t, "er-proxy", "proxy")
	n, token, dir, r, mk := tn.n, tn.token, tn.dir, tn.r, tn.mk
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	intercept := mk("/configs", map[string]any{"name": "echo-proxy", "configTypeId": "proxy.v1",
		"data": map[string]any{"port": port, "protocols": []string{"tcp"}, "binding": "127.0.0.1"}})
	mk("/services", map[string]any{"name": "echo", "roleAttributes": []string{"echo"}, "configs": []string{tn.echoHost, intercept}})
	dial := mk("/service-policies", map[string]any{"name": "echo-dial", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"@" + r.id}, "serviceRoles": []string{"#echo"}})
	mk("/service-policies", map[string]any{"name": "echo-bind", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []string{"#hosts"}, "serviceRoles": []string{"#echo"}})
	_, hostFile := enrolledIdentity(t, n, token, dir, "echo-host", "hosts")
	startZiti(t, dir, "tunnel host", "tunnel", "host", "-i", hostFile)
	waitTerminators(t, "the host's terminator", n, token, "echo", 1)

	waitEchoes(t, "intercepted by the router", addr, 30*time.Second)
	echoes(t, "intercepted by the router", addr)
	// An open connection is a circuit of the router's identity.
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitUntil(t, "the router's circuit listed, of its identity", 15*time.Second, func() error {
		circuits, err := listAll(t, n, token, "/circuits")
		if err != nil {
			return err
		}
		for _, ci := range circuits {
			if jget(ci, "service", "name") == "echo" && jget(ci, "identityId") == r.id {
				return nil
			}
		}
		return fmt.Errorf("circuits: %v", circuits)
	})
	c.Close()

	setIdentityRoles(t, n, token, dial)
	waitRefused(t, "the router's identity out of the Dial policy", addr, 15*time.Second)

	setIdentityRoles(t, n, token, dial, "@"+r.id)
	waitEchoes(t, "the router's identity back in the Dial policy", addr, 30*time.Second)
	echoes(t, "intercepted by the router again", addr)
}
