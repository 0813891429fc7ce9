package integration

import (
	"crypto/rand"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestTraffic_TunnelersThroughOneRouter: a TCP echo server hosted by
// `ziti tunnel host`, reached through `ziti tunnel proxy`, through one real
// router controlled by edgectl: 1 MiB echoed byte for byte, 20 sequential
// and 8 concurrent connections; the circuits are listed while open; the host
// gone removes its terminator.
func TestTraffic_TunnelersThroughOneRouter(t *testing.T) {
	t.Parallel()
	tn := newTrafficNet(t)
	mib := make([]byte, 1<<20)
	_, _ = rand.Read(mib)
	if err := echoOnce(tn.proxyAddr, mib); err != nil {
		t.Fatalf("1 MiB: %v", err)
	}
	for i := range 20 {
		if err := echoOnce(tn.proxyAddr, []byte(fmt.Sprintf("sequential %d", i))); err != nil {
			t.Fatalf("sequential connection %d: %v", i, err)
		}
	}
	if err := concurrently(8, func(i int) error {
		data := make([]byte, 64<<10)
		_, _ = rand.Read(data)
		return echoOnce(tn.proxyAddr, data)
	}); err != nil {
		t.Fatalf("8 concurrent connections: %v", err)
	}

	// An open stream is a circuit: OpenZiti's CLI lists it (and the rest of
	// the Fabric API subset), and deleting it closes the stream.
	stream := tn.openStream(t)
	ziti := zitiCLI(t, tn.n)
	for _, c := range []struct{ args, want string }{
		{"fabric list routers", "er1"}, {"fabric list terminators", "echo"}, {"fabric list services", "echo"},
		{"fabric list circuits", "echo"}, {"fabric list links", "results: none"},
		{"edge validate service-hosting", "hosted by echo-host"},
	} {
		if out := ziti(strings.Fields(c.args)...); !strings.Contains(out, c.want) {
			t.Fatalf("ziti %s lacks %q:\n%s", c.args, c.want, out)
		}
	}
	// The circuits of the closed connections end as their routers report
	// the faults; the open stream's stays.
	var circuits []any
	waitUntil(t, "one circuit, the open stream's", 15*time.Second, func() error {
		var err error
		if circuits, err = listAll(t, tn.n, tn.token, "/circuits"); err != nil {
			return err
		}
		if len(circuits) != 1 || jget(circuits[0], "service", "name") != "echo" {
			return fmt.Errorf("%d circuits", len(circuits))
		}
		return nil
	})
	ziti("fabric", "delete", "circuit", jget(circuits[0], "id").(string))
	waitClosed(t, "circuit deleted", stream, 5*time.Second)

	tn.host.stop()
	waitTerminators(t, "the host's terminator gone", tn.n, tn.token, "echo", 0)
	if err := echoOnce(tn.proxyAddr, []byte("nobody home")); err == nil {
		t.Fatal("a dial with no host echoed")
	}
}

// TestTraffic_AccessLostEndsAccess: deleting the Dial policy, disabling the
// identity, or ending its API session (a logout) closes the identity's open
// streams within 5 s and refuses new ones.
func TestTraffic_AccessLostEndsAccess(t *testing.T) {
	t.Parallel()
	tn := newTrafficNet(t)
	refused := func(what string) {
		t.Helper()
		waitUntil(t, what+": a new dial refused", 5*time.Second, func() error {
			if err := echoOnce(tn.proxyAddr, []byte("still?")); err == nil {
				return errString("a new dial still echoes")
			}
			return nil
		})
	}

	// A logout: the proxy's API session ended by an admin.
	c := tn.openStream(t)
	items, err := listAll(t, tn.n, tn.token, "/api-sessions")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if jget(it, "identityId") == tn.clientID {
			st, m := do(t, "DELETE", tn.n.mgmt("/api-sessions/"+jget(it, "id").(string)), tn.token, nil)
			mustStatus(t, "end the client's API session", st, m, 200)
		}
	}
	waitClosed(t, "API session ended", c, 5*time.Second)
	tn.proxy.stop()
	tn.startProxy(t) // logs in again

	// The identity disabled.
	c = tn.openStream(t)
	st, m := do(t, "POST", tn.n.mgmt("/identities/"+tn.clientID+"/disable"), tn.token, map[string]any{"durationMinutes": 0})
	mustStatus(t, "disable the client", st, m, 200)
	waitClosed(t, "identity disabled", c, 5*time.Second)
	refused("identity disabled")
	st, m = do(t, "POST", tn.n.mgmt("/identities/"+tn.clientID+"/enable"), tn.token, nil)
	mustStatus(t, "enable the client", st, m, 200)
	tn.proxy.stop()
	tn.startProxy(t)

	// The Dial policy deleted.
	c = tn.openStream(t)
	st, m = do(t, "DELETE", tn.n.mgmt("/service-policies/"+tn.dialPolicyID), tn.token, nil)
	mustStatus(t, "delete the Dial policy", st, m, 200)
	waitClosed(t, "Dial policy deleted", c, 5*time.Second)
	refused("Dial policy deleted")
}

// TestTraffic_APostureCheckThatStartsFailingEndsAccess: the Dial policy
// requires a MAC posture check that the client's tunneler passes (its
// machine's addresses); the check changed so that it fails closes the open
// stream within 5 s and refuses new dials.
func TestTraffic_APostureCheckThatStartsFailingEndsAccess(t *testing.T) {
	t.Parallel()
	macs := machineMACs(t)
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	st, m := do(t, "POST", n.mgmt("/posture-checks"), token, map[string]any{"name": "this-machine", "typeId": "MAC",
		"macAddresses": macs, "roleAttributes": []string{"checks"}})
	mustStatus(t, "create the posture check", st, m, 201)
	check := jget(m, "data", "id").(string)
	tn := newTrafficNetOn(t, n, token)
	st, m = do(t, "PATCH", n.mgmt("/service-policies/"+tn.dialPolicyID), token, map[string]any{"postureCheckRoles": []string{"#checks"}})
	mustStatus(t, "require the check", st, m, 200)
	tn.proxy.stop()
	tn.startProxy(t) // dials again, with its posture reported

	stream := tn.openStream(t)
	st, m = do(t, "PATCH", n.mgmt("/posture-checks/"+check), token, map[string]any{"typeId": "MAC", "macAddresses": []string{"0A-0B-0C-0D-0E-0F"}})
	mustStatus(t, "make the check fail", st, m, 200)
	waitClosed(t, "posture failing", stream, 5*time.Second)
	waitUntil(t, "posture failing: a new dial refused", 5*time.Second, func() error {
		if err := echoOnce(tn.proxyAddr, []byte("still?")); err == nil {
			return errString("a new dial still echoes")
		}
		return nil
	})
	// How long the tunneler takes to give up a new connection whose
	// session the node refuses for posture (409 INVALID_POSTURE, as
	// OpenZiti). Measured 3.0-5.6 s on a loaded machine, as with the 403 answered
	// before: sdk-golang v1.2.10 (ziti v1.7.2's) retries every refusal of a
	// session create but 401 and 404 with a backoff until the dial's
	// connect timeout (createSessionWithBackoff); docs/openziti.md.
	for i := 0; i < 3; i++ {
		start := time.Now()
		c, err := net.DialTimeout("tcp", tn.proxyAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte("x"))
		waitClosed(t, "posture failing: a new connection", c, 15*time.Second)
		_ = c.Close()
		t.Logf("posture failing: the tunneler gave up a new connection after %s", time.Since(start).Round(time.Millisecond))
	}
	// What the tunneler was answered, and how often it asked again: the
	// generated client of sdk-golang knows no 409 for a session create (nor
	// 403) and gives a *runtime.APIError, which it retries.
	out := tn.proxy.out.String()
	refusals, conflicts := strings.Count(out, "failure creating Dial session"), strings.Count(out, "(status 409)")
	t.Logf("posture failing: the tunneler logged %d failed session creates, and %d lines naming status 409", refusals, conflicts)
	if conflicts == 0 {
		t.Fatal("the tunneler's session creates were not answered 409 INVALID_POSTURE")
	}
}

// machineMACs are this machine's hardware addresses, as an SDK reports them.
func machineMACs(t *testing.T) []string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, i := range ifs {
		if len(i.HardwareAddr) == 6 && i.HardwareAddr.String() != "00:00:00:00:00:00" {
			out = append(out, i.HardwareAddr.String())
		}
	}
	if len(out) == 0 {
		t.Skip("this machine has no hardware address for a MAC posture check")
	}
	return out
}

// TestTraffic_RotatingTheSessionKeyKeepsTrafficUp: `edgectl session-keys
// rotate` while a stream runs: the stream and the running client's new
// dials (its session signed by the replaced key) go on, a new client's
// session is signed by the new key and the router accepts it (it got the
// key in its data model, which still matches the node's); the next
// rotation retires the first key, ending the stream of its session, and
// the client dials again with a session of a trusted key.
func TestTraffic_RotatingTheSessionKeyKeepsTrafficUp(t *testing.T) {
	t.Parallel()
	tn := newTrafficNet(t)
	c := newCLI(t)
	if _, errOut, code := c.run(tn.n.password+"\n", "login", "https://"+tn.n.host(), "-u", adminUser, "--password-stdin", "--yes"); code != 0 {
		t.Fatalf("login: %d %s", code, errOut)
	}
	stream := tn.openStream(t)

	first := strings.TrimSpace(c.ok("session-keys", "rotate"))
	if out := c.ok("session-keys", "list"); !strings.Contains(out, first) || strings.Count(out, "\n") != 3 {
		t.Fatalf("after a rotation the list shows:\n%s", out)
	}
	waitInSync(t, tn.n, tn.token, tn.router.id, nil)
	if _, err := stream.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	_ = stream.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := stream.Read(b); err != nil {
		t.Fatalf("the stream stopped at the rotation: %v", err)
	}
	if err := echoOnce(tn.proxyAddr, []byte("old session")); err != nil {
		t.Fatalf("a dial with the replaced key's session: %v", err)
	}
	old := tn.proxyAddr
	tn.startProxy(t) // a new client: its session is signed by the new key
	if err := echoOnce(tn.proxyAddr, []byte("new session")); err != nil {
		t.Fatalf("a dial with the new key's session: %v", err)
	}
	newStream := tn.openStream(t)

	c.ok("session-keys", "rotate")
	waitClosed(t, "the first key retired", stream, 5*time.Second)
	if _, err := newStream.Write([]byte("z")); err != nil {
		t.Fatal(err)
	}
	_ = newStream.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := newStream.Read(b); err != nil {
		t.Fatalf("the second key's stream stopped at the next rotation: %v", err)
	}
	waitInSync(t, tn.n, tn.token, tn.router.id, nil)
	waitUntil(t, "the first client dials again with a new session", 30*time.Second, func() error {
		return echoOnce(old, []byte("again"))
	})
}
