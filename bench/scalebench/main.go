// Command scalebench measures edgectl at scale: the figures of issues 4
// (management at scale), 5 (access decisions) and 7 (posture) in
// docs/performance-history.md (the current figures: docs/performance.md).
//
//	go run ./bench/scalebench            # the full model (100,000 identities)
//	go run ./bench/scalebench -quick     # a model a tenth of the size, for a quick look
//	go run ./bench/scalebench -identities 1000000 -paired 100000 -cluster=false
//	                                               # two sizes taking turns, side by side (pair.go; make scale)
//
// It starts a node in-process (controller.Start, temporary data dir,
// loopback ports), fills the model through the real write path (identities
// by many concurrent fsm.Writer.Do calls with the payload the API handler
// proposes; everything else over HTTPS with many clients), then measures
// over HTTPS with keep-alive connections and TLS verified with the node's CA
// bundle. Only 2xx answers count; every other answer is reported as an
// error. With -cluster it then joins two more in-process nodes and measures
// posture responses on the three-node cluster. The load generator shares the
// machine (and the process) with the nodes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// config holds the flags.
type config struct {
	identities, services, routers int
	servicePolicies, erps, serps  int
	attrs                         int
	clients, fillWorkers          int
	requests, policyRequests      int
	duration, warmup              time.Duration
	cluster, gcBefore, restart    bool
	afterSnapshots                bool
	cpuprofile, memprofile, trace string
	seed                          uint64
	quick                         bool
	paired                        int    // a second size run beside this one, taking turns (pair.go)
	turns                         bool   // a child of a paired run: take turns with the other child
	summary                       string // a child of a paired run: where its phases go
}

func main() {
	var c config
	flag.BoolVar(&c.quick, "quick", false, "a small model (10,000 identities, 100 services, 100 edge routers, 50/50/20 policies) and shorter phases")
	flag.IntVar(&c.identities, "identities", 100000, "identities in the model")
	flag.IntVar(&c.services, "services", 200, "services in the model")
	flag.IntVar(&c.routers, "edge-routers", 500, "edge routers in the model")
	flag.IntVar(&c.servicePolicies, "service-policies", 250, "service policies in the model")
	flag.IntVar(&c.erps, "edge-router-policies", 250, "edge router policies in the model")
	flag.IntVar(&c.serps, "service-edge-router-policies", 100, "service edge router policies in the model")
	flag.IntVar(&c.attrs, "attributes", 20, "distinct role attributes entities and policies draw from")
	flag.IntVar(&c.clients, "clients", 32, "concurrent HTTPS clients of the rate phases and of the HTTPS fill")
	flag.IntVar(&c.fillWorkers, "fill-workers", 64, "concurrent in-process writers filling the identities")
	flag.IntVar(&c.requests, "requests", 300, "sequential requests per latency figure")
	flag.IntVar(&c.policyRequests, "policy-requests", 100, "sequential service policy creates (each selects thousands of identities)")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "length of each rate phase")
	flag.DurationVar(&c.warmup, "warmup", time.Second, "warm-up before each rate phase (not counted)")
	flag.BoolVar(&c.restart, "restart", false, "at the end, take a snapshot through the API and restart the node on its data dir, timing both (one node; with -cluster=false)")
	flag.BoolVar(&c.cluster, "cluster", true, "also join two more in-process nodes and measure posture responses on three nodes")
	flag.BoolVar(&c.gcBefore, "gc-before", false, "run a full garbage collection before each measured phase and return the memory it frees to the OS, so that neither a collection still running from the previous phase nor the scavenging after the forced one weighs on it")
	flag.BoolVar(&c.afterSnapshots, "after-snapshots", false, "before each measured phase, wait (up to 2 minutes) until no node is writing a raft snapshot; a phase during which one still ran is marked either way")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "a directory: write one CPU profile per measured phase (server and load generator together)")
	flag.StringVar(&c.trace, "trace", "", "a directory: write one execution trace per measured phase (go tool trace -pprof=sched FILE: where requests waited to run)")
	flag.StringVar(&c.memprofile, "memprofile", "", "a file: write a heap profile (live objects after a full GC) once the model is built")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the random role attributes")
	flag.IntVar(&c.paired, "paired", 0, "also run the same phases at this many identities, in a second process, the two taking turns request by "+
		"request, and print the two sizes side by side with the ratio of their p99: the host's moods fall on both alike")
	flag.BoolVar(&c.turns, "turns", false, "(used by -paired) take turns with the other size: wait for a byte on standard input, give the turn back with a byte on file descriptor 3")
	flag.StringVar(&c.summary, "summary", "", "(used by -paired) write the measured phases as JSON to this file")
	flag.Parse()
	if c.quick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		quick := map[string]func(){
			"identities": func() { c.identities = 10000 }, "services": func() { c.services = 100 },
			"edge-routers": func() { c.routers = 100 }, "service-policies": func() { c.servicePolicies = 50 },
			"edge-router-policies": func() { c.erps = 50 }, "service-edge-router-policies": func() { c.serps = 20 },
			"requests": func() { c.requests = 100 }, "policy-requests": func() { c.policyRequests = 50 },
			"duration": func() { c.duration = 2 * time.Second },
			"warmup":   func() { c.warmup = 500 * time.Millisecond },
		}
		for name, apply := range quick {
			if !set[name] {
				apply()
			}
		}
	}
	if c.identities < 100 || c.services < 60 || c.routers < 1 || c.servicePolicies < 1 || c.erps < 1 || c.serps < 1 ||
		c.attrs < 3 || c.clients < 1 || c.fillWorkers < 1 || c.requests < 10 || c.policyRequests < 10 || c.duration <= 0 {
		fmt.Fprintln(os.Stderr, "scalebench: need -identities >= 100, -services >= 60, -attributes >= 3, -requests >= 10 and positive counts")
		os.Exit(2)
	}
	if c.paired != 0 && (c.paired < 100 || c.paired == c.identities) {
		fmt.Fprintln(os.Stderr, "scalebench: -paired needs a second size of at least 100 identities, other than -identities")
		os.Exit(2)
	}
	if c.paired != 0 && (c.turns || c.summary != "") {
		fmt.Fprintln(os.Stderr, "scalebench: -turns and -summary are for the children of a paired run, not with -paired")
		os.Exit(2)
	}
	if c.restart && c.cluster {
		fmt.Fprintln(os.Stderr, "scalebench: -restart measures one node: give -cluster=false with it")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	start := time.Now()
	if err := run(ctx, &c); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
	fmt.Printf("\nscalebench finished in %s (%s/%s, %d CPUs, %s)\n", time.Since(start).Round(time.Second),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

func run(ctx context.Context, c *config) error {
	if c.paired > 0 {
		return runPaired(ctx, c)
	}
	var t *turns
	if c.turns {
		t = childTurns()
		t.wait()
	}
	b, err := newBench(ctx, c)
	if err != nil {
		return err
	}
	b.turns = t
	defer b.close()
	r := &report{cfg: c, started: time.Now().UTC()}
	if r.model, err = b.buildModel(ctx); err != nil {
		return err
	}
	b.turns.yield()
	if err := b.issue4(ctx, r); err != nil {
		return err
	}
	if err := b.issue5(ctx, r); err != nil {
		return err
	}
	if err := b.issue7(ctx, r); err != nil {
		return err
	}
	if c.cluster {
		// Two more in-process nodes hold two more copies of the model.
		rss, avail := procKB("/proc/self/status", "VmRSS:")*1024, procKB("/proc/meminfo", "MemAvailable:")*1024
		if need := 2 * rss; avail > 0 && float64(need) > 0.8*float64(avail) {
			r.clusterErr = fmt.Errorf("two more in-process copies of this model need about %.1f GiB, this machine has %.1f GiB available "+
				"(run with -quick for the three-node figure)", gib(need), gib(avail))
			fmt.Fprintln(os.Stderr, "scalebench: three-node phase skipped:", r.clusterErr)
		} else if err := b.issue7Cluster(ctx, r); err != nil {
			// The one-node figures stand on their own; say why the cluster ones are missing.
			r.clusterErr = err
			fmt.Fprintln(os.Stderr, "scalebench: three-node phase:", err)
		}
	}
	r.print(os.Stdout)
	if c.restart {
		b.restart(ctx).print(os.Stdout)
	}
	return b.writeSummary(r.model.mem.heapLive)
}
