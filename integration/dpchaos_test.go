package integration

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// Chaos for the data plane: three nodes, three real routers with links
// (meshNet: A-B, B-C, A-C through a proxy the test cuts), two hosting
// clients on C (`ziti tunnel host` for echo-1, an sdk-golang host for
// echo-2), one dialing client on A (`ziti tunnel proxy` for both), open
// streams that send a numbered line every 100 ms and check its echo, and a
// new dial of echo-1 every 100 ms (of echo-2 every second). Faults come in a seeded random
// order (the seed is printed; EDGECTL_DPCHAOS_SEED replays it): SIGKILL and
// SIGSTOP of a node (the leader included), a node cut off from the routers
// (each router reaches each node through a proxy), a rolling restart of all
// three, a router restart, the A-C link cut, a hosting client killed and
// restarted. After each fault is healed, and at the end, dpChecks.check
// verifies the data plane (dpchaos_checks_test.go) and prints what it
// checked and how long each took.
//
// EDGECTL_DPCHAOS_DURATION: faults go on for this long (`make
// chaos-dataplane`: 3m); unset, each kind of fault runs once (make test),
// but dpShortRunLeavesOut.
// EDGECTL_DPCHAOS_FAULTS (kinds, comma-separated) runs those first instead.
// EDGECTL_DPCHAOS_ACTIVATION set: the test holds each node's API port and
// passes it to the node, as systemd's socket activation does
// (clusterOpts.activation), so routers' dials wait out a node's restart.
// The evidence of a round (dpChaos.evidence) is kept when a check fails,
// when a first new dial took over 5 s, and for every round with
// EDGECTL_DPCHAOS_EVIDENCE set.

// dpFaultKinds are the kinds of fault, each run once in the short run.
var dpFaultKinds = []string{"kill-node", "pause-node", "cut-node", "rolling-restart", "restart-router", "cut-link", "kill-host"}

// dpShortRunLeavesOut are the kinds of fault the short run (make test)
// leaves out while what they find is open, so that make test stays usable
// (docs/operations.md, "Chaos for the data plane"). None now: the rolling
// restart, left out while a circuit never started could hold `ziti tunnel
// host` for the rest of the run, is in (it adds about 20 to 35 s).
var dpShortRunLeavesOut []string

// dpChaos is the state of one data-plane fault test.
type dpChaos struct {
	t      *testing.T
	c      *testCluster
	mn     *meshNet
	rng    *rand.Rand
	start  time.Time
	nodeMu sync.Mutex // guards c.nodes (restarts replace entries)
	// ctrlProxies: the routers reach node i through ctrlProxies[i].
	ctrlProxies []*benchkit.TCPProxy
	metrics     []string // each node's --metrics-addr
	hosts       [2]*zitiProc
	proxy       *zitiProc
	hostStart   [2]func() *zitiProc
	services    [2]string
	proxyAddrs  [2]string
	restarted   map[string]bool // ids of nodes restarted (or killed) so far: their circuits may be forgotten
	strict      bool            // the long run: the 5 s aim for new dials is asserted
	dials       *dialer
	streams     *streams
	artifactDir string
}

func TestDataPlaneChaos(t *testing.T) {
	// The short run (each kind of fault once but dpShortRunLeavesOut) is
	// in `make test`; `make chaos-dataplane` runs it for 3 minutes
	// (EDGECTL_DPCHAOS_DURATION).
	t.Parallel()
	zitiBinary(t)
	sdkBin := sdkEchoBinary(t)
	duration := time.Duration(0)
	if v := os.Getenv("EDGECTL_DPCHAOS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("EDGECTL_DPCHAOS_DURATION: %v", err)
		}
		duration = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("EDGECTL_DPCHAOS_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("EDGECTL_DPCHAOS_SEED: %v", err)
		}
		seed = s
	}
	t.Logf("data-plane chaos: seed %d (EDGECTL_DPCHAOS_SEED=%d replays the order of faults)", seed, seed)
	setupStart := time.Now()

	metrics := make([]string, 3)
	for i := range metrics {
		metrics[i] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	activation := os.Getenv("EDGECTL_DPCHAOS_ACTIVATION") != ""
	c := startCluster(t, clusterOpts{size: 3, activation: activation, args: func(i int) []string {
		return []string{"--metrics-addr", metrics[i], "--smart-reroute-interval", "1s"}
	}})
	waitControllerRecords(t, c)
	d := &dpChaos{t: t, c: c, rng: rand.New(rand.NewPCG(seed, seed>>1|1)), metrics: metrics, restarted: map[string]bool{}, strict: duration > 0}
	var ctrls []string
	for _, n := range c.nodes {
		p := newTCPProxy(t, n.host())
		d.ctrlProxies = append(d.ctrlProxies, p)
		ctrls = append(ctrls, p.Addr())
	}
	// Idle circuits are confirmed with their node after 4 s (OpenZiti's
	// default: a minute), so that a route a node forgot goes within the
	// checks' time.
	d.mn = newMeshNetVia(t, c.nodes[0], c.token, ctrls, "forwarder:\n  idleTxInterval: 2000\n  idleCircuitTimeout: 4000\n")
	for i, n := range c.nodes {
		d.mn.waitLinksOn(t, n, fmt.Sprintf("node %d: the three links", i+1), "a-b Connected", "a-c Connected", "b-c Connected")
	}
	d.serve(t, sdkBin)
	d.checksCatchAStaleTerminator(t)
	// echo-2 less often: its dial circuits stay open (noIdleCircuits).
	d.dials = startDialer(d.proxyAddrs, [2]time.Duration{100 * time.Millisecond, time.Second})
	t.Cleanup(d.dials.stop)
	d.streams = &streams{}
	t.Cleanup(d.streams.closeAll)
	for svc := range 2 {
		for range 2 {
			if err := d.streams.open(svc, d.proxyAddrs[svc]); err != nil {
				t.Logf("what the streams met:\n      %s", strings.Join(d.diagnose(), "\n      "))
				t.Fatalf("%v (evidence in %s)", err, d.evidence("setup", []string{err.Error()}))
			}
		}
	}
	t.Cleanup(func() { // never leave a stopped node behind
		for _, n := range d.c.nodes {
			_ = n.cmd.Process.Signal(syscall.SIGCONT)
		}
	})
	t.Logf("set up in %s: 3 nodes, routers A, B, C linked, hosts of echo-1 (ziti tunnel host) and echo-2 (sdk-golang) on C, "+
		"ziti tunnel proxy on A, 4 open streams, a dial of echo-1 every 100 ms, of echo-2 every second", time.Since(setupStart).Round(time.Millisecond))

	d.start = time.Now()
	chk := &dpChecks{d: d}
	chk.run("start", nil, time.Now())
	var order []string
	for _, k := range d.rng.Perm(len(dpFaultKinds)) {
		if duration == 0 && slices.Contains(dpShortRunLeavesOut, dpFaultKinds[k]) {
			t.Logf("the short run leaves out %s: what it finds is still open (docs/operations.md, "+
				"\"Chaos for the data plane\"); `make chaos-dataplane` runs it", dpFaultKinds[k])
			continue
		}
		order = append(order, dpFaultKinds[k])
	}
	if v := os.Getenv("EDGECTL_DPCHAOS_FAULTS"); v != "" {
		order = strings.Split(v, ",")
		for _, k := range order {
			if !slices.Contains(dpFaultKinds, k) {
				t.Fatalf("EDGECTL_DPCHAOS_FAULTS: %q is not one of %v", k, dpFaultKinds)
			}
		}
	}
	for i := 0; ; i++ {
		var kind string
		switch {
		case i < len(order):
			kind = order[i]
		case time.Since(d.start) < duration:
			kind = dpFaultKinds[d.rng.IntN(len(dpFaultKinds))]
		default:
			chk.run("end", nil, time.Now())
			chk.summary()
			return
		}
		f := d.inject(kind)
		chk.run(fmt.Sprintf("fault %d %s", i+1, f.what), f, f.healed)
	}
}

// dpFault is one fault: what it was, when it was healed, which services'
// streams it may end (their path or their terminator went), and whether it
// restarted nodes (whose circuits are forgotten).
type dpFault struct {
	kind, what   string
	began        time.Time
	healed       time.Time
	endsAllowed  func(svc int) bool
	nodesRestart bool
	note         string
}

// serve makes the two services, their policies and identities, and starts
// the hosts on C and the proxy on A.
func (d *dpChaos) serve(t *testing.T, sdkBin string) {
	t.Helper()
	n, token, dir := d.c.nodes[0], d.c.token, d.mn.dir
	mk := creator(t, n, token)
	echo := echoServer(t)
	host := mk("/configs", map[string]any{"name": "echo-host", "configTypeId": "NH5p4FpGR",
		"data": map[string]any{"protocol": "tcp", "address": "127.0.0.1", "port": echo}})
	d.services = [2]string{"echo-1", "echo-2"}
	mk("/services", map[string]any{"name": "echo-1", "roleAttributes": []string{"echo", "echo1"}, "configs": []string{host}, "encryptionRequired": true})
	mk("/services", map[string]any{"name": "echo-2", "roleAttributes": []string{"echo", "echo2"}, "encryptionRequired": true})
	mk("/service-policies", map[string]any{"name": "echo-dial", "type": "Dial", "semantic": "AnyOf", "identityRoles": []string{"#clients"}, "serviceRoles": []string{"#echo"}})
	mk("/service-policies", map[string]any{"name": "echo1-bind", "type": "Bind", "semantic": "AnyOf", "identityRoles": []string{"#host1"}, "serviceRoles": []string{"#echo1"}})
	mk("/service-policies", map[string]any{"name": "echo2-bind", "type": "Bind", "semantic": "AnyOf", "identityRoles": []string{"#host2"}, "serviceRoles": []string{"#echo2"}})
	mk("/edge-router-policies", map[string]any{"name": "clients-a", "semantic": "AnyOf", "identityRoles": []string{"#clients"}, "edgeRouterRoles": []string{"#a"}})
	mk("/edge-router-policies", map[string]any{"name": "hosts-c", "semantic": "AnyOf", "identityRoles": []string{"#hosts"}, "edgeRouterRoles": []string{"#c"}})
	mk("/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	_, host1 := enrolledIdentity(t, n, token, dir, "echo-host-1", "hosts", "host1")
	_, host2 := enrolledIdentity(t, n, token, dir, "echo-host-2", "hosts", "host2")
	_, client := enrolledIdentity(t, n, token, dir, "echo-client", "clients")
	d.hostStart[0] = func() *zitiProc { return startZiti(t, dir, "tunnel host", "tunnel", "host", "-i", host1) }
	d.hostStart[1] = func() *zitiProc {
		return startProgram(t, dir, "sdkecho host", sdkBin, "host", "-i", host2, "-s", "echo-2")
	}
	for k := range d.hosts {
		d.hosts[k] = d.hostStart[k]()
	}
	waitUntil(t, "a terminator for each host", 30*time.Second, func() error { return d.terminatorsAgree(time.Now()) })
	var args []string
	for k := range d.proxyAddrs {
		port := freePort(t)
		d.proxyAddrs[k] = fmt.Sprintf("127.0.0.1:%d", port)
		args = append(args, fmt.Sprintf("%s:%d", d.services[k], port))
	}
	d.proxy = startZiti(t, dir, "tunnel proxy", append(append([]string{"tunnel", "proxy"}, args...), "-i", client)...)
	for k := range d.proxyAddrs {
		waitUntil(t, "a first echo of "+d.services[k], 30*time.Second, func() error { return echoOnce(d.proxyAddrs[k], []byte("ping")) })
	}
}

// node is node i's current process.
func (d *dpChaos) node(i int) *node {
	d.nodeMu.Lock()
	defer d.nodeMu.Unlock()
	return d.c.nodes[i]
}

func (d *dpChaos) nodes() []*node {
	d.nodeMu.Lock()
	defer d.nodeMu.Unlock()
	return append([]*node(nil), d.c.nodes...)
}

// restartNode starts node i again on its data dir and ports.
func (d *dpChaos) restartNode(i int) {
	n := d.node(i)
	nn := n.restart(d.t, nodeOpts{args: n.restartArgs()})
	nn.name = n.name
	d.nodeMu.Lock()
	d.c.nodes[i] = nn
	d.nodeMu.Unlock()
}

// leader is the index of the node the answering nodes name leader, -1
// when none is agreed on within timeout.
func (d *dpChaos) leader(timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		votes := map[string]int{}
		for _, n := range d.nodes() {
			st, m, err := doErr(http.MethodGet, "https://"+n.host()+"/readyz", "", nil)
			if err == nil && st == http.StatusOK {
				id, _ := m["leaderId"].(string)
				votes[id]++
			}
		}
		for id, v := range votes {
			if v >= 2 {
				return d.c.indexOf(id)
			}
		}
		if time.Now().After(deadline) {
			return -1
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// victim picks a node: the leader half the time.
func (d *dpChaos) victim() (int, string) {
	l := d.leader(20 * time.Second)
	if l >= 0 && d.rng.IntN(2) == 0 {
		return l, fmt.Sprintf("node %d (the leader)", l+1)
	}
	i := d.rng.IntN(3)
	if i == l {
		return i, fmt.Sprintf("node %d (the leader)", i+1)
	}
	return i, fmt.Sprintf("node %d (a follower)", i+1)
}

// linkUp says, for the links the first node that answers lists, whether
// one between routers x and y is up (none when no node answers).
func (d *dpChaos) linkUp() func(x, y string) bool {
	up := map[[2]string]bool{}
	for _, n := range d.nodes() {
		links, err := listAll(d.t, n, d.c.token, "/links")
		if err != nil {
			continue
		}
		for _, l := range links {
			if jget(l, "down") != true {
				src, dst := fmt.Sprint(jget(l, "sourceRouter", "id")), fmt.Sprint(jget(l, "destRouter", "id"))
				up[[2]string{src, dst}], up[[2]string{dst, src}] = true, true
			}
		}
		break
	}
	return func(x, y string) bool { return up[[2]string{x, y}] }
}

// inject runs one fault of kind and heals it.
func (d *dpChaos) inject(kind string) *dpFault {
	t := d.t
	f := &dpFault{kind: kind, began: time.Now(), endsAllowed: func(int) bool { return false }}
	switch kind {
	case "kill-node":
		i, name := d.victim()
		f.what = "SIGKILL " + name + ", restarted 2 s later"
		d.node(i).kill()
		d.restarted[d.c.ids[i]] = true
		time.Sleep(2 * time.Second) // the fault's length
		d.restartNode(i)
		f.nodesRestart = true
	case "pause-node":
		i, name := d.victim()
		f.what = "SIGSTOP " + name + " for 3 s"
		pid := d.node(i).cmd.Process.Pid
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	case "cut-node":
		i, name := d.victim()
		f.what = name + " cut off from the routers for 3 s"
		d.ctrlProxies[i].Cut()
		time.Sleep(3 * time.Second)
		d.ctrlProxies[i].Heal()
	case "rolling-restart":
		f.what = "rolling restart of nodes 1, 2, 3 (SIGTERM, start, next)"
		for i := range 3 {
			d.node(i).stop()
			d.restarted[d.c.ids[i]] = true
			d.restartNode(i)
		}
		f.nodesRestart = true
		took := time.Since(f.began)
		f.note = fmt.Sprintf("all three restarted in %s", took.Round(time.Millisecond))
		if took > 10*time.Second {
			f.note += " (aim: within 10 s)"
		}
	case "restart-router":
		rs := []*zitiRouter{d.mn.a, d.mn.b, d.mn.c}
		k := d.rng.IntN(3)
		r := rs[k]
		f.what = fmt.Sprintf("router %s killed, restarted 1 s later", strings.ToUpper(strings.TrimPrefix(r.name, "router-")))
		switch {
		case k != 1: // A is the client's only edge router, C the hosts': the streams' path goes with it
			f.endsAllowed = func(int) bool { return true }
		case !d.linkUp()(d.mn.a.id, d.mn.c.id):
			// An earlier cut of the A-C link healed, but A had not dialed
			// it again yet (OpenZiti's router waits 5 s between link dials):
			// every path crossed B.
			f.endsAllowed = func(int) bool { return true }
			f.note = "the A-C link was not up again yet after an earlier cut: every path crossed B"
		}
		r.stop()
		time.Sleep(time.Second)
		r.start()
		for _, n := range d.nodes() {
			waitOnline(t, n, d.c.token, r.id, true, 30*time.Second)
		}
		f.note = strings.TrimPrefix(f.note+"; ", "; ") + fmt.Sprintf("online on every node %s after its start", time.Since(f.began.Add(time.Second)).Round(time.Millisecond))
	case "cut-link":
		f.what = "link A-C cut for 3 s"
		if up := d.linkUp(); !up(d.mn.a.id, d.mn.b.id) || !up(d.mn.b.id, d.mn.c.id) {
			// Router B's links were not all up again yet after an earlier
			// fault (its restart): every path crossed A-C.
			f.endsAllowed = func(int) bool { return true }
			f.note = "B's links were not all up again yet after an earlier fault: every path crossed A-C"
		}
		d.mn.acProxy.Cut()
		time.Sleep(3 * time.Second)
		d.mn.acProxy.Heal()
	case "kill-host":
		k := d.rng.IntN(2)
		f.what = fmt.Sprintf("the host of %s (%s) killed, restarted once its terminator is gone", d.services[k], d.hosts[k].name)
		f.endsAllowed = func(svc int) bool { return svc == k }
		d.hosts[k].stop()
		down := time.Now()
		var last error
		for time.Since(down) < 30*time.Second {
			if last = d.terminatorsAgree(time.Now()); last == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if last != nil {
			f.note = fmt.Sprintf("FAILED: its terminator still there 30 s after it was killed: %v", last)
		} else {
			f.note = fmt.Sprintf("its terminator gone from every node and router %s after the kill", time.Since(down).Round(time.Millisecond))
		}
		d.hosts[k] = d.hostStart[k]()
	}
	f.healed = time.Now()
	t.Logf("%8s %s: healed after %s", f.began.Sub(d.start).Round(time.Millisecond), f.what, f.healed.Sub(f.began).Round(time.Millisecond))
	return f
}

// hostUp says whether the host of service k runs.
func (d *dpChaos) hostUp(k int) bool {
	select {
	case <-d.hosts[k].done:
		return false
	default:
		return true
	}
}

// checksCatchAStaleTerminator shows the terminator check has teeth before
// the faults: a terminator in the model that no router hosts (made through
// the Management API, on A) is reported, and once deleted the check passes.
func (d *dpChaos) checksCatchAStaleTerminator(t *testing.T) {
	t.Helper()
	n, token := d.c.nodes[0], d.c.token
	st, m := do(t, "GET", n.mgmt("/services?filter=name%3D%22echo-1%22"), token, nil)
	mustStatus(t, "the echo-1 service", st, m, 200)
	svc := jget(m, "data").([]any)[0]
	st, m = do(t, "POST", n.mgmt("/terminators"), token, map[string]any{"service": jget(svc, "id"), "router": d.mn.a.id, "binding": "edge", "address": "no-such-host"})
	mustStatus(t, "a terminator no router hosts", st, m, 201)
	stale := jget(m, "data", "id").(string)
	waitUntil(t, "the terminator check to report the stale terminator", 20*time.Second, func() error {
		if err := d.terminatorsAgree(time.Now()); err == nil || !strings.Contains(err.Error(), "not C") {
			return fmt.Errorf("the check says %v", err)
		}
		return nil
	})
	st, m = do(t, "DELETE", n.mgmt("/terminators/"+stale), token, nil)
	mustStatus(t, "delete the stale terminator", st, m, 200)
	waitUntil(t, "the terminator check to pass without it", 20*time.Second, func() error { return d.terminatorsAgree(time.Now()) })
}
