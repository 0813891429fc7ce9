package integration

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What TestDataPlaneChaos checks after each fault (the traffic it checks:
// dpchaos_traffic_test.go).

// dpChecks runs the checks and keeps what failed.
type dpChecks struct {
	d         *dpChaos
	lastCheck time.Time // when the previous round of checks ended
	rounds    int
	failures  []string
	worstDial time.Duration
}

// run checks the data plane after a fault (nil: at the start or the end),
// healed at healed, and prints what it checked.
func (chk *dpChecks) run(label string, f *dpFault, healed time.Time) {
	d := chk.d
	chk.rounds++
	var lines, failed []string
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		failed = append(failed, msg)
		lines = append(lines, "FAILED: "+msg)
	}
	if f != nil && f.note != "" {
		if strings.HasPrefix(f.note, "FAILED: ") {
			fail("%s", strings.TrimPrefix(f.note, "FAILED: "))
		} else {
			lines = append(lines, f.note)
		}
	}
	// New dials: the first that succeeds, started after the healing.
	slowRound := false // a first dial over 5 s: its evidence is kept
	if f != nil && !d.strict {
		// The short run shares the machine with make test: hosts stuck on
		// OpenZiti's side (unwedgeHosts) are restarted, said, and the dials
		// judged from then on.
		if note, restartedAt := d.unwedgeHosts(healed); note != "" {
			lines = append(lines, note)
			healed = restartedAt
			f.endsAllowed = func(int) bool { return true } // the restarts end the streams
		}
	}
	for svc, name := range d.services {
		var first time.Time
		for deadline := healed.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if first = d.dials.firstOK(svc, healed); !first.IsZero() {
				break
			}
		}
		from := chk.lastCheck
		if f != nil {
			from = f.began
		}
		ok, bad := d.dials.counts(svc, from, time.Now())
		switch took := first.Sub(healed); {
		case first.IsZero():
			fail("no new dial of %s succeeded within 30 s of the healing", name)
		case took > 5*time.Second && d.strict:
			fail("the first new dial of %s succeeded %s after the healing (aim: within 5 s)", name, took.Round(time.Millisecond))
		default:
			chk.worstDial = max(chk.worstDial, took)
			p50, worst := d.dials.durations(svc, from, time.Now())
			slow := ""
			if took > 5*time.Second {
				slow = " (SLOW: over 5 s; asserted in the long run only, the short one shares the machine with make test)"
				slowRound = true
			}
			lines = append(lines, fmt.Sprintf("new dials of %s: one succeeded %s after the healing%s (since the fault began: %d succeeded, %d failed; a dial took %s at the median, %s at most)",
				name, took.Round(time.Millisecond), slow, ok, bad, p50.Round(time.Millisecond), worst.Round(time.Millisecond)))
		}
	}
	// Checks that converge: each polled until it passes or 30 s pass.
	poll := func(what string, cond func() error) {
		start := time.Now()
		var err error
		for deadline := start.Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if err = cond(); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			fail("%s: still wrong after 30 s: %v", what, err)
			return
		}
		lines = append(lines, fmt.Sprintf("%s: ok in %s", what, time.Since(start).Round(time.Millisecond)))
	}
	poll("terminators: each running host's exactly once on C in every node's model and in C's sdk-terminators, none of a stopped host", func() error {
		return d.terminatorsAgree(time.Now())
	})
	var orphans []string
	// Circuits come and go with the dials: a difference counts when it is
	// there in two readings 5 s apart (an unroute or a route on its way,
	// slow on a loaded machine, is not).
	poll("routes: every router's router-circuits are the circuits of the nodes crossing it (but busy ones a restarted node forgot)", func() error {
		spare := func(router string, detail any) bool {
			// A circuit whose node restarted is unknown to every node, and
			// kept by its routers while it is busy (OpenZiti's routers confirm
			// only idle circuits with their node).
			ctrl, _ := jget(detail, "ctrlId").(string)
			idle, err := time.ParseDuration(fmt.Sprint(jget(detail, "timeSinceActivity")))
			if d.restarted[ctrl] && err == nil && idle < 2*time.Second {
				orphans = append(orphans, fmt.Sprint(jget(detail, "id")))
				return true
			}
			return false
		}
		orphans = nil
		first, err := d.mn.routeDiffs(d.t, d.nodes(), spare)
		if err != nil || len(first) == 0 {
			return err
		}
		time.Sleep(5 * time.Second)
		orphans = nil
		second, err := d.mn.routeDiffs(d.t, d.nodes(), spare)
		if err != nil {
			return err
		}
		var both []string
		for k := range second {
			if first[k] {
				both = append(both, k)
			}
		}
		if len(both) > 0 {
			slices.Sort(both)
			return errors.New(strings.Join(both, "; "))
		}
		return nil
	})
	poll("circuits: none a node lists is idle on its routers for over 15 s (every client's circuit sends or has ended; echo-2's left out)", d.noIdleCircuits)
	poll("controller: every circuit's links exist; edgectl_circuits and edgectl_router_links equal the lists, on every node", d.invariants)
	// Streams: every open one echoes again after the healing, or ends; one
	// that does neither is stuck (its circuit gone from every node while
	// its router still holds it, or its far end gone and nobody told).
	var stuck []*stream
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if stuck = d.streams.stalled(healed); len(stuck) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, s := range stuck {
		fail("stream %d (%s, %d lines echoed) neither ended nor echoed a line in the 20 s after the healing", s.id, d.services[s.svc], s.sent)
		d.streams.retire(s)
	}
	// Streams: those that ended since the last round, each allowed only
	// when the fault took its path or its terminator; none came back changed.
	for _, s := range d.streams.endedSince(chk.lastCheck) {
		what := fmt.Sprintf("stream %d (%s, %d lines echoed) ended %s after the fault began: %v", s.id, d.services[s.svc], s.sent,
			s.ended.Sub(orNow(f)).Round(time.Millisecond), s.err)
		switch {
		case s.changed:
			fail("%s: bytes came back changed", what)
		case s.hung:
			fail("%s: it hung (no line back for 15 s, no end)", what)
		case f == nil || !f.endsAllowed(s.svc):
			fail("%s, though the fault left it a path and a terminator", what)
		default:
			lines = append(lines, what+" (allowed: its path or terminator went)")
		}
	}
	live := d.streams.live()
	lines = append(lines, fmt.Sprintf("streams: %d open, every line echoed in order and unchanged", len(live)))
	if f != nil && f.nodesRestart {
		// A restarted node forgot the circuits it routed: their routers keep
		// them while they are busy, but no node would move them off a cut
		// link. New streams replace them, as a client would after its
		// circuit ended.
		lines = append(lines, fmt.Sprintf("%d live circuits forgotten by a restarted node, kept by their routers: the streams replaced by new ones", len(orphans)))
		for _, s := range live {
			d.streams.retire(s)
		}
		live = nil
	}
	for svc := range d.services {
		n := 0
		for _, s := range live {
			if s.svc == svc {
				n++
			}
		}
		for ; n < 2; n++ {
			if err := d.streams.open(svc, d.proxyAddrs[svc]); err != nil {
				fail("%v", err)
				break
			}
		}
	}
	d.t.Logf("%8s %s\n    %s", time.Since(d.start).Round(time.Millisecond), label, strings.Join(lines, "\n    "))
	if len(failed) == 0 && (slowRound || os.Getenv("EDGECTL_DPCHAOS_EVIDENCE") != "") {
		d.t.Logf("    evidence of %s in %s", label, d.evidence(label, []string{"(no failure: kept as slow or asked for)"}))
	}
	if len(failed) > 0 {
		if slices.ContainsFunc(failed, func(s string) bool { return strings.HasPrefix(s, "no new ") }) {
			d.t.Logf("    what the dials met:\n      %s", strings.Join(d.diagnose(), "\n      "))
		}
		dir := d.evidence(label, failed)
		for _, msg := range failed {
			d.t.Errorf("%s: %s (evidence in %s)", label, msg, dir)
		}
		chk.failures = append(chk.failures, failed...)
	}
	chk.lastCheck = time.Now()
}

// diagnose is what the test log shows when new dials fail (a CI log is
// often all there is of a run): each node's last refusal of a dial, and
// the goroutines of the routers and of echo-1's `ziti tunnel host`,
// grouped by where they wait (the evidence directory has them whole).
func (d *dpChaos) diagnose() []string {
	var out []string
	for i, n := range d.nodes() {
		last := "none"
		for _, l := range strings.Split(n.stdout.String()+n.stderr.String(), "\n") {
			if strings.Contains(l, "dial refused") {
				last = l
			}
		}
		out = append(out, fmt.Sprintf("node %d: last dial refused: %s", i+1, last))
	}
	show := func(who string, dump string, err error) {
		if err != nil {
			out = append(out, fmt.Sprintf("%s: no goroutine dump: %v", who, err))
			return
		}
		out = append(out, who+"'s goroutines, by where they wait:")
		for _, g := range goroutineGroups(dump, 8) {
			out = append(out, "  "+g)
		}
	}
	for _, r := range []*zitiRouter{d.mn.a, d.mn.c} {
		st, err := r.stack()
		show(r.name, st, err)
	}
	st, err := d.hosts[0].stack()
	show("echo-1's tunnel host", st, err)
	st, err = d.hosts[1].usr1Stack()
	show("echo-2's sdk-golang host", st, err)
	return out
}

// unwedgeHosts restarts the hosts when no new dial of either service has
// succeeded for 15 s after the healing and OpenZiti's side is seen stuck:
// echo-1's `ziti tunnel host` wedged (tunnelHostWedged), or a running host
// with no terminator in router C's own list (its SDK did not bind again
// after its router came back: the node can only keep what C reports). It
// returns what it found and did ("" if nothing) and when the hosts were
// back; with no such sign nothing is done and the checks fail.
func (d *dpChaos) unwedgeHosts(healed time.Time) (string, time.Time) {
	dialed := func() bool { return !d.dials.firstOK(0, healed).IsZero() || !d.dials.firstOK(1, healed).IsZero() }
	for deadline := healed.Add(15 * time.Second); time.Now().Before(deadline) && !dialed(); time.Sleep(100 * time.Millisecond) {
	}
	if dialed() {
		return "", healed
	}
	var why []string
	if dump, err := d.hosts[0].stack(); err == nil && tunnelHostWedged(dump) {
		why = append(why, fmt.Sprintf("echo-1's `ziti tunnel host` wedged (its accept loop blocked in CompleteAcceptSuccess, "+
			"waiting for the start of a circuit that will not start; %d dials queued behind it)", strings.Count(dump, "newChildConnection")))
	}
	if unbound := d.hostsNotBoundOnC(); len(unbound) > 0 {
		why = append(why, "running, not bound on router C (no terminator in C's own sdk-terminators list): "+strings.Join(unbound, ", "))
	}
	if len(why) == 0 {
		return "", healed
	}
	for k := range d.hosts {
		d.hosts[k].stop()
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if d.terminatorsAgree(time.Now()) == nil {
			break
		}
	}
	for k := range d.hosts {
		d.hosts[k] = d.hostStart[k]()
	}
	return "OPENZITI: no new dial of either service for 15 s after the healing; " + strings.Join(why, "; ") +
		": both hosts restarted, the dials below judged from then (docs/operations.md, \"Chaos for the data plane\")", time.Now()
}

// hostsNotBoundOnC names the running hosts with no terminator of their
// service in router C's own sdk-terminators inspection (each entry's token
// names its service: the JWT's subject), whatever the model holds.
func (d *dpChaos) hostsNotBoundOnC() []string {
	held, err := d.inspect("sdk-terminators")
	if err != nil {
		return nil
	}
	boundIDs := map[string]bool{}
	entries, _ := jget(held[d.mn.c.id], "entries").([]any)
	for _, e := range entries {
		parts := strings.Split(fmt.Sprint(jget(e, "token")), ".")
		if len(parts) != 3 {
			continue
		}
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		var claims struct {
			Sub string `json:"sub"`
		}
		if err == nil && json.Unmarshal(payload, &claims) == nil {
			boundIDs[claims.Sub] = true
		}
	}
	n := d.nodes()[0]
	st, m, err := doErr(http.MethodGet, n.mgmt("/services?limit=100"), d.c.token, nil)
	if err != nil || st != 200 {
		return nil
	}
	ids := map[string]string{}
	items, _ := m["data"].([]any)
	for _, it := range items {
		name, _ := jget(it, "name").(string)
		ids[name] = fmt.Sprint(jget(it, "id"))
	}
	var out []string
	for k, name := range d.services {
		if d.hostUp(k) && !boundIDs[ids[name]] {
			out = append(out, fmt.Sprintf("the host of %s (%s)", name, d.hosts[k].name))
		}
	}
	return out
}

// tunnelHostWedged says whether a `ziti tunnel host`'s goroutine dump shows
// its accept loop blocked writing to a connection it accepted (sdk-golang's
// CompleteAcceptSuccess writes the crypto header, which waits for the
// circuit's start), with dials queued behind it: the host takes no dial of
// the service until that circuit starts or sdk-golang gives up on it
// (3 minutes).
func tunnelHostWedged(dump string) bool {
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, "tunnel.(*contextProvider).accept") && strings.Contains(g, "CompleteAcceptSuccess") &&
			strings.Contains(g, "BufferPayload") {
			return strings.Count(dump, "newChildConnection") > 0
		}
	}
	return false
}

func orNow(f *dpFault) time.Time {
	if f == nil {
		return time.Now()
	}
	return f.began
}

// summary prints the totals.
func (chk *dpChecks) summary() {
	d := chk.d
	ok, bad := 0, 0
	for svc := range d.services {
		o, b := d.dials.counts(svc, time.Time{}, time.Now())
		ok, bad = ok+o, bad+b
	}
	d.t.Logf("%d faults, %d check rounds, %d failures; dials: %d succeeded, %d failed; slowest first dial after a healing: %s; streams opened: %d",
		chk.rounds-2, chk.rounds, len(chk.failures), ok, bad, chk.worstDial.Round(time.Millisecond), len(d.streams.all))
}

// terminatorsAgree checks that every node's model holds exactly one
// terminator of each running host's service, on C, none of a stopped one,
// and that C's sdk-terminators inspection holds exactly those (A and B
// none).
func (d *dpChaos) terminatorsAgree(time.Time) error {
	want := map[string]int{}
	for k, name := range d.services {
		if d.hostUp(k) {
			want[name] = 1
		}
	}
	var model []string
	for i, n := range d.nodes() {
		st, m, err := doErr(http.MethodGet, "https://"+n.host()+"/fabric/v1/terminators?limit=100", d.c.token, nil)
		if err != nil || st != 200 {
			return fmt.Errorf("node %d: GET /fabric/v1/terminators: %d %v", i+1, st, err)
		}
		items, _ := m["data"].([]any)
		got := map[string]int{}
		var ids []string
		for _, it := range items {
			svc, _ := jget(it, "service", "name").(string)
			if router := jget(it, "router", "id"); router != d.mn.c.id {
				return fmt.Errorf("node %d: a terminator of %s on router %v, not C", i+1, svc, router)
			}
			got[svc]++
			ids = append(ids, jget(it, "id").(string))
		}
		for _, name := range d.services {
			if got[name] != want[name] {
				return fmt.Errorf("node %d: %d terminators of %s, want %d (host running: %v)", i+1, got[name], name, want[name], want[name] == 1)
			}
		}
		slices.Sort(ids)
		if i == 0 {
			model = ids
		} else if !slices.Equal(ids, model) {
			return fmt.Errorf("node %d's terminators %v, node 1's %v", i+1, ids, model)
		}
	}
	held, err := d.inspect("sdk-terminators")
	if err != nil {
		return err
	}
	for router, v := range held {
		var ids []string
		entries, _ := jget(v, "entries").([]any)
		for _, e := range entries {
			ids = append(ids, fmt.Sprint(jget(e, "id")))
		}
		slices.Sort(ids)
		wanted := []string(nil)
		if router == d.mn.c.id {
			wanted = model
		}
		if !slices.Equal(ids, wanted) {
			return fmt.Errorf("router %s's sdk-terminators %v, the model's %v", d.routerName(router), ids, wanted)
		}
	}
	if len(held) != 3 {
		return fmt.Errorf("%d of 3 routers answered the sdk-terminators inspection", len(held))
	}
	return nil
}

// inspect asks the three routers for value through a node that answers,
// by router id.
func (d *dpChaos) inspect(value string) (map[string]any, error) {
	var last error
	for _, n := range d.nodes() {
		st, m, err := doErr(http.MethodPost, "https://"+n.host()+"/fabric/v1/inspections", d.c.token,
			map[string]any{"appRegex": "^(" + d.mn.a.id + "|" + d.mn.b.id + "|" + d.mn.c.id + ")$", "requestedValues": []string{value}})
		if err != nil || st != 200 {
			last = fmt.Errorf("inspect %s through %s: %d %v %v", value, n.name, st, err, m)
			continue
		}
		out := map[string]any{}
		values, _ := m["values"].([]any)
		for _, v := range values {
			out[fmt.Sprint(jget(v, "appId"))] = jget(v, "value")
		}
		return out, nil
	}
	return nil, last
}

func (d *dpChaos) routerName(id string) string {
	switch id {
	case d.mn.a.id:
		return "A"
	case d.mn.b.id:
		return "B"
	case d.mn.c.id:
		return "C"
	}
	return id
}

// invariants checks each node's own view: every circuit's path uses links
// the node lists, and its metrics count its circuits and links.
func (d *dpChaos) invariants() error {
	for i, n := range d.nodes() {
		links, err := listAll(d.t, n, d.c.token, "/links")
		if err != nil {
			return err
		}
		circuits, err := listAll(d.t, n, d.c.token, "/circuits")
		if err != nil {
			return err
		}
		known := map[string]bool{}
		for _, l := range links {
			known[fmt.Sprint(jget(l, "id"))] = true
		}
		for _, c := range circuits {
			ls, _ := jget(c, "path", "links").([]any)
			for _, l := range ls {
				if id := fmt.Sprint(jget(l, "id")); !known[id] {
					return fmt.Errorf("node %d: circuit %v crosses link %s, which it does not list", i+1, jget(c, "id"), id)
				}
			}
		}
		m, err := scrapeMetrics(d.metrics[i], "edgectl_circuits", "edgectl_router_links")
		if err != nil {
			return fmt.Errorf("node %d: %w", i+1, err)
		}
		if m["edgectl_circuits"] != len(circuits) || m["edgectl_router_links"] != len(links) {
			return fmt.Errorf("node %d: edgectl_circuits %d, edgectl_router_links %d; it lists %d circuits, %d links",
				i+1, m["edgectl_circuits"], m["edgectl_router_links"], len(circuits), len(links))
		}
	}
	return nil
}

// scrapeMetrics reads the named gauges from a node's /metrics.
func scrapeMetrics(addr string, names ...string) (map[string]int, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && slices.Contains(names, f[0]) {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return nil, fmt.Errorf("metric %s: %q", f[0], f[1])
			}
			out[f[0]] = int(v)
		}
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, errors.New("no metric " + n)
		}
	}
	return out, nil
}

// evidence keeps what the nodes and routers said when a check failed, in
// a directory kept after the test, and returns it.
func (d *dpChaos) evidence(label string, failed []string) string {
	if d.artifactDir == "" {
		d.artifactDir, _ = os.MkdirTemp("", "edgectl-dpchaos-")
	}
	dir := filepath.Join(d.artifactDir, fmt.Sprintf("%03d-%s", len(failed), strings.NewReplacer(" ", "-", "/", "-", "(", "", ")", "", ",", "").Replace(label)))
	_ = os.MkdirAll(dir, 0o755)
	write := func(name, s string) { _ = os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644) }
	full := func(v any) string { b, _ := json.MarshalIndent(v, "", " "); return string(b) }
	write("failed.txt", strings.Join(failed, "\n")+"\n")
	for i, n := range d.nodes() {
		for _, p := range []string{"/circuits", "/links", "/terminators"} {
			items, err := listAll(d.t, n, d.c.token, p)
			write(fmt.Sprintf("node%d-%s.json", i+1, strings.TrimPrefix(p, "/")), full(map[string]any{"data": items, "error": fmt.Sprint(err)}))
		}
		write(fmt.Sprintf("node%d.log", i+1), n.stdout.String()+n.stderr.String())
		if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + d.metrics[i] + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			write(fmt.Sprintf("node%d-metrics.txt", i+1), string(b))
		}
	}
	for _, v := range []string{"router-circuits", "sdk-terminators", "links"} {
		got, err := d.inspect(v)
		write("inspect-"+v+".json", full(map[string]any{"values": got, "error": fmt.Sprint(err)}))
	}
	for _, r := range []*zitiRouter{d.mn.a, d.mn.b, d.mn.c} {
		write(r.name+".log", r.out.String())
		if st, err := r.stack(); err == nil {
			write(r.name+"-goroutines.txt", st)
		}
	}
	for k, h := range d.hosts {
		write(fmt.Sprintf("host-%d.log", k+1), h.out.String())
	}
	if st, err := d.hosts[0].stack(); err == nil {
		write("host-1-goroutines.txt", st)
	}
	if st, err := d.hosts[1].usr1Stack(); err == nil {
		write("host-2-goroutines.txt", st)
	}
	write("proxy.log", d.proxy.out.String())
	return dir
}

// noIdleCircuits checks that no circuit a node lists has been idle on every
// router of its path for over 15 s: the streams send every 100 ms and a
// dial lasts one echo, so such a circuit is one nobody uses that was never
// ended (a dial its client gave up on, an end that was lost).
func (d *dpChaos) noIdleCircuits() error {
	held, err := d.inspect("router-circuits")
	if err != nil {
		return err
	}
	var idle []string
	for i, n := range d.nodes() {
		circuits, err := listAll(d.t, n, d.c.token, "/circuits")
		if err != nil {
			return err
		}
		for _, c := range circuits {
			id := fmt.Sprint(jget(c, "id"))
			least := time.Duration(-1)
			nodes, _ := jget(c, "path", "nodes").([]any)
			for _, r := range nodes {
				v, _ := jget(held[fmt.Sprint(jget(r, "id"))], "circuits", id, "timeSinceActivity").(string)
				if t, err := time.ParseDuration(v); err == nil && (least < 0 || t < least) {
					least = t
				}
			}
			// echo-2's dial circuits stay open: the proxy half-closes, and the
			// router does not pass that on to an SDK host with SDK flow
			// control (OpenZiti's half-close issues, openziti/ziti#3526 and
			// #4394), so the host never closes; edgectl only routes them.
			if svc := fmt.Sprint(jget(c, "service", "name")); least > 15*time.Second && svc != "echo-2" {
				idle = append(idle, fmt.Sprintf("node %d's %s (%s, created %v) idle %s", i+1, id, svc, jget(c, "createdAt"), least.Round(time.Second)))
			}
		}
	}
	if n := len(idle); n > 0 {
		if n > 5 {
			idle = append(idle[:5], fmt.Sprintf("and %d more", len(idle)-5))
		}
		return fmt.Errorf("%d idle circuits: %s", n, strings.Join(idle, "; "))
	}
	return nil
}
