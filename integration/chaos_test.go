package integration

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// A Jepsen-style fault test: three real nodes, clients over all of them,
// repeated faults, then a check of every acknowledged write and of the
// linearizability of the register histories (porcupine).
//
// The registers are the tag "v" of a few identities: a write is a PATCH of
// the tags, a read a GET with consistency=linearizable. Creates and deletes
// of unique identities check that nothing acknowledged is lost, nothing
// refused is applied and nothing is applied twice.
//
// EDGECTL_CHAOS_DURATION sets how long faults are injected (default 15 s,
// the short run of `make test`; `make chaos` runs 3 minutes). For a
// campaign (docs/operations.md, "Chaos campaigns"): EDGECTL_CHAOS_CLIENTS
// sets the number of clients (default 6), EDGECTL_CHAOS_NODE_ARGS extra
// flags for every node (say --apply-ahead=false), and
// EDGECTL_CHAOS_FAULTS the faults to cycle through (a comma-separated
// subset of pause-leader, kill-follower, partition-follower, kill-leader),
// EDGECTL_CHAOS_ROAMING=1 sends each operation to a node picked at random
// (by default a client keeps to one node), EDGECTL_CHAOS_ARTIFACTS the directory a failing run leaves its history in
// (a new directory per run under it; default the system's temporary one).

// chaosRun is the shared state of one fault test.
type chaosRun struct {
	t      *testing.T
	c      *testCluster
	hosts  []string // API host of each node; ports survive restarts
	client *http.Client
	start  time.Time
	regs   []string // register identity ids

	mu      sync.Mutex
	history []porcupine.Operation
	creates []loadWrite
	deletes map[string]writeOutcome // name -> outcome of its delete
	acked   []time.Time             // when each acknowledged write answered
	nodesMu sync.Mutex              // guards c.nodes (restarts replace entries) and paused
	paused  map[int]bool

	artifactDir string
	roaming     bool            // EDGECTL_CHAOS_ROAMING: each operation goes to a node picked at random
	restarts    []restartTiming // every restart of a killed node, in order
}

// restartTiming is how long a restarted node took from its process start to
// its first /readyz 200, and the phases its log names (controller/startup.go).
type restartTiming struct {
	node   string
	ready  time.Duration
	phases []string
}

// Restart aims: a restarted node is ready within restartReadyAim; the test
// fails above restartReadyBound. The bound is twice the aim because the
// machine running the test may be shared (make test runs other packages
// beside it, CI runners have 2 cores): a slow moment must not fail the run,
// while the growth this guards against (a node replaying a log that no
// snapshot had cut, 13.5 s three minutes into the run) still does.
const (
	restartReadyAim   = 5 * time.Second
	restartReadyBound = 10 * time.Second
)

func (r *chaosRun) now() int64 { return int64(time.Since(r.start)) }

func TestClusterChaos(t *testing.T) {
	t.Parallel()
	duration := 15 * time.Second
	if v := os.Getenv("EDGECTL_CHAOS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("EDGECTL_CHAOS_DURATION: %v", err)
		}
		duration = d
	}
	const registers = 3
	clients := 6
	if v := os.Getenv("EDGECTL_CHAOS_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("EDGECTL_CHAOS_CLIENTS: %q is not a positive number", v)
		}
		clients = n
	}
	nodeArgs := strings.Fields(os.Getenv("EDGECTL_CHAOS_NODE_ARGS"))
	t.Logf("chaos: %s of faults, %d clients, node flags %q, faults %q, roaming %q", duration, clients, nodeArgs,
		os.Getenv("EDGECTL_CHAOS_FAULTS"), os.Getenv("EDGECTL_CHAOS_ROAMING"))
	c := startCluster(t, clusterOpts{size: 3, proxies: true, args: func(int) []string { return nodeArgs }})
	r := &chaosRun{t: t, c: c, deletes: map[string]writeOutcome{}, paused: map[int]bool{}, roaming: os.Getenv("EDGECTL_CHAOS_ROAMING") == "1"}
	for _, n := range c.nodes {
		r.hosts = append(r.hosts, n.host())
	}
	var err error
	if r.client, err = newTLSClient(filepath.Join(c.nodes[0].dataDir, "pki", "ca-bundle.pem"), 4*clients); err != nil {
		t.Fatal(err)
	}
	r.client.Timeout = 15 * time.Second
	for k := range registers {
		r.regs = append(r.regs, createIdentity(t, c.nodes[0], c.token,
			map[string]any{"name": fmt.Sprintf("register-%d", k), "type": "Device", "isAdmin": false, "tags": map[string]any{"v": "0"}}))
	}
	r.start = time.Now()
	t.Cleanup(func() { // never leave a stopped process behind
		r.nodesMu.Lock()
		defer r.nodesMu.Unlock()
		for i := range r.paused {
			_ = c.nodes[i].cmd.Process.Signal(syscall.SIGCONT)
		}
	})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for cl := range clients {
		wg.Go(func() { r.client_(cl, stop) })
	}
	faults := r.injectFaults(duration)
	close(stop)
	wg.Wait()
	r.heal()
	r.reportRestarts()

	// Final linearizable reads of every register through every node.
	for k := range r.regs {
		for i := range r.hosts {
			r.readRegister(100+i, i, k)
		}
	}
	r.check(faults)
}

// client_ runs one client's operations until stop.
func (r *chaosRun) client_(id int, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(r.start.UnixNano())))
	var mine []string // names this client created and saw acknowledged
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		// Each client keeps to one node, as a client of a load balancer
		// does between health checks: the clients of a paused node wait
		// for it, the others go on.
		node := id % len(r.hosts)
		if r.roaming {
			// Requests sent to a paused node during its pause, after
			// writes the new leader acknowledged, and answered when it
			// resumes: the reads that catch a deposed leader.
			node = rng.IntN(len(r.hosts))
		}
		ok := true
		switch p := rng.IntN(100); {
		case p < 35:
			ok = r.writeRegister(id, node, rng.IntN(len(r.regs)), fmt.Sprintf("c%d-%d", id, seq))
		case p < 70:
			ok = r.readRegister(id, node, rng.IntN(len(r.regs)))
		case p < 75:
			ok = r.localRead(node)
		case p < 92 || len(mine) == 0:
			name := fmt.Sprintf("chaos-c%d-%06d", id, seq)
			st, m, err := postJSON(r.client, r.url(node, "/identities"), r.c.token, map[string]any{"name": name, "type": "Device", "isAdmin": false})
			lw := classifyWrite(name, st, m, err)
			r.mu.Lock()
			r.creates = append(r.creates, lw)
			if lw.outcome == writeApplied {
				r.acked = append(r.acked, time.Now())
			}
			r.mu.Unlock()
			if lw.outcome == writeApplied {
				mine = append(mine, name)
			}
			ok = lw.outcome == writeApplied
		default:
			name := mine[0]
			mine = mine[1:]
			ok = r.deleteByName(node, name)
		}
		if !ok {
			time.Sleep(20 * time.Millisecond) // a down node refuses at once: do not spin
		}
	}
}

func (r *chaosRun) url(node int, path string) string {
	return fmt.Sprintf("https://%s%s%s", r.hosts[node], mgmtPrefix, path)
}

// writeRegister patches register k to value and records the operation.
func (r *chaosRun) writeRegister(client, node, k int, value string) bool {
	call := r.now()
	st, m, err := doWith(r.client, http.MethodPatch, r.url(node, "/identities/"+r.regs[k]), r.c.token, map[string]any{"tags": map[string]any{"v": value}})
	ret := r.now()
	lw := classifyWrite(value, st, m, err)
	if st == http.StatusOK {
		lw.outcome = writeApplied
	}
	switch lw.outcome {
	case writeNotApplied:
		if st != 0 && st != http.StatusServiceUnavailable {
			r.t.Errorf("register write %s: unexpected %d %s", value, st, js(m))
		}
		return false // never happened: not part of the history
	case writeMaybe:
		ret = math.MaxInt64 // may take effect at any time after its call, or never
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.history = append(r.history, porcupine.Operation{ClientId: client, Input: regInput{key: k, write: true, value: value, node: node}, Call: call, Return: ret})
	if lw.outcome == writeApplied {
		r.acked = append(r.acked, time.Now())
	}
	return lw.outcome == writeApplied
}

// readRegister reads register k with consistency=linearizable; only reads
// that answered are part of the history.
func (r *chaosRun) readRegister(client, node, k int) bool {
	call := r.now()
	st, m, err := doWith(r.client, http.MethodGet, r.url(node, "/identities/"+r.regs[k]+"?consistency=linearizable"), r.c.token, nil)
	ret := r.now()
	if err != nil || st != http.StatusOK {
		if err == nil && st != http.StatusServiceUnavailable {
			r.t.Errorf("linearizable read: unexpected %d %s", st, js(m))
		}
		return false
	}
	v, _ := jget(m, "data", "tags", "v").(string)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.history = append(r.history, porcupine.Operation{ClientId: client, Input: regInput{key: k, node: node}, Output: regOutput{value: v}, Call: call, Return: ret})
	return true
}

// localRead lists identities with consistency=local: it must answer (from
// the node's own state) whenever the node runs and is not paused.
func (r *chaosRun) localRead(node int) bool {
	st, m, err := doWith(r.client, http.MethodGet, r.url(node, "/identities?limit=1&consistency=local"), r.c.token, nil)
	if err == nil && st != http.StatusOK {
		r.t.Errorf("local read: unexpected %d %s", st, js(m))
	}
	return err == nil
}

// deleteByName deletes an identity this client created.
func (r *chaosRun) deleteByName(node int, name string) bool {
	st, m, err := doWith(r.client, http.MethodGet, r.url(node, `/identities?filter=name%3D%22`+name+`%22&consistency=linearizable`), r.c.token, nil)
	if err != nil || st != http.StatusOK {
		return false // not attempted: the create stays as it was
	}
	data, _ := m["data"].([]any)
	if len(data) != 1 {
		r.t.Errorf("acknowledged create %s: a linearizable read finds %d", name, len(data))
		return false
	}
	id, _ := jget(data[0], "id").(string)
	st, m, err = doWith(r.client, http.MethodDelete, r.url(node, "/identities/"+id), r.c.token, nil)
	lw := classifyWrite(name, st, m, err)
	if st == http.StatusOK {
		lw.outcome = writeApplied
	}
	if lw.outcome == writeNotApplied && st == http.StatusNotFound {
		lw.outcome = writeApplied // an earlier attempt whose outcome was unknown did it
	}
	r.mu.Lock()
	r.deletes[name] = lw.outcome
	r.mu.Unlock()
	return lw.outcome == writeApplied
}

// node returns the current process of node i.
func (r *chaosRun) node(i int) *node {
	r.nodesMu.Lock()
	defer r.nodesMu.Unlock()
	return r.c.nodes[i]
}

// leader finds the leader as the nodes that answer name it (paused nodes
// are skipped); -1 if none is agreed on within timeout.
func (r *chaosRun) leader(timeout time.Duration) int {
	quick := &http.Client{Timeout: time.Second, Transport: r.client.Transport}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		votes := map[string]int{}
		for i := range r.hosts {
			r.nodesMu.Lock()
			skip := r.paused[i] || r.c.nodes[i].exited()
			r.nodesMu.Unlock()
			if skip {
				continue
			}
			st, m, err := doWith(quick, http.MethodGet, "https://"+r.hosts[i]+"/readyz", "", nil)
			if err == nil && st == http.StatusOK {
				id, _ := m["leaderId"].(string)
				votes[id]++
			}
		}
		for id, n := range votes {
			if n >= 2 {
				return r.c.indexOf(id)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return -1
}

// fault is one injected fault, for the log; a pause of the leader also
// keeps its window, for the write gap.
type fault struct {
	at         time.Duration
	what       string
	pauseStart time.Time
	pauseEnd   time.Time
}

// injectFaults cycles through the faults until duration has passed.
func (r *chaosRun) injectFaults(duration time.Duration) []fault {
	var log []fault
	note := func(format string, args ...any) {
		f := fault{at: time.Since(r.start).Round(time.Millisecond), what: fmt.Sprintf(format, args...)}
		log = append(log, f)
		r.t.Logf("%8s %s", f.at, f.what)
	}
	kinds := []string{"pause-leader", "kill-follower", "partition-follower", "kill-leader"}
	if v := os.Getenv("EDGECTL_CHAOS_FAULTS"); v != "" {
		kinds = strings.Split(v, ",")
		for _, k := range kinds {
			if !slices.Contains([]string{"pause-leader", "kill-follower", "partition-follower", "kill-leader"}, k) {
				r.t.Fatalf("EDGECTL_CHAOS_FAULTS: %q is not pause-leader, kill-follower, partition-follower or kill-leader", k)
			}
		}
	}
	end := r.start.Add(duration)
	time.Sleep(time.Second) // some history before the first fault
	for i := 0; time.Now().Before(end); i++ {
		l := r.leader(15 * time.Second)
		if l < 0 {
			r.t.Fatal("the cluster has no leader 15 s after the last fault was healed")
		}
		f := (l + 1 + i%2) % 3
		switch kinds[i%len(kinds)] {
		case "pause-leader":
			note("SIGSTOP leader %s for 4 s", r.c.ids[l])
			r.signal(l, syscall.SIGSTOP, true)
			from := time.Now()
			time.Sleep(4 * time.Second)
			r.signal(l, syscall.SIGCONT, false)
			log[len(log)-1].pauseStart, log[len(log)-1].pauseEnd = from, time.Now()
			note("SIGCONT %s", r.c.ids[l])
		case "kill-follower", "kill-leader":
			victim := f
			if kinds[i%len(kinds)] == "kill-leader" {
				victim = l
			}
			note("SIGKILL %s", r.c.ids[victim])
			r.node(victim).kill()
			time.Sleep(2 * time.Second)
			rt := r.restart(victim)
			note("%s restarted: ready %s after its start", r.c.ids[victim], rt.ready.Round(time.Millisecond))
		case "partition-follower":
			note("cut %s off from the others for 3 s", r.c.ids[f])
			r.c.proxies[f].Cut()
			time.Sleep(3 * time.Second)
			r.c.proxies[f].Heal()
			note("healed %s", r.c.ids[f])
		}
		time.Sleep(time.Second)
	}
	return log
}

func (r *chaosRun) signal(i int, sig syscall.Signal, paused bool) {
	r.nodesMu.Lock()
	defer r.nodesMu.Unlock()
	if err := r.c.nodes[i].cmd.Process.Signal(sig); err != nil {
		r.t.Fatalf("%v to %s: %v", sig, r.c.ids[i], err)
	}
	if paused {
		r.paused[i] = true
	} else {
		delete(r.paused, i)
	}
}

// restart starts node i again on its data dir and waits for its first
// /readyz 200, which it times.
func (r *chaosRun) restart(i int) restartTiming {
	n := r.node(i)
	began := time.Now()
	nn := n.restart(r.t, nodeOpts{args: n.restartArgs()})
	nn.name = n.name
	r.nodesMu.Lock()
	r.c.nodes[i] = nn
	r.nodesMu.Unlock()
	quick := &http.Client{Timeout: time.Second, Transport: r.client.Transport}
	deadline := began.Add(60 * time.Second)
	for {
		st, _, err := doWith(quick, http.MethodGet, "https://"+r.hosts[i]+"/readyz", "", nil)
		if err == nil && st == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: not ready 60 s after its restart", r.c.ids[i])
		}
		time.Sleep(20 * time.Millisecond)
	}
	rt := restartTiming{node: r.c.ids[i], ready: time.Since(began)}
	for _, line := range strings.Split(nn.stderr.String(), "\n") {
		if strings.Contains(line, "startup phase") {
			rt.phases = append(rt.phases, line)
		}
	}
	r.mu.Lock()
	r.restarts = append(r.restarts, rt)
	r.mu.Unlock()
	return rt
}

// reportRestarts prints the time to ready of every restart, with the
// phases the node logged, and fails the run above restartReadyBound.
func (r *chaosRun) reportRestarts() {
	r.mu.Lock()
	defer r.mu.Unlock()
	var worst time.Duration
	for k, rt := range r.restarts {
		worst = max(worst, rt.ready)
		r.t.Logf("restart %d of %s: ready %s after its start", k+1, rt.node, rt.ready.Round(time.Millisecond))
		for _, p := range rt.phases {
			r.t.Logf("    %s", p)
		}
	}
	if len(r.restarts) == 0 {
		return
	}
	r.t.Logf("%d restarts; slowest ready after %s (aim: under %s)", len(r.restarts), worst.Round(time.Millisecond), restartReadyAim)
	if worst > restartReadyBound {
		r.t.Errorf("a restarted node took %s to be ready (bound %s, aim %s): see the phases above", worst.Round(time.Millisecond), restartReadyBound, restartReadyAim)
	}
}

// heal ends every fault still in place.
func (r *chaosRun) heal() {
	r.nodesMu.Lock()
	for i := range r.paused {
		_ = r.c.nodes[i].cmd.Process.Signal(syscall.SIGCONT)
	}
	r.paused = map[int]bool{}
	r.nodesMu.Unlock()
	for i, p := range r.c.proxies {
		p.Heal()
		if r.node(i).exited() {
			r.restart(i)
		}
	}
	if r.leader(30*time.Second) < 0 {
		r.t.Fatal("no leader 30 s after healing")
	}
}

// check verifies the run: acknowledged creates and deletes, identical
// nodes, identical registers, and linearizable register histories.
func (r *chaosRun) check(faults []fault) {
	t := r.t
	lists := r.c.convergedIdentities(60 * time.Second)
	seen := map[string]int{}
	for _, name := range names(lists[0]) {
		seen[name]++
	}
	count := map[writeOutcome]int{}
	unanswered := 0 // unknown because no answer came (the node died or froze), not a 503 OUTCOME_UNKNOWN
	for _, w := range r.creates {
		count[w.outcome]++
		if w.outcome == writeMaybe && w.status == 0 {
			unanswered++
		}
		n := seen[w.name]
		del, deleted := r.deletes[w.name]
		switch {
		case n > 1:
			t.Errorf("%s is present %d times", w.name, n)
		case deleted && del == writeApplied && n != 0:
			t.Errorf("%s: its delete was acknowledged but it is present", w.name)
		case deleted && del != writeNotApplied:
			// deleted, or its delete's outcome is unknown: either way is right
		case w.outcome == writeApplied && n == 0:
			t.Errorf("%s: its create was acknowledged but it is missing", w.name)
		case w.outcome == writeNotApplied && n != 0:
			t.Errorf("%s: its create was refused (%s) but it is present", w.name, w.detail)
		}
	}
	// Every node holds the same register values.
	for k, id := range r.regs {
		var first string
		for i := range r.hosts {
			v, _ := jget(getIdentity(t, r.node(i), r.c.token, id), "tags", "v").(string)
			if i == 0 {
				first = v
			} else if v != first {
				t.Errorf("register %d: %s on node 1, %s on node %d", k, first, v, i+1)
			}
		}
	}
	reads, writes := 0, 0
	for _, op := range r.history {
		if op.Input.(regInput).write {
			writes++
		} else {
			reads++
		}
	}
	gap, pausedGap := longestGap(r.acked, time.Time{}, time.Now()), time.Duration(0)
	for _, f := range faults {
		if !f.pauseStart.IsZero() {
			pausedGap = max(pausedGap, longestGap(r.acked, f.pauseStart, f.pauseEnd))
		}
	}
	t.Logf("%d faults; creates: %d acknowledged, %d refused, %d unknown (%d of them without an answer); register history: %d writes, %d linearizable reads; "+
		"longest window without an acknowledged write: %s overall, %s while the leader was paused",
		len(faults), count[writeApplied], count[writeNotApplied], count[writeMaybe], unanswered, writes, reads,
		gap.Round(time.Millisecond), pausedGap.Round(time.Millisecond))
	if os.Getenv("EDGECTL_CHAOS_DURATION") != "" && !r.roaming && pausedGap >= 3*time.Second {
		// Asserted in the long run only: the short one shares two cores
		// with the rest of make test. Roaming clients all end up waiting
		// on the paused node, so writes stop then by design.
		t.Errorf("writes stopped for %s while the leader was paused (aim: under 3 s)", pausedGap)
	}
	if count[writeApplied] < 20 || reads < 20 {
		t.Fatalf("too little history to prove anything")
	}
	res, info := porcupine.CheckOperationsVerbose(registerModel, r.history, 2*time.Minute)
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		path := filepath.Join(r.artifacts(), "history.html")
		if f, err := os.Create(path); err == nil {
			_ = porcupine.Visualize(registerModel, info, f)
			f.Close()
		}
		t.Errorf("the register history is not linearizable: see %s (open it in a browser) and the history in %s%s", path, r.dumpHistory(), explainIllegal(r.history))
	default:
		t.Errorf("the linearizability check did not finish in 2 minutes")
	}
}

// longestGap is the longest time within [from, to] without an instant of
// ts (from zero: since the first instant).
func longestGap(ts []time.Time, from, to time.Time) time.Duration {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	var gap time.Duration
	prev := from
	for _, at := range ts {
		if at.Before(from) {
			continue
		}
		if at.After(to) {
			at = to
		}
		if !prev.IsZero() {
			gap = max(gap, at.Sub(prev))
		}
		prev = at
		if at.Equal(to) {
			return gap
		}
	}
	if !prev.IsZero() {
		gap = max(gap, to.Sub(prev))
	}
	return gap
}

// artifacts is a directory kept after the test, for what a failure leaves
// to read.
func (r *chaosRun) artifacts() string {
	if r.artifactDir == "" {
		dir := os.Getenv("EDGECTL_CHAOS_ARTIFACTS")
		if dir != "" {
			_ = os.MkdirAll(dir, 0o755)
		}
		r.artifactDir, _ = os.MkdirTemp(dir, "edgectl-chaos-")
	}
	return r.artifactDir
}

// dumpHistory writes the register history, one operation a line with its
// times in ns since the start, to a file and returns its path.
func (r *chaosRun) dumpHistory() string {
	path := filepath.Join(r.artifacts(), "history.txt")
	var b strings.Builder
	for _, op := range r.history {
		fmt.Fprintf(&b, "client %3d [%d, %d] %s\n", op.ClientId, op.Call, op.Return, registerModel.DescribeOperation(op.Input, op.Output))
	}
	_ = os.WriteFile(path, []byte(b.String()), 0o644)
	return path
}
