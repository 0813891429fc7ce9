// Command fleet drives simulated edge routers and their SDK clients
// (package edgectl/bench/fleet) against edgectl (one node; with -cluster
// three nodes as well) and against OpenZiti's own controller from the
// cached ziti v1.7.2 binary, in one run, and prints per phase the counts,
// the rates (terminators: per tenth of the target, so a degrading curve
// shows), the latency p50 and p99, the controller's CPU, and the CPU the
// host stole; then a markdown table of the same figures side by side.
//
//	go run ./bench/fleet/cmd/fleet -edgectl bin/edgectl -ziti $(sh scripts/ziti.sh) -routers 10 -terminators 5000
//
// bench/README.md has the full-size command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"edgectl/bench/benchkit"
	"edgectl/bench/fleet"
)

var (
	bins        benchkit.Comparison
	routers     = flag.Int("routers", 10, "edge routers")
	hosts       = flag.Int("hosts", 100, "hosting identities (terminator j is host j mod -hosts's)")
	services    = flag.Int("services", 1, "services (host i binds service i mod -services; circuit k dials service k mod -services)")
	terminators = flag.Int("terminators", 5000, "terminators, spread over the routers")
	inflight    = flag.Int("inflight", 4, "terminator creates in flight per router")
	circuits    = flag.Int("circuits", 2000, "circuits (each ended by a fault once made)")
	dialers     = flag.Int("concurrency", 32, "circuit requests in flight")
	budget      = flag.Duration("budget", 10*time.Minute, "time budget of the terminator phase (and of the circuit phase)")
	cluster     = flag.Bool("cluster", false, "measure three edgectl nodes as well (every router connects to all three; its clients' requests go to node i mod 3)")
	rateAt      = flag.Int("rate-at", 40000, "the table also gives the terminators/s over the 1,000 that end at this count")
	circuitRate = flag.Float64("circuit-rate", 200, "then circuits at this fixed offered load (per second) for -circuit-rate-secs, for their latencies below saturation (0: none)")
	circuitSecs = flag.Int("circuit-rate-secs", 15, "how long the fixed offered load of -circuit-rate lasts")
	nodeLog     = flag.String("node-log-level", "warn", "edgectl's --log-level (info logs each restart's startup phases, in controller*.log of the run's directory)")
	keep        = flag.Bool("keep", false, "keep each run's directory (the nodes' data and logs) and print where it is")
	restartLoad = flag.Int("restart-load", 8, "dials in flight during the restarts (0: none); the first circuit after each node is up and the longest time without one are reported")
	restart     = flag.Bool("restart", true, "edgectl: SIGKILL the node (the first, with -cluster) and start it again, then check every terminator, router and circuit; with -cluster, then all three in turn")

	// Links at scale (mesh.go).
	mesh       = flag.String("mesh", "ring", "the links the routers report: ring (each to the next two) or full (every two routers: N(N-1)/2 links)")
	meshDials  = flag.Int("mesh-dials", 0, "circuits to a service whose one terminator is on router 1, dialed through the other routers (each crosses a link), ended at once")
	leave      = flag.Int("leave", 0, "with -mesh full: circuits opened through router 2 (the far router's other links made expensive) before it disconnects; times until the controller moved each")
	leaveLimit = flag.Duration("leave-timeout", 30*time.Second, "how long to wait for the circuits of the router that left to move")

	// The data model at scale (datamodel.go).
	identities = flag.Int("identities", 0, "identities made (no policy gives them anything) before the data model phase; 0 without -model: no such phase")
	idWorkers  = flag.Int("identity-workers", 16, "identity creates in flight")
	idOffline  = flag.Bool("identities-offline", false, "make the -identities while every router is disconnected (as a model loaded before the routers come: no data model fan-out per create), so a million fit the time")
	model      = flag.Bool("model", false, "the data model phase: the routers' memory on the node, every router reconnecting at once for the full data model, -policy-changes timed to every router")
	policies   = flag.Int("policy-changes", 20, "service policies made one after the other in the data model phase, each timed to every router's data model")
)

const password = "fleet-admin-1"

// result is one controller's figures.
type result struct {
	name                      string
	setup, connect, linkTime  time.Duration
	links                     int
	terms, circs, fixed       fleet.Phase
	cpuPerTerm, cpuPerCircuit time.Duration
	cpuPerFixed               time.Duration
	restart                   string // what the restart check found ("" when not run)

	meshDials      fleet.Phase
	meshRoutes     int64 // Routes the far router got during the mesh dials
	cpuPerMeshDial time.Duration
	leave          *fleet.Leave
	ids            fleet.Phase
	modelRun       bool
	rss            [4]int64 // bytes: before the identities, after, all routers disconnected, all connected again
	heap           [3]int64 // edgectl's heap in use after a collection: routers disconnected, connected again, after the policy changes (0: not read)
	resync         fleet.Sync
	policyPhase    fleet.Phase
}

func main() {
	bins.Register(flag.CommandLine)
	flag.Parse()
	if err := bins.Check(); err != nil {
		benchkit.Fail(err)
	}
	var results []result
	for _, ctrl := range bins.Controllers() {
		kinds := []string{ctrl}
		if ctrl == "edgectl" && *cluster {
			kinds = append(kinds, "edgectl-3")
		}
		for _, k := range kinds {
			r, err := measure(k)
			if err != nil {
				benchkit.Fail(fmt.Errorf("%s: %w", k, err))
			}
			results = append(results, r)
		}
	}
	printTable(results)
}

// nodes are the controller processes of one measurement and where their
// routers connect.
type nodes struct {
	p       benchkit.Procs
	cmds    []*exec.Cmd
	api     []int  // API ports (the control channel is served there too, ALPN ziti-ctrl)
	metrics string // edgectl's metrics listener, one node ("" when none)
	dirs    []string
	args    [][]string
	admin   *benchkit.API
}

func (n *nodes) ctrl() []string {
	var out []string
	for _, p := range n.api {
		out = append(out, benchkit.Loopback(p))
	}
	return out
}

func (n *nodes) cpu() time.Duration {
	var sum time.Duration
	for _, c := range n.cpus() {
		sum += c
	}
	return sum
}

// cpus is the CPU each node has used so far (0 for one not running).
func (n *nodes) cpus() []time.Duration {
	out := make([]time.Duration, len(n.cmds))
	for i, c := range n.cmds {
		if c.ProcessState == nil {
			out[i] = benchkit.ProcCPU(c.Process.Pid)
		}
	}
	return out
}

// start starts the controller(s) of kind in dir.
func start(kind, dir string) (*nodes, error) {
	n := &nodes{}
	switch kind {
	case "edgectl", "openziti":
		port := benchkit.MustFreePort()
		args := []string{"--log-level", *nodeLog} // (ignored by ziti)
		if kind == "edgectl" {
			n.metrics = benchkit.Loopback(benchkit.MustFreePort())
			// pprof for its heap profile's gc=1: the heap is read after a
			// collection, so garbage does not count as memory held.
			args = append(args, "--metrics-addr", n.metrics, "--enable-pprof")
		}
		cmd, err := bins.StartController(&n.p, kind, dir, port, password, args...)
		if err != nil {
			return nil, err
		}
		n.cmds, n.api, n.dirs = []*exec.Cmd{cmd}, []int{port}, []string{dir}
	case "edgectl-3":
		for i := range 3 {
			d := filepath.Join(dir, fmt.Sprintf("n%d", i))
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, err
			}
			port, err := benchkit.FreePorts(2)
			if err != nil {
				return nil, err
			}
			args := []string{"run", "--data-dir", filepath.Join(d, "data"), "--api-addr", benchkit.Loopback(port),
				"--cluster-addr", benchkit.Loopback(port + 1), "--admin-password", password, "--log-level", *nodeLog}
			if i > 0 {
				tok, err := exec.Command(bins.Edgectl, "cluster", "join-token", "--data-dir", filepath.Join(n.dirs[0], "data")).Output()
				if err != nil {
					return nil, fmt.Errorf("edgectl cluster join-token: %w", err)
				}
				args = append(args, "--join", benchkit.Loopback(n.api[0]), "--join-token", strings.TrimSpace(string(tok)))
			}
			cmd, err := n.p.Start(d, "controller.log", bins.Edgectl, args...)
			if err != nil {
				return nil, err
			}
			n.cmds, n.api, n.dirs, n.args = append(n.cmds, cmd), append(n.api, port), append(n.dirs, d), append(n.args, args)
			if _, err := benchkit.AdminSession("https://"+benchkit.Loopback(port), "admin", password, 120*time.Second); err != nil {
				return nil, err
			}
		}
	}
	var err error
	n.admin, err = benchkit.AdminSession("https://"+benchkit.Loopback(n.api[0]), "admin", password, 120*time.Second)
	return n, err
}

func measure(kind string) (res result, err error) {
	res.name = kind
	dir, err := os.MkdirTemp("", "fleet-"+kind+"-")
	if err != nil {
		return res, err
	}
	if *keep {
		fmt.Printf("%s: the run's directory is %s (kept)\n", kind, dir)
	} else {
		defer os.RemoveAll(dir)
	}
	n, err := start(kind, dir)
	if err != nil {
		return res, err
	}
	defer n.p.Stop()
	fmt.Printf("%s: controller up\n", kind)

	t0 := time.Now()
	f, err := fleet.New(context.Background(), n.admin, fleet.Config{Routers: *routers, Hosts: *hosts, Services: *services, Ctrl: n.ctrl()})
	if err != nil {
		return res, err
	}
	res.setup = time.Since(t0)
	fmt.Printf("%s: %d routers enrolled, %d hosts and a dialer with their sessions in %s\n", kind, *routers, *hosts, res.setup.Round(time.Millisecond))

	t0 = time.Now()
	f.Start()
	defer f.Stop()
	if err := f.WaitConnected(len(n.api), 5*time.Minute); err != nil {
		return res, err
	}
	res.connect = time.Since(t0)
	fmt.Printf("%s: every router connected and holding the data model in %s\n", kind, res.connect.Round(time.Millisecond))

	t0 = time.Now()
	if res.links, err = f.Links(*mesh == "full", 5*time.Minute); err != nil {
		return res, err
	}
	res.linkTime = time.Since(t0)
	fmt.Printf("%s: %d links reported and listed in %s\n", kind, res.links, res.linkTime.Round(time.Millisecond))
	if err := linksAtScale(kind, n, f, &res); err != nil {
		return res, err
	}
	if *model || *identities > 0 {
		if err := modelAtScale(kind, n, f, &res); err != nil {
			return res, err
		}
	}

	cpu0 := n.cpu()
	res.terms = f.Terminators(*terminators, 0, *inflight, *budget)
	res.cpuPerTerm = perOp(n.cpu()-cpu0, res.terms.Count)
	printPhase(kind, res.terms, res.cpuPerTerm)
	if diff, err := f.CheckTerminators(); err != nil || diff != "" {
		fmt.Printf("%s: terminator counts differ from the controller's list: %s %v\n", kind, diff, err)
	}

	cpu0 = n.cpu()
	spread := startSpread(n, f)
	res.circs = f.Circuits(*circuits, *dialers, *budget)
	res.cpuPerCircuit = perOp(n.cpu()-cpu0, res.circs.Count)
	printPhase(kind, res.circs, res.cpuPerCircuit)
	spread.print(kind, "circuits at saturation")
	if *circuitRate > 0 {
		cpu0 = n.cpu()
		spread = startSpread(n, f)
		res.fixed = f.CircuitsAtRate(int(*circuitRate*float64(*circuitSecs)), *circuitRate, *budget)
		res.cpuPerFixed = perOp(n.cpu()-cpu0, res.fixed.Count)
		printPhase(kind, res.fixed, res.cpuPerFixed)
		spread.print(kind, "circuits at a fixed load")
	}

	if *restart && kind != "openziti" {
		res.restart = restartCheck(n, f, []int{0}, "after-restart")
		fmt.Printf("%s: restart: %s\n", kind, res.restart)
		if kind == "edgectl-3" {
			rolling := restartCheck(n, f, []int{0, 1, 2}, "after-rolling-restart")
			res.restart += "\n" + kind + " rolling restart: " + rolling
			fmt.Printf("%s: rolling restart: %s\n", kind, rolling)
		}
	}
	return res, nil
}

// restartCheck SIGKILLs the nodes numbered in order, one after the other
// (each started again on its data dir as soon as the last one's API
// answers: with three nodes and all of them, the sequence of
// openziti/ziti-tunnel-sdk-c#918), and times from the first kill: the
// API, every router reconnected to each, a change reaching every router's
// data model, a circuit through every router; and checks that every
// router's terminators are still listed.
func restartCheck(n *nodes, f *fleet.Fleet, order []int, marker string) string {
	before := -1
	for _, r := range f.Routers {
		if c := r.State().Conns; before < 0 || c < before {
			before = c
		}
	}
	var load *fleet.Load
	if *restartLoad > 0 {
		load = f.StartLoad(*restartLoad)
		// The load makes circuits before the first kill, so that a gap is
		// the restart's, not the load's start.
		if err := benchkit.WaitFor("the load's first circuits", 30*time.Second, func() error {
			if load.Made() < *restartLoad {
				return errors.New("not yet")
			}
			return nil
		}); err != nil {
			return err.Error()
		}
	}
	var ups []time.Time
	t0 := time.Now()
	for _, i := range order {
		old := n.cmds[i]
		_ = old.Process.Kill()
		_, _ = old.Process.Wait()
		var cmd *exec.Cmd
		var err error
		if len(n.args) > 0 {
			cmd, err = n.p.Start(n.dirs[i], fmt.Sprintf("controller-%d.log", time.Now().UnixNano()), bins.Edgectl, withoutJoin(n.args[i])...)
		} else {
			cmd, err = bins.StartController(&n.p, "edgectl", n.dirs[i], n.api[i], password, "--log-level", *nodeLog)
		}
		if err != nil {
			return "not restarted: " + err.Error()
		}
		n.cmds[i] = cmd
		if _, err := benchkit.AdminSession("https://"+benchkit.Loopback(n.api[i]), "admin", password, 120*time.Second); err != nil {
			return err.Error()
		}
		ups = append(ups, time.Now())
	}
	a, err := benchkit.AdminSession("https://"+benchkit.Loopback(n.api[0]), "admin", password, 120*time.Second)
	if err != nil {
		return err.Error()
	}
	f.API.Token = a.Token
	up := time.Since(t0)
	if err := f.WaitReconnected(before+len(order), 2*time.Minute); err != nil {
		return "routers not back: " + err.Error()
	}
	back := time.Since(t0)
	if _, err := f.API.Create("/services", map[string]any{"name": f.Prefix + marker}); err != nil {
		return err.Error()
	}
	if err := f.WaitService(f.Prefix+marker, 2*time.Minute); err != nil {
		return err.Error()
	}
	synced := time.Since(t0)
	if err := f.DialUntil(2 * time.Minute); err != nil {
		return err.Error()
	}
	dialed := time.Since(t0)
	lost := "none lost"
	if diff, err := f.CheckTerminators(); err != nil || diff != "" {
		lost = fmt.Sprintf("LOST: %s %v", diff, err)
	}
	out := fmt.Sprintf("nodes %v killed and started in turn: the last API up %s, routers reconnected %s, a change in every router's model %s, a circuit through every router %s after the first kill (%s, %s, %s after the last API up); terminators: %s",
		order, up.Round(time.Millisecond), back.Round(time.Millisecond), synced.Round(time.Millisecond), dialed.Round(time.Millisecond),
		(back - up).Round(time.Millisecond), (synced - up).Round(time.Millisecond), (dialed - up).Round(time.Millisecond), lost)
	if load != nil {
		lr := load.Stop()
		var firsts []string
		for _, u := range ups {
			firsts = append(firsts, lr.FirstAfter(u).Round(time.Millisecond).String())
		}
		out += fmt.Sprintf("; under a load of %d dials in flight: %d circuits made, %d dials failed, the first circuit made after each node's API was up %v, the longest time without one %s",
			*restartLoad, lr.Made, lr.Failed, firsts, lr.LongestGap.Round(time.Millisecond))
	}
	return out
}

// withoutJoin are a member's run arguments for a restart: its data dir
// holds the cluster, the join flags are dropped.
func withoutJoin(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--join" || args[i] == "--join-token" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// linksAtScale runs the mesh dials and the leave phase when asked.
func linksAtScale(kind string, n *nodes, f *fleet.Fleet, res *result) error {
	if *meshDials == 0 && *leave == 0 {
		return nil
	}
	if len(f.Routers) < 4 {
		return fmt.Errorf("-mesh-dials and -leave need at least 4 routers")
	}
	far, err := f.NewFar(context.Background(), 1)
	if err != nil {
		return err
	}
	if *meshDials > 0 {
		cpu0 := n.cpu()
		res.meshDials, res.meshRoutes = f.MeshDials(far, *meshDials, *dialers, *budget)
		res.cpuPerMeshDial = perOp(n.cpu()-cpu0, res.meshDials.Count)
		printPhase(kind, res.meshDials, res.cpuPerMeshDial)
		fmt.Printf("%s: mesh dials: the far router got %d routes for %d circuits (a route each: every circuit crossed a link)\n",
			kind, res.meshRoutes, res.meshDials.Count)
	}
	if *leave > 0 {
		if *mesh != "full" {
			return fmt.Errorf("-leave needs -mesh full")
		}
		lv, err := f.LeaveRouter(far, 2, *leave, *leaveLimit)
		if err != nil {
			return err
		}
		res.leave = &lv
		fmt.Printf("%s: a router leaving: %d circuits through it, %d moved, the last %s after it left (p50 %s, p99 %s), stolen %.1f%% %s\n",
			kind, lv.Circuits, lv.Moved, lv.Elapsed.Round(time.Microsecond), lv.P50.Round(time.Microsecond), lv.P99.Round(time.Microsecond), lv.Steal, lv.Note)
		if err := f.WaitConnected(0, 2*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// modelAtScale makes -identities identities, then times every router
// taking the full data model at once (the node's memory before and after)
// and -policy-changes policies reaching every router.
func modelAtScale(kind string, n *nodes, f *fleet.Fleet, res *result) error {
	res.modelRun = true
	res.rss[0] = n.rss()
	if *identities > 0 {
		if *idOffline {
			f.Stop()
		}
		res.ids = f.Identities(*identities, *idWorkers, *budget)
		printPhase(kind, res.ids, 0)
	}
	res.rss[1] = n.rss()
	conns := -1
	for _, r := range f.Routers {
		if c := r.State().Conns; conns < 0 || c < conns {
			conns = c
		}
	}
	var err error
	res.resync, err = f.Resync(conns+len(n.api), func() {
		// The node notices the channels closed; its memory settles.
		_ = benchkit.WaitFor("the fleet's routers offline", time.Minute, func() error {
			on, _, err := f.OnlineRouters()
			if err == nil && on > 0 {
				err = fmt.Errorf("%d online", on)
			}
			return err
		})
		res.rss[2], res.heap[0] = n.rss(), n.heapInuse()
	}, 10*time.Minute)
	if err != nil {
		return err
	}
	res.rss[3], res.heap[1] = n.rss(), n.heapInuse()
	fmt.Printf("%s: %d routers reconnected at once, each holding the full data model in %s: %d bytes and %d events each\n",
		kind, len(f.Routers), res.resync.Elapsed.Round(time.Millisecond), res.resync.Bytes, res.resync.Events)
	fmt.Printf("%s: node RSS %s before the identities, %s after, %s with the routers gone, %s with them back: %s per router; heap in use %s → %s\n",
		kind, mib(res.rss[0]), mib(res.rss[1]), mib(res.rss[2]), mib(res.rss[3]), kib((res.rss[3]-res.rss[2])/int64(len(f.Routers))),
		mib(res.heap[0]), mib(res.heap[1]))
	res.policyPhase, err = f.PolicyChanges(*policies, 2*time.Minute)
	printPhase(kind, res.policyPhase, 0)
	res.heap[2] = n.heapInuse()
	fmt.Printf("%s: heap in use after the policy changes %s: %s per router over the routers gone\n", kind, mib(res.heap[2]),
		kib((res.heap[2]-res.heap[0])/int64(len(f.Routers))))
	return err
}

// rss is the resident memory of the nodes' processes, in bytes.
func (n *nodes) rss() int64 {
	var sum int64
	for _, c := range n.cmds {
		if c.ProcessState != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Process.Pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				sum += kb << 10
			}
		}
	}
	return sum
}

// heapInuse is edgectl's go_memstats_heap_inuse_bytes from its metrics
// listener right after a garbage collection (0 when it has none).
func (n *nodes) heapInuse() int64 {
	if n.metrics == "" {
		return 0
	}
	if resp, err := http.Get("http://" + n.metrics + "/debug/pprof/heap?gc=1"); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := http.Get("http://" + n.metrics + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int64(f)
		}
	}
	return 0
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
func kib(b int64) string { return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10)) }

func perOp(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return d / time.Duration(n)
}

func printPhase(kind string, p fleet.Phase, cpu time.Duration) {
	fmt.Printf("%s: %s: %d made, %d failed, %d retried in %s: %.0f/s, p50 %s, p99 %s, controller CPU %s each, stolen %.1f%%\n",
		kind, p.Name, p.Count, p.Failed, p.Retries, p.Elapsed.Round(time.Millisecond), p.Rate, p.P50.Round(time.Microsecond),
		p.P99.Round(time.Microsecond), cpu.Round(time.Microsecond), p.Steal)
	if len(p.Buckets) > 0 {
		var b []string
		for _, r := range p.Buckets {
			b = append(b, fmt.Sprintf("%.0f", r))
		}
		fmt.Printf("%s: %s per tenth (/s): %s\n", kind, p.Name, strings.Join(b, " "))
	}
	if p.FirstErr != nil {
		fmt.Printf("%s: %s: first failure: %v\n", kind, p.Name, p.FirstErr)
	}
}

// spread is where a phase's circuits were made, node by node: the circuits
// each node made and the CPU it used meanwhile (issue 45: "on three nodes,
// circuits spread over all three"; a node that forwarded its dials to
// another would show the circuits and not the CPU).
type spread struct {
	n        *nodes
	f        *fleet.Fleet
	cpu0     []time.Duration
	circuits []int
}

func startSpread(n *nodes, f *fleet.Fleet) *spread {
	return &spread{n: n, f: f, cpu0: n.cpus(), circuits: f.CircuitsByNode()}
}

// print prints the spread of the phase since startSpread, for more than one node.
func (s *spread) print(kind, phase string) {
	if len(s.n.cmds) < 2 {
		return
	}
	cpu, circuits := s.n.cpus(), s.f.CircuitsByNode()
	var parts []string
	for i := range cpu {
		made := 0
		if i < len(circuits) && i < len(s.circuits) {
			made = circuits[i] - s.circuits[i]
		}
		used := cpu[i] - s.cpu0[i]
		parts = append(parts, fmt.Sprintf("node %d: %d circuits, %s CPU (%s per circuit)", i+1, made, used.Round(time.Millisecond), perOp(used, made).Round(time.Microsecond)))
	}
	fmt.Printf("%s: %s by node: %s\n", kind, phase, strings.Join(parts, "; "))
}
