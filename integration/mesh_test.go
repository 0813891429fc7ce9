package integration

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// meshNet is three linked routers on one node: A (the client's only edge
// router), B, C (the host's only edge router); links A-B and B-C direct,
// A-C through a proxy the test can cut.
type meshNet struct {
	n         *node
	token     string
	a, b, c   *zitiRouter
	acProxy   *benchkit.TCPProxy
	dir       string
	proxyAddr string
	// dialed are the addresses the links are dialed at: A's listener
	// (by B), C's (by B) and the proxy in front of C's (by A).
	dialed     []string
	clientFile string
	hostFile   string
}

// newMeshNet starts the three routers with their links as above: A listens
// for B (group ab), C for B (bc) and for A through the proxy (ac); A dials
// ac, B dials ab and bc, C dials none; so there is one link per pair.
func newMeshNet(t *testing.T) *meshNet {
	t.Helper()
	n := startNode(t, nodeOpts{args: []string{"--smart-reroute-interval", "1s"}})
	return newMeshNetOn(t, n, login(t, n, adminUser, adminPassword))
}

// newMeshNetOn starts the mesh's routers, enrolled through node n.
func newMeshNetOn(t *testing.T, n *node, token string) *meshNet {
	t.Helper()
	return newMeshNetVia(t, n, token, nil, "")
}

// newMeshNetVia is newMeshNetOn with the routers' control channels at ctrls
// (HOST:PORT each, e.g. proxies in front of the nodes; nil: the addresses
// their enrollment gives) and extra appended to their configuration.
func newMeshNetVia(t *testing.T, n *node, token string, ctrls []string, extra string) *meshNet {
	t.Helper()
	mn := &meshNet{n: n, token: token, dir: t.TempDir()}
	pa := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	pc1 := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	pc2 := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	mn.acProxy = newTCPProxy(t, pc2)
	mk := func(name, attr string, ls []benchkit.LinkListener, dial []string) *zitiRouter {
		r := createZitiRouter(t, n, token, name, attr)
		r.config = func(ctrl string) string {
			if len(ctrls) > 0 {
				ctrl = ctrls[0]
			}
			return benchkit.ZitiMeshRouterConfig(r.dir, ctrl, r.edgeAddr, ls, dial) + extra
		}
		r.enroll(n, token)
		if len(ctrls) > 0 { // the endpoints file, which `ziti router enroll` wrote from the JWT, wins over ctrl.endpoint
			var b strings.Builder
			b.WriteString("endpoints:\n")
			for _, c := range ctrls {
				b.WriteString("- tls:" + c + "\n")
			}
			if err := os.WriteFile(filepath.Join(r.dir, "endpoints.yml"), []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	mn.a = mk("router-a", "a", []benchkit.LinkListener{{Bind: pa, Advertise: pa, Groups: []string{"ab"}}}, []string{"ac"})
	mn.b = mk("router-b", "b", nil, []string{"ab", "bc"})
	mn.c = mk("router-c", "c", []benchkit.LinkListener{{Bind: pc1, Advertise: pc1, Groups: []string{"bc"}},
		{Bind: pc2, Advertise: mn.acProxy.Addr(), Groups: []string{"ac"}}}, nil)
	mn.dialed = []string{pa, pc1, mn.acProxy.Addr()}
	for _, r := range []*zitiRouter{mn.a, mn.b, mn.c} {
		r.start()
	}
	for _, r := range []*zitiRouter{mn.a, mn.b, mn.c} {
		waitOnline(t, n, token, r.id, true, 15*time.Second)
	}
	return mn
}

// links are node n's links, as "A-C state" lines by router name, sorted.
func (mn *meshNet) links(t *testing.T, n *node) ([]string, error) {
	items, err := listAll(t, n, mn.token, "/links")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		a, _ := jget(it, "sourceRouter", "name").(string)
		b, _ := jget(it, "destRouter", "name").(string)
		if a > b {
			a, b = b, a
		}
		out = append(out, fmt.Sprintf("%s-%s %v", strings.TrimPrefix(a, "router-"), strings.TrimPrefix(b, "router-"), jget(it, "state")))
	}
	sort.Strings(out)
	return out, nil
}

// linkOf is node n's link between routers a and b (by name, without
// "router-"), nil when there is none.
func (mn *meshNet) linkOf(t *testing.T, n *node, a, b string) map[string]any {
	t.Helper()
	items, err := listAll(t, n, mn.token, "/links")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		src, _ := jget(it, "sourceRouter", "name").(string)
		dst, _ := jget(it, "destRouter", "name").(string)
		if ends := []string{src, dst}; slices.Contains(ends, "router-"+a) && slices.Contains(ends, "router-"+b) {
			l, _ := it.(map[string]any)
			return l
		}
	}
	return nil
}

func (mn *meshNet) waitLinks(t *testing.T, what string, want ...string) {
	t.Helper()
	mn.waitLinksOn(t, mn.n, what, want...)
}

func (mn *meshNet) waitLinksOn(t *testing.T, n *node, what string, want ...string) {
	t.Helper()
	waitUntil(t, what, 30*time.Second, func() error {
		got, err := mn.links(t, n)
		if err != nil {
			return err
		}
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			return fmt.Errorf("links: %v", got)
		}
		return nil
	})
}

// circuitPath is the routers (by name, without "router-") of node n's
// only circuit.
func (mn *meshNet) circuitPath(t *testing.T, n *node) (string, error) {
	items, err := listAll(t, n, mn.token, "/circuits")
	if err != nil {
		return "", err
	}
	if len(items) != 1 {
		return "", fmt.Errorf("%d circuits", len(items))
	}
	var names []string
	nodes, _ := jget(items[0], "path", "nodes").([]any)
	for _, nd := range nodes {
		name, _ := jget(nd, "name").(string)
		names = append(names, strings.TrimPrefix(name, "router-"))
	}
	return strings.Join(names, ">"), nil
}

func (mn *meshNet) waitPath(t *testing.T, what, want string) {
	t.Helper()
	mn.waitPathOn(t, mn.n, what, want)
}

func (mn *meshNet) waitPathOn(t *testing.T, n *node, what, want string) {
	t.Helper()
	waitUntil(t, what, 20*time.Second, func() error {
		got, err := mn.circuitPath(t, n)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("path %s", got)
		}
		return nil
	})
}

// serve hosts an echo service with `ziti tunnel host` on C (the host's
// only edge router) and reaches it with `ziti tunnel proxy` through A (the
// client's only edge router).
func (mn *meshNet) serve(t *testing.T) {
	t.Helper()
	echo := echoServer(t)
	mk := func(path string, body map[string]any) string {
		t.Helper()
		st, m := do(t, "POST", mn.n.mgmt(path), mn.token, body)
		mustStatus(t, "create "+path, st, m, 201)
		return jget(m, "data", "id").(string)
	}
	host := mk("/configs", map[string]any{"name": "echo-host", "configTypeId": "NH5p4FpGR",
		"data": map[string]any{"protocol": "tcp", "address": "127.0.0.1", "port": echo}})
	mk("/services", map[string]any{"name": "echo", "roleAttributes": []string{"echo"}, "configs": []string{host}, "encryptionRequired": true})
	mk("/service-policies", map[string]any{"name": "echo-dial", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#clients"}, "serviceRoles": []string{"#echo"}})
	mk("/service-policies", map[string]any{"name": "echo-bind", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []string{"#hosts"}, "serviceRoles": []string{"#echo"}})
	mk("/edge-router-policies", map[string]any{"name": "clients-a", "semantic": "AnyOf", "identityRoles": []string{"#clients"}, "edgeRouterRoles": []string{"#a"}})
	mk("/edge-router-policies", map[string]any{"name": "hosts-c", "semantic": "AnyOf", "identityRoles": []string{"#hosts"}, "edgeRouterRoles": []string{"#c"}})
	mk("/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	_, mn.hostFile = enrolledIdentity(t, mn.n, mn.token, mn.dir, "echo-host", "hosts")
	_, mn.clientFile = enrolledIdentity(t, mn.n, mn.token, mn.dir, "echo-client", "clients")
	startZiti(t, mn.dir, "tunnel host", "tunnel", "host", "-i", mn.hostFile)
	waitTerminators(t, "the host's terminator on C", mn.n, mn.token, "echo", 1)
	port := freePort(t)
	mn.proxyAddr = fmt.Sprintf("127.0.0.1:%d", port)
	startZiti(t, mn.dir, "tunnel proxy", "tunnel", "proxy", fmt.Sprintf("echo:%d", port), "-i", mn.clientFile)

}

// The client's only edge router is A, the host's is C: bytes flow A→C over
// their link; cutting that link moves the open stream to A→B→C without
// breaking it; stopping B as well ends the circuit; the links show their
// state throughout.
func TestMesh_CircuitsCrossLinksAndMoveWhenALinkFails(t *testing.T) {
	t.Parallel()
	mn := newMeshNet(t)
	n, token := mn.n, mn.token
	mn.waitLinks(t, "the three links", "a-b Connected", "a-c Connected", "b-c Connected")
	ziti := zitiCLI(t, n)
	// Each link's connections fill the CONNECTIONS column: its dialer's
	// connection(s) to the address it dialed.
	if out := ziti("fabric", "list", "links"); strings.Count(out, "Connected") != 3 || !strings.Contains(out, "router-a") ||
		!mn.showsConnections(out) {
		t.Fatalf("ziti fabric list links:\n%s", out)
	}

	mn.serve(t)

	// The first stream goes A→C, the cheapest path.
	stream := mn.stream(t)
	defer stream.Close()
	mn.waitPath(t, "the circuit on A→C", "a>c")
	mn.routesAgree(t, "the first stream on A→C")
	if out := ziti("fabric", "list", "circuits"); !circuitPathShown.MatchString(out) {
		t.Fatalf("ziti fabric list circuits:\n%s", out)
	}

	// OpenZiti's validations over the Fabric API's management channel: the
	// three routers' links, the host's terminator and every data model agree
	// with the node's.
	if out := ziti("fabric", "validate", "router-links", "--include-valid-routers", "--include-valid-links"); !strings.Contains(out, "started validation of 3 routers") ||
		strings.Count(out, "validation successful") != 3 || strings.Count(out, "linkId: ") != 6 || !strings.Contains(out, "\n0 errors found") {
		t.Fatalf("ziti fabric validate router-links:\n%s", out)
	}
	if out := ziti("fabric", "validate", "terminators", "--include-valid"); !strings.Contains(out, "started validation of 1 terminators") ||
		!strings.Contains(out, "state: Valid") {
		t.Fatalf("ziti fabric validate terminators:\n%s", out)
	}
	if out := ziti("fabric", "validate", "router-sdk-terminators", "--include-valid-routers", "--include-valid-terminators"); !strings.Contains(out, "started validation of 3 routers") ||
		strings.Count(out, "ctrlState: Valid, routerState: established") != 1 || !strings.Contains(out, "\n0 errors found") {
		t.Fatalf("ziti fabric validate router-sdk-terminators:\n%s", out)
	}
	// Inspections reach the routers (OpenZiti's `ziti fabric inspect`):
	// each of the three gives its links; the node lists them connected.
	if out := ziti("fabric", "inspect", "links", "router-.*"); !strings.Contains(out, "Results: (3)") ||
		strings.Count(out, ".links") != 3 || !strings.Contains(out, mn.b.id) {
		t.Fatalf("ziti fabric inspect links:\n%s", out)
	}
	if out := ziti("fabric", "inspect", "connected-routers"); !strings.Contains(out, "Results: (1)") ||
		!strings.Contains(out, "router-a") || !strings.Contains(out, "router-b") || !strings.Contains(out, "router-c") {
		t.Fatalf("ziti fabric inspect connected-routers:\n%s", out)
	}
	// A terminator its router does not have is found, and with
	// --fix-invalid deleted.
	st, m := do(t, "GET", n.mgmt("/services?filter="+url.QueryEscape(`name="echo"`)), token, nil)
	mustStatus(t, "the echo service", st, m, 200)
	items, _ := jget(m, "data").([]any)
	if len(items) != 1 {
		t.Fatalf("services named echo: %v", m)
	}
	svc := jget(items[0], "id")
	st, m = do(t, "POST", n.mgmt("/terminators"), token, map[string]any{"service": svc, "router": mn.a.id, "binding": "edge", "address": "no-such-host"})
	mustStatus(t, "a terminator no router has", st, m, 201)
	stale := jget(m, "data", "id").(string)
	if out := ziti("fabric", "validate", "terminators"); !strings.Contains(out, "started validation of 2 terminators") ||
		!strings.Contains(out, "id: "+stale) || !strings.Contains(out, "state: Invalid") || !strings.Contains(out, "fixed: false") {
		t.Fatalf("ziti fabric validate terminators with one invalid:\n%s", out)
	}
	// It exits 1, as errors were found.
	if out, err := zitiCLIStatus(t, n)("fabric", "validate", "router-sdk-terminators"); err == nil || !strings.Contains(out, "id: "+stale) ||
		!strings.Contains(out, "\n1 errors found") {
		t.Fatalf("ziti fabric validate router-sdk-terminators with one the router does not host: %v\n%s", err, out)
	}
	if out := ziti("fabric", "validate", "terminators", "--fix-invalid"); !strings.Contains(out, "id: "+stale) || !strings.Contains(out, "fixed: true") {
		t.Fatalf("ziti fabric validate terminators --fix-invalid:\n%s", out)
	}
	st, m = do(t, "GET", n.mgmt("/terminators/"+stale), token, nil)
	mustStatus(t, "the invalid terminator after --fix-invalid", st, m, 404)
	if out := ziti("fabric", "validate", "router-data-model"); !strings.Contains(out, "started validation of 4 components") ||
		!strings.Contains(out, "\n0 errors found") {
		t.Fatalf("ziti fabric validate router-data-model:\n%s", out)
	}

	// Cut A-C: the stream moves to A→B→C and keeps echoing.
	mn.acProxy.Cut()
	mn.waitLinks(t, "A-C gone, the others up", "a-b Connected", "b-c Connected")
	mn.waitPath(t, "the circuit moved to A→B→C", "a>b>c")
	mn.routesAgree(t, "moved to A→B→C by the cut")
	for i := 0; i < 5; i++ {
		if err := echoOn(stream, fmt.Sprintf("after the cut %d", i)); err != nil {
			t.Fatalf("the open stream broke when its link was cut: %v", err)
		}
	}

	// A–C back: A dials it again, and the stream moves back to the cheaper
	// path (smart rerouting, every second on this node), still echoing.
	mn.acProxy.Heal()
	mn.waitLinks(t, "A-C back", "a-b Connected", "a-c Connected", "b-c Connected")
	mn.waitPath(t, "the circuit back on A→C", "a>c")
	mn.routesAgree(t, "back on A→C: B dropped from the path")
	if err := echoOn(stream, "back on A-C"); err != nil {
		t.Fatalf("the open stream broke when it moved back: %v", err)
	}

	// An operator steers it with OpenZiti's CLI (PATCH and DELETE
	// /links/{id}): A-C made dear, the stream leaves it; cheap again, smart
	// rerouting brings it back; taken down, it leaves it; up, it returns.
	ac := mn.linkOf(t, n, "a", "c")
	if ac == nil {
		t.Fatal("no A-C link listed")
	}
	for _, step := range []struct {
		flags []string
		path  string
	}{
		{[]string{"--static-cost", "1000000"}, "a>b>c"}, // above two unmeasured links (65 s per end)
		{[]string{"--static-cost", "1"}, "a>c"},
		{[]string{"--down"}, "a>b>c"},
		{[]string{"--down=false"}, "a>c"},
	} {
		ziti(append([]string{"fabric", "update", "link", ac["id"].(string)}, step.flags...)...)
		mn.waitPath(t, "the circuit after ziti fabric update link "+strings.Join(step.flags, " "), step.path)
		mn.routesAgree(t, "after ziti fabric update link "+strings.Join(step.flags, " "))
		if err := echoOn(stream, "after "+strings.Join(step.flags, " ")); err != nil {
			t.Fatalf("the open stream broke after %v: %v", step.flags, err)
		}
	}
	// The same with edgectl's CLI, which refuses a field a link does not have.
	cl := newCLI(t)
	if _, errOut, code := cl.run(adminPassword+"\n", "login", "https://"+n.host(), "-u", adminUser, "--password-stdin", "--yes"); code != 0 {
		t.Fatalf("edgectl login: %s", errOut)
	}
	cl.ok("update", "link", ac["id"].(string), "--set", "down=true")
	mn.waitPath(t, "the circuit after edgectl update link --set down=true", "a>b>c")
	cl.ok("update", "link", ac["id"].(string), "--set", "down=false")
	mn.waitPath(t, "the circuit after edgectl update link --set down=false", "a>c")
	if msg := cl.fails(2, "update", "link", ac["id"].(string), "--set", "name=x"); !strings.Contains(msg, "name") {
		t.Fatalf("edgectl update link --set name=x: %s", msg)
	}
	// Deleted, A-C is closed by its routers, which dial it again: a new
	// link (or a new dial of it), while the stream goes on.
	ziti("fabric", "delete", "link", ac["id"].(string))
	waitUntil(t, "A-C dialed again", 30*time.Second, func() error {
		l := mn.linkOf(t, n, "a", "c")
		if l == nil || (l["id"] == ac["id"] && l["iteration"] == ac["iteration"]) {
			return fmt.Errorf("A-C: %v", l)
		}
		return nil
	})
	if err := echoOn(stream, "after ziti fabric delete link"); err != nil {
		t.Fatalf("the open stream broke when its link was deleted: %v", err)
	}
	mn.acProxy.Cut()
	mn.waitPath(t, "the circuit on A→B→C again", "a>b>c")

	// Stop B as well: no path is left, the circuit ends and the stream closes.
	mn.b.stop()
	waitClosed(t, "the stream with no path left", stream, 30*time.Second)
	waitUntil(t, "no circuit", 20*time.Second, func() error {
		items, err := listAll(t, n, token, "/circuits")
		if err != nil {
			return err
		}
		if len(items) != 0 {
			return fmt.Errorf("%d circuits", len(items))
		}
		return nil
	})
	mn.waitLinks(t, "B's links gone with it (it dialed them)")
	mn.routesAgree(t, "the circuit ended with B stopped")

	// B back: it dials its links again, and a new stream crosses it.
	mn.b.start()
	mn.waitLinks(t, "B's links back", "a-b Connected", "b-c Connected")
	again := mn.stream(t)
	defer again.Close()
	mn.waitPath(t, "the new stream on A→B→C", "a>b>c")
	mn.routesAgree(t, "the new stream on A→B→C")
}

// routesAgree waits until every router that answers holds in its forwarding
// table (OpenZiti's `router-circuits` inspection) exactly the circuits whose
// path in the node's list crosses it: no route is left on a router for a
// circuit that ended or moved, and none is missing.
func (mn *meshNet) routesAgree(t *testing.T, what string) {
	t.Helper()
	mn.routesAgreeOn(t, []*node{mn.n}, what)
}

// routesAgreeOn is routesAgree for the circuits of every node of nodes
// (each node lists its own).
func (mn *meshNet) routesAgreeOn(t *testing.T, nodes []*node, what string) {
	t.Helper()
	waitUntil(t, "the routers' forwarding tables agree with the nodes' circuits: "+what, 20*time.Second, func() error {
		return mn.routesDiff(t, nodes, nil)
	})
}

// routesDiff compares every answering router's forwarding table with the
// circuits of nodes (asked through the first node); a route for no listed
// circuit that spare accepts (given the router's id and the circuit's
// inspected detail) is not a difference.
func (mn *meshNet) routesDiff(t *testing.T, nodes []*node, spare func(router string, detail any) bool) error {
	diffs, err := mn.routeDiffs(t, nodes, spare)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(slices.Sorted(maps.Keys(diffs)), "; "))
	}
	return nil
}

// routeDiffs are routesDiff's differences, one a circuit and router:
// "B holds X, no node's circuit crossing it" or "B lacks X, a node's
// circuit crossing it".
func (mn *meshNet) routeDiffs(t *testing.T, nodes []*node, spare func(router string, detail any) bool) (map[string]bool, error) {
	names := map[string]string{mn.a.id: "A", mn.b.id: "B", mn.c.id: "C"}
	want := map[string][]string{}
	var items []any
	for _, n := range nodes {
		its, err := listAll(t, n, mn.token, "/circuits")
		if err != nil {
			return nil, err
		}
		items = append(items, its...)
	}
	for _, it := range items {
		nodes, _ := jget(it, "path", "nodes").([]any)
		for _, r := range nodes {
			want[jget(r, "id").(string)] = append(want[jget(r, "id").(string)], jget(it, "id").(string))
		}
	}
	st, m, err := doErr("POST", fmt.Sprintf("https://%s/fabric/v1/inspections", nodes[0].host()), mn.token,
		map[string]any{"appRegex": "^(" + mn.a.id + "|" + mn.b.id + "|" + mn.c.id + ")$", "requestedValues": []string{"router-circuits"}})
	if err != nil || st != 200 {
		return nil, fmt.Errorf("inspect router-circuits: %d %v %v", st, err, m)
	}
	values, _ := jget(m, "values").([]any)
	if len(values) == 0 {
		return nil, fmt.Errorf("no router answered: %v", m)
	}
	diffs := map[string]bool{}
	for _, v := range values {
		router := jget(v, "appId").(string)
		table, _ := jget(v, "value", "circuits").(map[string]any)
		for id, detail := range table {
			if !slices.Contains(want[router], id) && (spare == nil || !spare(router, detail)) {
				diffs[fmt.Sprintf("%s holds %s, no node's circuit crossing it", names[router], id)] = true
			}
		}
		for _, id := range want[router] {
			if _, ok := table[id]; !ok {
				diffs[fmt.Sprintf("%s lacks %s, a node's circuit crossing it", names[router], id)] = true
			}
		}
	}
	return diffs, nil
}

// circuitPathShown is the echo circuit's row in `ziti fabric list
// circuits` on A→C: its service, and its path by router names and link id.
var circuitPathShown = regexp.MustCompile(`echo .* r/router-a -> l/\S+ -> r/router-c`)

// showsConnections says whether out, `ziti fabric list links`, shows a
// connection to each address a link was dialed at.
func (mn *meshNet) showsConnections(out string) bool {
	for _, addr := range mn.dialed {
		if !regexp.MustCompile(`[\w.]+: tcp:\S+ -> tcp:` + regexp.QuoteMeta(addr) + `\b`).MatchString(out) {
			return false
		}
	}
	return true
}

// stream opens a connection through the client's proxy that echoes.
func (mn *meshNet) stream(t *testing.T) net.Conn {
	t.Helper()
	var stream net.Conn
	waitUntil(t, "a stream through the proxy", 30*time.Second, func() error {
		c, err := net.DialTimeout("tcp", mn.proxyAddr, 5*time.Second)
		if err != nil {
			return err
		}
		if err := echoOn(c, "hello"); err != nil {
			c.Close()
			return err
		}
		stream = c
		return nil
	})
	return stream
}

// On three nodes every node knows every link (routers report to each), and
// a node's death takes no link from the others: a stream dialed through a
// survivor crosses A→C, and moves to A→B→C when A-C is cut.
func TestMesh_EveryNodeKnowsTheLinks(t *testing.T) {
	t.Parallel()
	c := startRouterCluster(t)
	mn := newMeshNetOn(t, c.nodes[0], c.token)
	for i, n := range c.nodes {
		for _, r := range []*zitiRouter{mn.a, mn.b, mn.c} {
			waitOnline(t, n, c.token, r.id, true, 15*time.Second)
		}
		mn.waitLinksOn(t, n, fmt.Sprintf("node %d: the three links", i+1), "a-b Connected", "a-c Connected", "b-c Connected")
	}
	// OpenZiti's `ziti ops cluster list` through node 1: the three members
	// by id and cluster address, voters, one leader, all connected.
	listMembers := zitiCLI(t, c.nodes[0])
	waitUntil(t, "ziti ops cluster list", 10*time.Second, func() error {
		return c.membersListed(listMembers("ops", "cluster", "list"))
	})
	// A link's change through one node is made on every node: each routes
	// its own circuits.
	ac := mn.linkOf(t, c.nodes[0], "a", "c")
	if ac == nil {
		t.Fatal("no A-C link listed")
	}
	st, m := do(t, "PATCH", c.nodes[1].mgmt("/links/"+ac["id"].(string)), c.token, map[string]any{"staticCost": 7})
	mustStatus(t, "PATCH A-C's static cost through node 2", st, m, 200)
	if nodes, _ := jget(m, "data", "nodes").(map[string]any); len(nodes) != 3 {
		t.Fatalf("the PATCH's answer should say what each of the three nodes did: %v", m)
	} else {
		for id, what := range nodes {
			if what != "changed" {
				t.Fatalf("node %s: %v", id, what)
			}
		}
	}
	for i, n := range c.nodes {
		if l := mn.linkOf(t, n, "a", "c"); l == nil || l["staticCost"] != 7.0 {
			t.Fatalf("node %d: A-C after the change through node 2: %v", i+1, l)
		}
	}
	// An inspection through one node reaches the others (OpenZiti's
	// controllers ask their peers): each node's own value, by node id.
	inspect := func(body map[string]any) []string {
		t.Helper()
		st, m := do(t, "POST", fmt.Sprintf("https://%s/fabric/v1/inspections", c.nodes[0].host()), c.token, body)
		mustStatus(t, "inspect through node 1", st, m, 200)
		values, _ := m["values"].([]any)
		var ids []string
		for _, v := range values {
			if jget(v, "name") == "connected-peers" {
				ids = append(ids, jget(v, "appId").(string))
			}
		}
		sort.Strings(ids)
		return ids
	}
	ids := inspect(map[string]any{"requestedValues": []string{"connected-peers"}})
	if len(ids) != 3 || ids[0] == ids[1] || ids[1] == ids[2] {
		t.Fatalf("connected-peers of the three nodes: %v", ids)
	}
	if only := inspect(map[string]any{"appRegex": "^" + ids[1] + "$", "requestedValues": []string{"connected-peers"}}); len(only) != 1 || only[0] != ids[1] {
		t.Fatalf("connected-peers of node %s only: %v", ids[1], only)
	}
	// Node 1 serves the tunnelers' Client API calls: another one dies.
	c.nodes[2].kill()
	for i, n := range c.nodes[:2] {
		mn.waitLinksOn(t, n, fmt.Sprintf("node %d after node 3 died: the three links", i+1), "a-b Connected", "a-c Connected", "b-c Connected")
	}
	mn.serve(t)
	stream := mn.stream(t)
	defer stream.Close()
	// The circuit is on the node router A asked.
	var on *node
	waitUntil(t, "the node that routed the circuit", 10*time.Second, func() error {
		for _, n := range c.nodes[:2] {
			if p, err := mn.circuitPath(t, n); err == nil {
				if p != "a>c" {
					return fmt.Errorf("path %s", p)
				}
				on = n
				return nil
			}
		}
		return fmt.Errorf("no node lists the circuit")
	})
	if out := zitiCLI(t, on)("fabric", "list", "circuits"); !circuitPathShown.MatchString(out) {
		t.Fatalf("ziti fabric list circuits on the node that routed it:\n%s", out)
	}
	mn.routesAgreeOn(t, c.nodes[:2], "node 3 killed, the stream on A→C")
	mn.acProxy.Cut()
	mn.waitPathOn(t, on, "the circuit moved to A→B→C", "a>b>c")
	if err := echoOn(stream, "after the cut"); err != nil {
		t.Fatalf("the open stream broke when its link was cut: %v", err)
	}
	mn.routesAgreeOn(t, c.nodes[:2], "node 3 killed, the stream moved to A→B→C")
	// Node 3 back: the routers reconnect to it and confirm their circuits;
	// it made none, and the stream goes on.
	c.restart(2)
	for _, r := range []*zitiRouter{mn.a, mn.b, mn.c} {
		waitOnline(t, c.nodes[2], c.token, r.id, true, 20*time.Second)
	}
	mn.routesAgreeOn(t, c.nodes, "node 3 restarted")
	if err := echoOn(stream, "after node 3 came back"); err != nil {
		t.Fatalf("the open stream broke when node 3 came back: %v", err)
	}
}

// membersListed checks out, `ziti ops cluster list` (a table of id,
// address, voter, leader, version, connected, readOnly): c's members, each
// at tls: and its cluster address, voters, one leader, all connected.
func (c *testCluster) membersListed(out string) error {
	want := map[string]string{}
	for i, n := range c.nodes {
		want[c.ids[i]] = fmt.Sprintf("tls:127.0.0.1:%d", n.clusterPort)
	}
	leaders := 0
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(line, "│")
		if len(cells) != 9 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "tls:") {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		id, addr, voter, leader, connected := cells[1], cells[2], cells[3], cells[4], cells[6]
		if want[id] != addr || voter != "true" || connected != "true" {
			return fmt.Errorf("member %q at %s (voter %s, connected %s): want one of %v, a connected voter:\n%s", id, addr, voter, connected, want, out)
		}
		delete(want, id)
		if leader == "true" {
			leaders++
		}
	}
	if len(want) != 0 || leaders != 1 {
		return fmt.Errorf("%v not listed, %d leaders:\n%s", want, leaders, out)
	}
	return nil
}

// echoOn writes s on c and reads it back.
func echoOn(c net.Conn, s string) error { return benchkit.EchoOn(c, s, 10*time.Second) }
