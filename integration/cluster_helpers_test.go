package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// Helpers for tests that run several nodes as one cluster.

// testCluster is a set of edgectl processes joined into one cluster.
type testCluster struct {
	t       *testing.T
	nodes   []*node
	ids     []string             // node ids, in the order of nodes
	proxies []*benchkit.TCPProxy // with clusterOpts.proxies: the proxy in front of each node's cluster port
	token   string               // an admin session; API sessions are replicated, so it works on every node
	// joinTokens are the tokens the nodes joined with (spent).
	joinTokens []string
}

// clusterOpts says how to start a cluster.
type clusterOpts struct {
	size int
	// proxies puts a TCP proxy (benchkit.TCPProxy) in front of each node's cluster
	// port and has the node advertise it with --cluster-advertise, so that a
	// test can cut the node's cluster traffic.
	proxies bool
	// bin is the edgectl binary the nodes run; "" means this tree's.
	bin string
	// args, when set, are extra flags for node i (0-based).
	args func(i int) []string
	// activation opens each node's API port in the test and passes it to the
	// node (nodeOpts.apiSocket), as systemd's socket activation does.
	activation bool
}

// startCluster starts the first node, then joins the others one by one with
// join tokens (from `edgectl cluster join-token`, which uses the first
// node's admin socket), and waits until every node sees all members as
// voters and the same leader.
func startCluster(t *testing.T, o clusterOpts) *testCluster {
	t.Helper()
	c := &testCluster{t: t}
	for range o.size {
		c.startMember(o)
	}
	c.waitMembers(c.ids, 30*time.Second)
	return c
}

// startMember starts the cluster's next node as o says: the first one
// alone, any other joined through the first with a new join token. It
// returns once the node answers (a joining node may not be a member yet).
func (c *testCluster) startMember(o clusterOpts) *node {
	t := c.t
	t.Helper()
	i := len(c.nodes)
	opts := nodeOpts{bin: o.bin}
	if o.args != nil {
		opts.args = append(opts.args, o.args(i)...)
	}
	if o.activation {
		opts.apiSocket, opts.apiPort = apiSocket(t)
	}
	if o.proxies {
		// The ports are fixed before the start: the proxy must know its target.
		opts.clusterPort = freePort(t)
		if opts.apiPort == 0 {
			opts.apiPort = freePort(t)
		}
		p := newTCPProxy(t, fmt.Sprintf("127.0.0.1:%d", opts.clusterPort))
		c.proxies = append(c.proxies, p)
		opts.args = append(opts.args, "--cluster-advertise", p.Addr())
	}
	if i > 0 {
		tok := cliJoinToken(t, c.nodes[0])
		c.joinTokens = append(c.joinTokens, tok)
		opts.args = append(opts.args, "--join", c.nodes[0].host(), "--join-token", tok)
	}
	n := startNode(t, opts)
	n.name = fmt.Sprintf("node%d@%d", i+1, n.apiPort)
	c.nodes = append(c.nodes, n)
	c.ids = append(c.ids, readNodeID(t, n))
	if i == 0 {
		c.token = login(t, n, adminUser, n.password)
	}
	return n
}

// apiSocket opens a loopback port for a node's API, held by the test until
// it ends (clusterOpts.activation): nobody accepts on the test's copy, so
// what arrives while the node restarts waits for the next process.
func apiSocket(t *testing.T) (*os.File, int) {
	t.Helper()
	for {
		port := freePort(t)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken since freePort looked
		}
		f, err := ln.(*net.TCPListener).File()
		_ = ln.Close() // f holds the socket
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		return f, port
	}
}

// readNodeID is the id kept in the node's data dir.
func readNodeID(t *testing.T, n *node) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(n.dataDir, "node.json"))
	if err != nil {
		t.Fatalf("%s: node.json: %v", n.name, err)
	}
	var info struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &info); err != nil || info.ID == "" {
		t.Fatalf("%s: node.json: %v: %s", n.name, err, raw)
	}
	return info.ID
}

// cliJoinToken runs `edgectl cluster join-token` against n's admin socket.
func cliJoinToken(t *testing.T, n *node) string {
	t.Helper()
	out, err := runEdgectl(t, 30*time.Second, "cluster", "join-token", "--data-dir", n.dataDir)
	if err != nil {
		t.Fatalf("edgectl cluster join-token: %v\n%s", err, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "edgectl-join.") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("edgectl cluster join-token printed no token:\n%s", out)
	return ""
}

// runEdgectl runs the binary with args and returns its combined output; a
// run that outlives timeout is killed and reported as an error.
func runEdgectl(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = envWithout("EDGECTL_ADMIN_PASSWORD")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("edgectl %s did not finish within %s", strings.Join(args, " "), timeout)
	}
	return string(out), err
}

// running are the nodes whose process is up.
func (c *testCluster) running() []*node {
	var out []*node
	for _, n := range c.nodes {
		if !n.exited() {
			out = append(out, n)
		}
	}
	return out
}

// indexOf is the position of node id in the cluster.
func (c *testCluster) indexOf(id string) int {
	for i, x := range c.ids {
		if x == id {
			return i
		}
	}
	c.t.Fatalf("no node with id %q in %v", id, c.ids)
	return -1
}

// memberView is what GET /cluster/members answers about one member.
type memberView struct {
	ID       string `json:"id"`
	Address  string `json:"address"`
	IsLeader bool   `json:"isLeader"`
	IsVoter  bool   `json:"isVoter"`
}

// members asks node n for the cluster's members.
func (c *testCluster) members(n *node) ([]memberView, error) {
	status, m, err := doErr(http.MethodGet, n.mgmt("/cluster/members"), c.token, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET /cluster/members on %s: %d %s", n.name, status, js(m))
	}
	raw, _ := json.Marshal(m["data"])
	var out []memberView
	err = json.Unmarshal(raw, &out)
	return out, err
}

// waitMembers waits until every running node lists exactly ids as voters
// and all of them name the same leader, which it returns.
func (c *testCluster) waitMembers(ids []string, timeout time.Duration) string {
	c.t.Helper()
	want := append([]string(nil), ids...)
	var leader string
	waitUntil(c.t, fmt.Sprintf("every node lists the voters %v and one leader", want), timeout, func() error {
		leader = ""
		for _, n := range c.running() {
			ms, err := c.members(n)
			if err != nil {
				return err
			}
			var got []string
			nodeLeader := ""
			for _, m := range ms {
				if !m.IsVoter {
					return fmt.Errorf("%s: %s is not a voter", n.name, m.ID)
				}
				got = append(got, m.ID)
				if m.IsLeader {
					nodeLeader = m.ID
				}
			}
			if !sameSet(got, want) {
				return fmt.Errorf("%s lists %v", n.name, got)
			}
			if nodeLeader == "" || (leader != "" && nodeLeader != leader) {
				return fmt.Errorf("%s names leader %q, another node %q", n.name, nodeLeader, leader)
			}
			leader = nodeLeader
		}
		return nil
	})
	return leader
}

// leader waits until the running nodes agree on a leader that is running
// and returns its index.
func (c *testCluster) leader(timeout time.Duration) int {
	c.t.Helper()
	idx := -1
	waitUntil(c.t, "the running nodes agree on a running leader", timeout, func() error {
		leader := ""
		for _, n := range c.running() {
			ms, err := c.members(n)
			if err != nil {
				return err
			}
			l := ""
			for _, m := range ms {
				if m.IsLeader {
					l = m.ID
				}
			}
			if l == "" || (leader != "" && l != leader) {
				return fmt.Errorf("%s names leader %q, another node %q", n.name, l, leader)
			}
			leader = l
		}
		idx = c.indexOf(leader)
		if c.nodes[idx].exited() {
			return fmt.Errorf("the leader %s is not running", leader)
		}
		return nil
	})
	return idx
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, v := range seen {
		if v != 0 {
			return false
		}
	}
	return true
}

// waitUntil polls cond until it returns nil, failing the test with cond's
// last error when timeout passes.
func waitUntil(t *testing.T, what string, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for: %s; last: %v", timeout, what, err)
		}
		<-tick.C
	}
}

// listAll reads a whole list by pages of 500 (the maximum) and returns its items.
func listAll(t *testing.T, n *node, token, path string) ([]any, error) {
	t.Helper()
	var items []any
	for offset := 0; ; {
		q := url.Values{"limit": {"500"}, "offset": {fmt.Sprint(offset)}}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		status, m, err := doErr(http.MethodGet, n.mgmt(path+sep+q.Encode()), token, nil)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("GET %s on %s: %d %s", path, n.name, status, js(m))
		}
		page, _ := m["data"].([]any)
		items = append(items, page...)
		total, _ := jget(m, "meta", "pagination", "totalCount").(float64)
		offset += len(page)
		if len(page) == 0 || offset >= int(total) {
			return items, nil
		}
	}
}

// names are the "name" fields of list items.
func names(items []any) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, _ := jget(it, "name").(string)
		out = append(out, s)
	}
	return out
}

// sameLists reports the first difference between two lists, "" if equal.
func sameLists(a, b []any) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d items against %d", len(a), len(b))
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprintf("item %d differs:\n  %s\n  %s", i, js(a[i]), js(b[i]))
		}
	}
	return ""
}

// restartAll starts every stopped node of the cluster again, all at once: a
// node that restarts waits for a quorum before it serves, so starting them
// one after the other would stall on the first.
func (c *testCluster) restartAll() {
	c.t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for i, n := range c.nodes {
		if !n.exited() {
			continue
		}
		wg.Go(func() {
			nn, err := tryStart(c.t, nodeOpts{dataDir: n.dataDir, apiPort: n.apiPort, clusterPort: n.clusterPort,
				adminPassword: n.password, args: n.restartArgs()})
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", n.name, err)
				return
			}
			nn.name = n.name
			c.nodes[i] = nn
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.t.Fatalf("restarting the cluster: %v", err)
	}
}

// restart starts node i again on its data dir and ports.
func (c *testCluster) restart(i int) {
	c.t.Helper()
	n := c.nodes[i]
	nn := n.restart(c.t, nodeOpts{args: n.restartArgs()})
	nn.name = n.name
	c.nodes[i] = nn
}

// restartArgs are the flags a restart repeats: the extra flags it was
// started with but the join flags (a member restarts without them).
func (n *node) restartArgs() []string {
	var out []string
	for i := 0; i < len(n.args); i++ {
		if a := n.args[i]; a == "--join" || a == "--join-token" {
			i++
			continue
		}
		out = append(out, n.args[i])
	}
	return out
}

// doWith sends one request with client (not the node's registered one).
// body: nil, []byte or string (sent as is), or anything else (sent as JSON).
// The answer is decoded as a JSON object. It does not fail the test.
func doWith(client *http.Client, method, u, token string, body any) (int, map[string]any, error) {
	var raw []byte
	if body != nil {
		switch b := body.(type) {
		case []byte:
			raw = b
		case string:
			raw = []byte(b)
		default:
			var err error
			if raw, err = json.Marshal(b); err != nil {
				return 0, nil, err
			}
		}
		if raw == nil {
			raw = []byte{} // a body, if an empty one
		}
	}
	st, data, err := benchkit.Send(context.Background(), client, method, u, token, raw)
	if err != nil {
		return st, nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return st, nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return st, nil, fmt.Errorf("%s %s: answer is not a JSON object (%v): %.300s", method, u, err, data)
	}
	return st, m, nil
}

// getRaw GETs a Management API path and returns the body as is.
func getRaw(n *node, token, path string) (int, []byte, error) {
	c := clientFor(n.host())
	if c == nil {
		return 0, nil, fmt.Errorf("no running node at %s", n.host())
	}
	return benchkit.Send(context.Background(), c, http.MethodGet, n.mgmt(path), token, nil)
}
