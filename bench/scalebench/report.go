package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// report collects the figures of all phases.
type report struct {
	cfg     *config
	started time.Time
	model   *model
	tokens  []string // API sessions of the client identity, one per client

	identityCreate, policyCreate, policyAllCreate, policyAllDelete, identityServices *stats
	filtered                                                                         []*filteredList
	policyLinks, identityReach                                                       intStats

	clientServices, clientServicesPage, sessionCreate *stats
	clientListed, clientListBytes, dialServices       int

	posture1, posture3, posture3Leader *stats
	postureAffected, postureSessions   int
	postureTokens                      []string // fresh API sessions of issue 7
	joinTook                           time.Duration
	clusterErr                         error
}

// latencyAim is the verdict on a p99 aim.
func latencyAim(s *stats, aim time.Duration) string {
	if s.errs > 0 {
		return fmt.Sprintf("**missed**: %d errors", s.errs)
	}
	p := s.pct(99)
	if p <= aim {
		return fmt.Sprintf("met (p99 %s ms < %s ms)", ms(p), ms(aim))
	}
	return fmt.Sprintf("**missed**: p99 is %.1f× the aim", float64(p)/float64(aim))
}

// rateAim is the verdict on a rate aim.
func rateAim(s *stats, aim float64) string {
	if s.errs > 0 {
		return fmt.Sprintf("**missed**: %d errors", s.errs)
	}
	if s.rate() >= aim {
		return fmt.Sprintf("met (≥ %.0f/s)", aim)
	}
	return fmt.Sprintf("**missed**: %.0f%% of the aim (%.0f/s short)", 100*s.rate()/aim, aim-s.rate())
}

func latRow(w io.Writer, what string, s *stats, aim string) {
	fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %.0f%% | %s | %s |\n", what, s.ok, ms(s.pct(50)), ms(s.pct(99)), ms(s.maxLat()), aim, 100*s.stolen, s.snapshotCell(), errCell(s))
}

func rateRow(w io.Writer, what string, s *stats, aim string) {
	fmt.Fprintf(w, "| %s | %.0f | %d in %.1f s | %s | %s | %s | %.0f%% | %s | %s |\n", what, s.rate(), s.ok, s.elapsed.Seconds(), ms(s.pct(50)), ms(s.pct(99)),
		aim, 100*s.stolen, s.snapshotCell(), errCell(s))
}

func errCell(s *stats) string {
	if s.errs == 0 {
		return "0"
	}
	return strings.ReplaceAll(s.errText(), "|", `\|`)
}

func (r *report) print(w io.Writer) {
	c, m := r.cfg, r.model
	fmt.Fprintf(w, "\n==== Markdown (docs/performance.md) ====\n\n")
	fmt.Fprintf(w, "Command: `go run ./bench/scalebench %s`. Run on %s (UTC), %s/%s, %d CPUs (shared; the load generator "+
		"runs in the same process as the node(s)), %s.\n\n", strings.Join(os.Args[1:], " "), r.started.Format("2006-01-02 15:04"),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "Model: %d identities with 1–3 of %d role attributes each, %d services and %d edge routers likewise, %d service policies, "+
		"%d edge router policies, %d service edge router policies (1–2 attributes per role array, AllOf or AnyOf; a tenth name 1–3 entities by @id; "+
		"a few select #all), 5 posture checks. Filled as follows:\n\n", c.identities, c.attrs, c.services, c.routers, c.servicePolicies, c.erps, c.serps)
	fmt.Fprintf(w, "| fill step | records | time | per second |\n|---|---|---|---|\n")
	for _, s := range m.steps {
		fmt.Fprintf(w, "| %s | %d | %.1f s | %.0f |\n", s.what, s.n, s.took.Seconds(), s.rate())
	}
	fmt.Fprintf(w, "\nThe policies then select %d policy→entity pairs (link rows for services, routers and checks; resolved on demand for identities); the live heap after a full GC is %.1f GiB (process RSS %.1f GiB, "+
		"node and load generator together).\n", m.mem.links, gib(m.mem.heapLive), gib(m.mem.rss))

	if c.gcBefore {
		fmt.Fprintf(w, "\nEach measured phase starts right after a forced full garbage collection that also returned the freed memory to the OS (-gc-before).\n")
	}
	if c.afterSnapshots {
		fmt.Fprintf(w, "\nEach measured phase starts once no node is writing a raft snapshot (-after-snapshots).\n")
	}
	fmt.Fprintf(w, "\n#### Issue 4: management at scale\n\n")
	fmt.Fprintf(w, "Sequential HTTPS requests, one at a time: %d each after 20 warm-up requests; %d policy creates after 10; "+
		"3 `#all` policy creates after 1, then the 4 deletes.\n\n", c.requests, c.policyRequests)
	fmt.Fprintf(w, "| request | answers (2xx) | p50 ms | p99 ms | max ms | aim | CPU stolen | raft snapshot | errors |\n|---|---|---|---|---|---|---|---|---|\n")
	latRow(w, "`POST /identities` (1–3 attributes)", r.identityCreate, latencyAim(r.identityCreate, 20*time.Millisecond))
	latRow(w, fmt.Sprintf("`POST /service-policies` (1–2 attributes per role array; selects %d identities on average, %d at most)",
		r.policyLinks.mean, r.policyLinks.max), r.policyCreate, latencyAim(r.policyCreate, 20*time.Millisecond))
	latRow(w, fmt.Sprintf("`POST /service-policies` with identityRoles `#all` (selects all %d+ identities)", c.identities), r.policyAllCreate, "(no aim; for scale)")
	latRow(w, "`DELETE /service-policies/{id}` of those `#all` policies", r.policyAllDelete, "(no aim; for scale)")
	for _, f := range r.filtered {
		what := fmt.Sprintf("`GET /identities?filter=%s`", f.filter)
		if f.filter == "" {
			what = "`GET /identities`"
		}
		if f.afterWrite {
			what += ", each after the rename of an identity (not timed)"
		}
		latRow(w, fmt.Sprintf("%s (page of %d, totalCount %d)", what, f.page, f.total), f.st, "(compare with 100k)")
	}
	latRow(w, fmt.Sprintf("`GET /identities/{id}/services` (random identity; default page of 10; they reach %d services on average, %d at most)",
		r.identityReach.mean, r.identityReach.max), r.identityServices, latencyAim(r.identityServices, 2*time.Millisecond))

	fmt.Fprintf(w, "\n#### Issue 5: access decisions\n\n")
	fmt.Fprintf(w, "%d concurrent keep-alive HTTPS clients, each with its own API session of one identity that sees %d services "+
		"(10 of them also through a Dial policy with 5 posture checks); %s measured after %s of warm-up.\n\n",
		c.clients, len(m.clientServices), c.duration, c.warmup)
	fmt.Fprintf(w, "| request | per second | answers (2xx) | p50 ms | p99 ms | aim | CPU stolen | raft snapshot | errors |\n|---|---|---|---|---|---|---|---|---|\n")
	rateRow(w, fmt.Sprintf("`GET /edge/client/v1/services?limit=100` (all %d, %d KB)", r.clientListed, r.clientListBytes/1024), r.clientServices, rateAim(r.clientServices, 5000))
	rateRow(w, "`GET /edge/client/v1/services` (default page of 10)", r.clientServicesPage, "(for comparison)")
	rateRow(w, fmt.Sprintf("`POST /edge/client/v1/sessions` (Dial, round robin over %d services)", r.dialServices), r.sessionCreate, rateAim(r.sessionCreate, 2000))

	fmt.Fprintf(w, "\n#### Issue 7: posture\n\n")
	fmt.Fprintf(w, "`POST /edge/client/v1/posture-response-bulk` with 5 passing responses (OS, MAC, DOMAIN, 2× PROCESS; each answer names the %d affected services), "+
		"%d concurrent clients, each a fresh API session of the same identity that has dialed the %d services the posture policy guards "+
		"(so each bulk re-evaluates %d sessions), same model.\n\n", r.postureAffected, c.clients, r.postureSessions, r.postureSessions)
	fmt.Fprintf(w, "| cluster | per second | answers (2xx) | p50 ms | p99 ms | note | CPU stolen | raft snapshot | errors |\n|---|---|---|---|---|---|---|---|---|\n")
	rateRow(w, "one node", r.posture1, "")
	switch {
	case r.posture3 != nil:
		note := fmt.Sprintf("clients spread over the 3 nodes; followers forward to the leader (join + catch-up of both: %.0f s)", r.joinTook.Seconds())
		rateRow(w, "three nodes (in-process)", r.posture3, note)
		if r.posture3Leader != nil {
			rateRow(w, "three nodes, all clients on the leader", r.posture3Leader, "")
		}
	case r.clusterErr != nil:
		fmt.Fprintf(w, "| three nodes | — | — | — | — | not measured: %s | | | |\n", strings.ReplaceAll(r.clusterErr.Error(), "|", `\|`))
	default:
		fmt.Fprintf(w, "| three nodes | — | — | — | — | not measured (-cluster=false) | | | |\n")
	}
}
