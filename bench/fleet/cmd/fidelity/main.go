// Command fidelity shows that the fleet tool's simulated routers give the
// controller what real ones give: on each controller (edgectl, OpenZiti's),
// real `ziti router` v1.7.2 processes with real sdk-golang hosting
// endpoints (integration/sdk's sdkecho, each identity a context of its
// own, -per-process identities to a process, each binding the service
// through up to 3 of the routers it reaches, sdk-golang's default) and a
// real dialing client, then (or first, -fleet-first) the fleet tool with as
// many routers, hosts and dials; it prints the terminators each makes per router and per host, and
// the circuits that succeed, side by side.
//
//	(cd integration/sdk && GOSUMDB=off go build -o /tmp/sdkecho .)
//	go run ./bench/fleet/cmd/fidelity -edgectl bin/edgectl -ziti $(sh scripts/ziti.sh) -sdkecho /tmp/sdkecho \
//	    -routers 10 -hosts 1000 -dials 200 -fleet-first
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"edgectl/bench/benchkit"
	"edgectl/bench/fleet"
)

var (
	bins          benchkit.Comparison
	sdkecho       = flag.String("sdkecho", "", "integration/sdk built (go build -o PATH . in integration/sdk)")
	routers       = flag.Int("routers", 3, "edge routers (real, then simulated)")
	hosts         = flag.Int("hosts", 10, "hosting identities (real sdk-golang contexts, then simulated)")
	dials         = flag.Int("dials", 50, "sequential dials of the real client (then as many simulated circuits)")
	perProc       = flag.Int("per-process", 100, "real hosting identities to an sdkecho process")
	startParallel = flag.Int("start-parallel", 8, "identities of an sdkecho process starting to listen at a time")
	enrollWorkers = flag.Int("enroll-workers", 4, "`ziti edge enroll` processes at a time")
	keyAlg        = flag.String("key-alg", "EC", "the real identities' key algorithm (ziti edge enroll -a: EC or RSA)")
	quiet         = flag.Duration("quiet", 30*time.Second, "the real hosts' terminators are settled when their count has not moved for this long")
	fleetFirst    = flag.Bool("fleet-first", false, "run the fleet before the real side (OpenZiti's controller can answer the fleet's router creates 503 for minutes after the real side)")
	settleMax     = flag.Duration("settle", 15*time.Minute, "the longest wait for the real hosts' terminators")
)

const password = "fleet-admin-1"

// running are the process sets under way, stopped if the tool is
// interrupted (a controller, ten routers and the hosts would outlive it).
var running struct {
	sync.Mutex
	procs []*benchkit.Procs
}

// track adds p to running; the func it returns takes it off again.
func track(p *benchkit.Procs) func() {
	running.Lock()
	defer running.Unlock()
	running.procs = append(running.procs, p)
	return func() {
		running.Lock()
		defer running.Unlock()
		running.procs = slices.DeleteFunc(running.procs, func(q *benchkit.Procs) bool { return q == p })
	}
}

// stopOnSignal stops every running process set on SIGINT or SIGTERM, then
// exits.
func stopOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		running.Lock()
		for i := len(running.procs) - 1; i >= 0; i-- {
			running.procs[i].Stop()
		}
		benchkit.Fail(fmt.Errorf("%v: its processes stopped", s))
	}()
}

func main() {
	bins.Register(flag.CommandLine)
	flag.Parse()
	if err := bins.Check(); err != nil {
		benchkit.Fail(err)
	}
	switch {
	case *sdkecho == "":
		benchkit.Fail(errors.New("-sdkecho is required"))
	case *routers < 1 || *hosts < 1 || *dials < 1:
		benchkit.Fail(fmt.Errorf("-routers, -hosts and -dials must be at least 1 (%d, %d, %d)", *routers, *hosts, *dials))
	case *perProc < 1 || *startParallel < 1 || *enrollWorkers < 1:
		benchkit.Fail(fmt.Errorf("-per-process, -start-parallel and -enroll-workers must be at least 1 (%d, %d, %d)", *perProc, *startParallel, *enrollWorkers))
	case *keyAlg != "EC" && *keyAlg != "RSA":
		benchkit.Fail(fmt.Errorf("-key-alg %q: EC or RSA", *keyAlg))
	}
	stopOnSignal()
	type row struct {
		ctrl      string
		real, sim counts
		stolen    float64
	}
	var rows []row
	for _, ctrl := range bins.Controllers() {
		cpu := benchkit.ReadCPU()
		real, sim, err := measure(ctrl)
		if err != nil {
			benchkit.Fail(fmt.Errorf("%s: %w", ctrl, err))
		}
		rows = append(rows, row{ctrl, real, sim, benchkit.StolenPct(cpu, benchkit.ReadCPU())})
	}
	fmt.Printf("\n%d routers, %d hosting identities, %d dials\n\n", *routers, *hosts, *dials)
	fmt.Println("| controller | side | terminators | per router | hosts × terminators each | host twice on a router | circuits made | CPU stolen |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		for _, s := range []struct {
			name string
			c    counts
		}{{"ziti router + sdk-golang", r.real}, {"fleet tool", r.sim}} {
			fmt.Printf("| %s | %s | %d | %v | %s | %d | %d of %d | %.1f%% |\n", r.ctrl, s.name, s.c.total, s.c.perRouter,
				s.c.hostShape(), s.c.twice, s.c.circuits, s.c.dials, r.stolen)
		}
	}
}

// measure starts controller ctrl, then runs the real side and the fleet on
// it.
func measure(ctrl string) (real, sim counts, err error) {
	dir, err := os.MkdirTemp("", "fidelity-"+ctrl+"-")
	if err != nil {
		return real, sim, err
	}
	defer os.RemoveAll(dir)
	var p benchkit.Procs
	defer p.Stop()
	defer track(&p)()
	port := benchkit.MustFreePort()
	if _, err := bins.StartController(&p, ctrl, dir, port, password, "--log-level", "warn"); err != nil {
		return real, sim, err
	}
	a, err := benchkit.AdminSession("https://"+benchkit.Loopback(port), "admin", password, 120*time.Second)
	if err != nil {
		return real, sim, err
	}
	fmt.Printf("%s: controller up\n", ctrl)
	if *fleetFirst {
		if sim, err = measureSim(ctrl, a, benchkit.Loopback(port)); err != nil {
			return real, sim, err
		}
		real, err = measureReal(ctrl, a, dir)
		return real, sim, err
	}
	if real, err = measureReal(ctrl, a, dir); err != nil {
		return real, sim, err
	}
	sim, err = measureSim(ctrl, a, benchkit.Loopback(port))
	return real, sim, err
}

// measureSim runs the fleet with as many routers and hosts, each host
// binding through min(routers, 3) distinct routers as an sdk-golang host
// does (ListenOptions.MaxTerminators, 3 by default, one per router), and
// as many dials, one at a time as the real client's.
func measureSim(ctrl string, a *benchkit.API, addr string) (counts, error) {
	var c counts
	// OpenZiti's controller, busy with the real side's thousand hosts and
	// ten routers gone, can answer a write 503 (TIMEOUT) for a while: the
	// fleet is made again, under a new prefix, up to three times.
	var f *fleet.Fleet
	var err error
	prefix := ""
	for try := 1; try <= 3; try++ {
		prefix = fmt.Sprintf("sim%d-", try)
		if f, err = fleet.New(context.Background(), a, fleet.Config{Prefix: prefix, Routers: *routers, Hosts: *hosts, Ctrl: []string{addr}}); err == nil {
			break
		}
		fmt.Printf("%s: making the fleet (try %d): %v\n", ctrl, try, err)
	}
	if err != nil {
		return c, err
	}
	f.Start()
	defer f.Stop()
	if err := f.WaitConnected(1, 2*time.Minute); err != nil {
		return c, err
	}
	ph := f.Terminators(*hosts*min(*routers, 3), 0, 4, 5*time.Minute)
	if ph.Failed > 0 {
		return c, fmt.Errorf("%d terminators failed: %v", ph.Failed, ph.FirstErr)
	}
	var ids []string
	for _, r := range f.Routers {
		ids = append(ids, r.ID)
	}
	if c, err = tally(a, prefix+"svc-0", ids); err != nil {
		return c, err
	}
	cp := f.Circuits(*dials, 1, 2*time.Minute)
	c.circuits, c.dials = cp.Count, *dials
	slices.Sort(c.perRouter)
	fmt.Printf("%s: fleet: %d terminators %v, hosts %s, %d twice on a router, %d circuits of %d\n", ctrl, c.total, c.perRouter, c.hostShape(), c.twice, c.circuits, c.dials)
	return c, nil
}
