package main

import (
	"fmt"
	"strings"
	"time"

	"edgectl/bench/fleet"
)

// printTable prints the results side by side as a markdown table, with the
// ratio of edgectl (one node) to OpenZiti where both were measured.
func printTable(rs []result) {
	if len(rs) == 0 {
		return
	}
	fmt.Printf("\n%d routers, %d hosts, %d services, %d terminators (%d in flight per router), %d circuits (%d in flight)\n\n",
		*routers, *hosts, *services, *terminators, *inflight, *circuits, *dialers)
	var e, o *result
	head := "| figure |"
	sep := "|---|"
	for i := range rs {
		head += " " + rs[i].name + " |"
		sep += "---|"
		switch rs[i].name {
		case "edgectl":
			e = &rs[i]
		case "openziti":
			o = &rs[i]
		}
	}
	if e != nil && o != nil {
		head += " edgectl / openziti |"
		sep += "---|"
	}
	fmt.Println(head)
	fmt.Println(sep)
	row := func(name string, val func(r *result) float64, format string) {
		line := "| " + name + " |"
		for i := range rs {
			line += " " + fmt.Sprintf(format, val(&rs[i])) + " |"
		}
		if e != nil && o != nil {
			if d := val(o); d != 0 {
				line += fmt.Sprintf(" %.2fx |", val(e)/d)
			} else {
				line += " — |"
			}
		}
		fmt.Println(line)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	row("enroll + model setup (s)", func(r *result) float64 { return r.setup.Seconds() }, "%.1f")
	row("all routers connected with the data model (s)", func(r *result) float64 { return r.connect.Seconds() }, "%.2f")
	row("links listed (s)", func(r *result) float64 { return r.linkTime.Seconds() }, "%.2f")
	row("terminators made", func(r *result) float64 { return float64(r.terms.Count) }, "%.0f")
	row("terminators/s", func(r *result) float64 { return r.terms.Rate }, "%.0f")
	row("terminators/s, first tenth", func(r *result) float64 { return bucket(r.terms, 0) }, "%.0f")
	row("terminators/s, last tenth reached", func(r *result) float64 { return bucket(r.terms, -1) }, "%.0f")
	if *rateAt > 0 && *terminators >= *rateAt {
		row(fmt.Sprintf("terminators/s over the 1,000 ending at %d", *rateAt), func(r *result) float64 { return r.terms.RateAt(*rateAt, 1000) }, "%.0f")
	}
	row("terminator p50 (ms)", func(r *result) float64 { return ms(r.terms.P50) }, "%.1f")
	row("terminator p99 (ms)", func(r *result) float64 { return ms(r.terms.P99) }, "%.1f")
	row("controller CPU per terminator (µs)", func(r *result) float64 { return float64(r.cpuPerTerm.Microseconds()) }, "%.0f")
	row("circuits made", func(r *result) float64 { return float64(r.circs.Count) }, "%.0f")
	row("circuits/s", func(r *result) float64 { return r.circs.Rate }, "%.0f")
	row("circuit p50 (ms)", func(r *result) float64 { return ms(r.circs.P50) }, "%.1f")
	row("circuit p99 (ms)", func(r *result) float64 { return ms(r.circs.P99) }, "%.1f")
	row("controller CPU per circuit (µs)", func(r *result) float64 { return float64(r.cpuPerCircuit.Microseconds()) }, "%.0f")
	if *circuitRate > 0 {
		row(fmt.Sprintf("circuits made at %.0f/s offered", *circuitRate), func(r *result) float64 { return float64(r.fixed.Count) }, "%.0f")
		row(fmt.Sprintf("circuit p50 at %.0f/s offered (ms)", *circuitRate), func(r *result) float64 { return ms(r.fixed.P50) }, "%.1f")
		row(fmt.Sprintf("circuit p99 at %.0f/s offered (ms)", *circuitRate), func(r *result) float64 { return ms(r.fixed.P99) }, "%.1f")
		row(fmt.Sprintf("controller CPU per circuit at %.0f/s (µs)", *circuitRate), func(r *result) float64 { return float64(r.cpuPerFixed.Microseconds()) }, "%.0f")
	}
	row("CPU stolen, terminators (%)", func(r *result) float64 { return r.terms.Steal }, "%.1f")
	row("CPU stolen, circuits (%)", func(r *result) float64 { return r.circs.Steal }, "%.1f")
	if *meshDials > 0 {
		row("mesh dials made", func(r *result) float64 { return float64(r.meshDials.Count) }, "%.0f")
		row("mesh dial p50 (ms)", func(r *result) float64 { return ms(r.meshDials.P50) }, "%.1f")
		row("mesh dial p99 (ms)", func(r *result) float64 { return ms(r.meshDials.P99) }, "%.1f")
		row("controller CPU per mesh dial (µs)", func(r *result) float64 { return float64(r.cpuPerMeshDial.Microseconds()) }, "%.0f")
		row("CPU stolen, mesh dials (%)", func(r *result) float64 { return r.meshDials.Steal }, "%.1f")
	}
	if *leave > 0 {
		lv := func(r *result) *fleet.Leave {
			if r.leave == nil {
				return &fleet.Leave{}
			}
			return r.leave
		}
		row("circuits through the router that left", func(r *result) float64 { return float64(lv(r).Circuits) }, "%.0f")
		row("of them moved", func(r *result) float64 { return float64(lv(r).Moved) }, "%.0f")
		row("last moved after it left (ms)", func(r *result) float64 { return ms(lv(r).Elapsed) }, "%.1f")
		row("move p50 (ms)", func(r *result) float64 { return ms(lv(r).P50) }, "%.1f")
		row("CPU stolen, leave (%)", func(r *result) float64 { return lv(r).Steal }, "%.1f")
	}
	if *model || *identities > 0 {
		mb := func(b int64) float64 { return float64(b) / (1 << 20) }
		row("identities made", func(r *result) float64 { return float64(r.ids.Count) }, "%.0f")
		row("identities/s", func(r *result) float64 { return r.ids.Rate }, "%.0f")
		row("node RSS growth for the identities (MiB)", func(r *result) float64 { return mb(r.rss[1] - r.rss[0]) }, "%.1f")
		row("all routers reconnected with the full data model (s)", func(r *result) float64 { return r.resync.Elapsed.Seconds() }, "%.2f")
		row("full data model per router (KiB)", func(r *result) float64 { return float64(r.resync.Bytes) / 1024 }, "%.0f")
		row("events per router's full data model", func(r *result) float64 { return float64(r.resync.Events) }, "%.0f")
		row("node RSS per connected router (KiB)", func(r *result) float64 {
			return float64(r.rss[3]-r.rss[2]) / 1024 / float64(*routers)
		}, "%.0f")
		row("node heap in use per connected router, just synced (KiB)", func(r *result) float64 {
			return float64(r.heap[1]-r.heap[0]) / 1024 / float64(*routers)
		}, "%.0f")
		row("node heap in use per connected router, after the policy changes (KiB)", func(r *result) float64 {
			return float64(r.heap[2]-r.heap[0]) / 1024 / float64(*routers)
		}, "%.0f")
		row("policy change to every router p50 (ms)", func(r *result) float64 { return ms(r.policyPhase.P50) }, "%.1f")
		row("policy change to every router p99 (ms)", func(r *result) float64 { return ms(r.policyPhase.P99) }, "%.1f")
		row("CPU stolen, identities (%)", func(r *result) float64 { return r.ids.Steal }, "%.1f")
		row("CPU stolen, policy changes (%)", func(r *result) float64 { return r.policyPhase.Steal }, "%.1f")
	}
	fmt.Println()
	for _, r := range rs {
		fmt.Printf("%s terminators per tenth (/s): %s\n", r.name, buckets(r.terms))
	}
	for _, r := range rs {
		if r.restart != "" {
			fmt.Printf("%s restart: %s\n", r.name, r.restart)
		}
	}
}

// bucket is tenth i of p's rates (negative: from the end); 0 when absent.
func bucket(p fleet.Phase, i int) float64 {
	if i < 0 {
		i += len(p.Buckets)
	}
	if i < 0 || i >= len(p.Buckets) {
		return 0
	}
	return p.Buckets[i]
}

func buckets(p fleet.Phase) string {
	var b []string
	for _, r := range p.Buckets {
		b = append(b, fmt.Sprintf("%.0f", r))
	}
	return strings.Join(b, " ")
}
