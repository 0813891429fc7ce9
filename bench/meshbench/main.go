// Command meshbench measures a mesh of three real OpenZiti routers (ziti
// v1.7.2) with edgectl and with OpenZiti's own controller (`ziti edge
// quickstart --no-router`) in turn, in one run: the same routers, links,
// tunnelers, echo server and REST calls for both (issue 37).
//
// The mesh is integration/mesh_test.go's: router A (the client's only edge
// router) listens for B (link group ab) and dials C (group ac); B dials A
// and C (ab, bc); C listens for B directly and for A through a TCP proxy
// this program controls; one link per pair. It prints, for each controller:
//
//   - time to a usable path: from starting the three routers (the
//     tunnelers start as soon as the controller has them all online) to the
//     first byte echoed through `ziti tunnel proxy`, over whatever path;
//   - time to reroute: with a stream open on A→C, the A–C proxy is cut
//     (every connection closed, new ones refused); the time until the open
//     stream echoes again, over A→B→C;
//   - two-hop dial setup: with A–C cut, N sequential new connections
//     through `ziti tunnel proxy` (A→B→C), connect to first byte echoed,
//     p50 and p99, as bench/dialbench does over one router;
//
// and the CPU the host stole during each controller's part. With A–C cut
// it also prints when the controller listed the stream's circuit on A→B→C
// (most of a reroute is the routers noticing the link is gone).
//
// The service requires end-to-end encryption, as bench/dialbench's and
// integration/mesh_test.go's do (-encrypt=false: it does not).
//
//	go run ./bench/meshbench -edgectl bin/edgectl -ziti $(sh scripts/ziti.sh) -dials 100
package main

import (
	"flag"
	"fmt"
	"time"

	"edgectl/bench/benchkit"
)

var (
	bins    benchkit.Comparison
	dials   = flag.Int("dials", 100, "sequential two-hop dials for the dial-setup figures")
	encrypt = flag.Bool("encrypt", true, "the service requires end-to-end encryption (bench/dialbench's does)")
	keep    = flag.Bool("keep", false, "keep each controller's directory (logs, configs) and print where")
	cutAt   = flag.Duration("cut-at", 3*time.Second, "cut A–C this long after the routers start (once the stream is open), the same for both controllers: a router reports a closed link only on a 5-second tick from its start, so cutting at the same offset gives both the same wait")
)

const password = "bench-Admin-1"

func main() {
	bins.Parse()
	all := benchkit.ReadCPU()
	results := benchkit.MeasureEach(&bins, measure)
	report(results, benchkit.StolenPct(all, benchkit.ReadCPU()))
}

// result is one controller's figures.
type result struct {
	name string
	// online: routers started to all three online at the controller;
	// usable: routers started to the first byte echoed, over firstPath.
	online, usable time.Duration
	firstPath      string
	// reroute: A–C cut to the open stream's next echo, then on reroutePath.
	// rerouted: A–C cut to the controller listing the stream's circuit on
	// A→B→C (polled every 20 ms).
	reroute, rerouted time.Duration
	reroutePath       string
	// Two-hop dials: how many, p50, p99, over dialPath.
	n        int
	p50, p99 time.Duration
	dialPath string
	// left: the controller's circuits 2 s after the last dial closed.
	left   int
	stolen float64
}

func report(rs []*result, stolenAll float64) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	fmt.Println()
	for _, r := range rs {
		fmt.Printf("%-9s routers online %s, first echo %s (path %s); reroute %s (path %s, at the controller after %s); %d two-hop dials (path %s): p50 %s, p99 %s, %d circuits left 2 s after; CPU stolen %.1f%%\n",
			r.name, ms(r.online), ms(r.usable), r.firstPath, ms(r.reroute), r.reroutePath, ms(r.rerouted), r.n, r.dialPath, ms(r.p50), ms(r.p99), r.left, r.stolen)
	}
	fmt.Println()
	enc := "no end-to-end encryption"
	if *encrypt {
		enc = "end-to-end encryption"
	}
	head := "| three-router mesh (ziti v1.7.2 routers and tunnelers, " + enc + ") |"
	sep := "|---|"
	for _, r := range rs {
		head += " " + r.name + " |"
		sep += "---|"
	}
	if len(rs) == 2 {
		head += " edgectl / OpenZiti |"
		sep += "---|"
	}
	fmt.Println(head)
	fmt.Println(sep)
	row := func(what string, f func(*result) time.Duration) {
		line := "| " + what + " |"
		for _, r := range rs {
			line += " " + ms(f(r)) + " |"
		}
		if len(rs) == 2 {
			line += fmt.Sprintf(" %.2f |", float64(f(rs[0]))/float64(f(rs[1])))
		}
		fmt.Println(line)
	}
	row("routers started → all three online at the controller", func(r *result) time.Duration { return r.online })
	row("(a) routers started → first echo through the client tunneler", func(r *result) time.Duration { return r.usable })
	row("(b) A–C cut → the open stream echoes again (A→B→C)", func(r *result) time.Duration { return r.reroute })
	row("(b′) A–C cut → the controller lists the stream's circuit on A→B→C", func(r *result) time.Duration { return r.rerouted })
	row(fmt.Sprintf("(c) two-hop dial setup p50 (%d dials, A→B→C)", *dials), func(r *result) time.Duration { return r.p50 })
	row(fmt.Sprintf("(c) two-hop dial setup p99 (%d dials, A→B→C)", *dials), func(r *result) time.Duration { return r.p99 })
	line := "| CPU stolen by the host during the part |"
	for _, r := range rs {
		line += fmt.Sprintf(" %.1f%% |", r.stolen)
	}
	if len(rs) == 2 {
		line += " — |"
	}
	fmt.Println(line)
	fmt.Printf("\nCPU stolen by the host over the whole run: %.1f%%\n", stolenAll)
}
