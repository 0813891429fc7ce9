package dataplane

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"

	"google.golang.org/protobuf/encoding/protowire"
)

// A dial in the first seconds of its router's channel may be one its
// client gave up on (issue 46: queued while the channel was down): the
// node probes its ingress router instead of waiting for the router's idle
// threshold (a minute by default) while the host's SDK waits for the
// circuit's start.

// idleReport answers the node's router-circuits inspections as OpenZiti's
// router does (milliseconds), each circuit idle since the time its func
// gives; it counts the inspections answered.
type idleReport struct {
	mu       sync.Mutex
	since    map[string]time.Time
	dest     map[string]map[string]string // circuit → its routes' destinations
	answered int
}

func (fr *fakeRouter) reportsIdle() *idleReport {
	rep := &idleReport{since: map[string]time.Time{}}
	fr.reply(wire.InspectRequestType, func(*ctrlchan.Message) *ctrlchan.Message {
		rep.mu.Lock()
		cs := map[string]any{}
		for id, at := range rep.since {
			cs[id] = map[string]any{"id": id, "ctrlId": "node-1", "timeSinceActivity": time.Since(at).Truncate(time.Millisecond).String(),
				"destinations": rep.dest[id]}
		}
		rep.answered++
		rep.mu.Unlock()
		rc, _ := json.Marshal(map[string]any{"circuits": cs})
		b := protowire.AppendTag(nil, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
		var iv []byte
		iv = protowire.AppendTag(iv, 1, protowire.BytesType)
		iv = protowire.AppendString(iv, inspectRouterCircuits)
		iv = protowire.AppendTag(iv, 2, protowire.BytesType)
		iv = protowire.AppendString(iv, string(rc))
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, iv)
		return ctrlchan.NewMessage(wire.InspectResponseType, b)
	})
	return rep
}

func (rep *idleReport) set(id string, at time.Time) {
	rep.mu.Lock()
	defer rep.mu.Unlock()
	rep.since[id] = at
}

// bound says what the router has bound to circuit id's ingress address
// (ingress): "missing" when nothing, as OpenZiti's router says.
func (rep *idleReport) bound(id, ingress, what string) {
	rep.mu.Lock()
	defer rep.mu.Unlock()
	if _, ok := rep.since[id]; !ok {
		rep.since[id] = time.Now()
	}
	if rep.dest == nil {
		rep.dest = map[string]map[string]string{}
	}
	rep.dest[id] = map[string]string{ingress: what, "link-of-its-path": "link"}
}

// ingressOf is circuit id's address on its ingress router.
func (n *testNet) ingressOf(id string) string {
	n.m.circuits.mu.Lock()
	defer n.m.circuits.mu.Unlock()
	return n.m.circuits.byID[id].c.IngressID
}

// A circuit a fault moved in its first seconds, before its ingress router
// judged it, is in doubt (the move routed that router again: its idle time
// says nothing). Nothing bound to its ingress address there in two probes
// in a row (its client gave up the dial before the answer), it ends.
func TestProbe_AMovedCircuitWhoseClientNeverHadItEnds(t *testing.T) {
	n := square(t)
	n.routers["A"].r.ConnectedAt = time.Now().Add(-time.Minute) // not in doubt when dialed
	rep := n.routers["A"].reportsIdle()
	id := circuitID(t, n.dial("A"))
	rep.bound(id, n.ingressOf(id), "missing")
	n.fault("B", wire.LinkFault, "bd")
	poll(t, "the circuit moves to A>C>D", func() bool { return slices.Equal(n.path(id), []string{"A", "C", "D"}) })
	moved := time.Now()
	poll(t, "the circuit whose client never had it ends", func() bool { return n.path(id) == nil })
	if took := time.Since(moved); took < probeMissingLimit*probeAfter-200*time.Millisecond {
		t.Fatalf("ended %s after its move, before its second probe", took)
	}
	if rep.count() != probeMissingLimit {
		t.Fatalf("%d inspections, want %d", rep.count(), probeMissingLimit)
	}
	n.settled(id)
}

// The same circuit with its client's end bound on its ingress router is
// judged at its first probe and kept; judged, a cheaper path may take it.
func TestProbe_AMovedCircuitWithItsClientIsJudgedAndKept(t *testing.T) {
	n := square(t)
	n.routers["A"].r.ConnectedAt = time.Now().Add(-time.Minute)
	rep := n.routers["A"].reportsIdle()
	id := circuitID(t, n.dial("A"))
	rep.bound(id, n.ingressOf(id), "xgress")
	n.fault("B", wire.LinkFault, "bd")
	poll(t, "the circuit moves to A>C>D", func() bool { return slices.Equal(n.path(id), []string{"A", "C", "D"}) })
	poll(t, "the probe", func() bool { return rep.count() == 1 })
	n.routers["A"].barrier()
	if pollUntil(probeAfter+500*time.Millisecond, func() bool { return rep.count() > 1 || n.path(id) == nil }) {
		t.Fatalf("after its probe found its client: %d inspections, path %v", rep.count(), n.path(id))
	}
	n.m.circuits.mu.Lock()
	judged := n.m.circuits.byID[id].judged
	n.m.circuits.mu.Unlock()
	if !judged {
		t.Fatal("a moved circuit whose client has it is still in doubt after its probe")
	}
}

// A dial that took slowDial or more here may have outlived its client's
// wait, though its router connected long ago: it is in doubt, and idle on
// its ingress router since its route there (before it went live), it ends
// at its probe.
func TestProbe_ASlowDialIsInDoubt(t *testing.T) {
	n := line(t)
	n.routers["A"].r.ConnectedAt = time.Now().Add(-time.Minute)
	rep := n.routers["A"].reportsIdle()
	n.routers["C"].setAnswer(func(string, uint32) routeReply {
		time.Sleep(slowDial + 100*time.Millisecond) // a slow host dial, not a wait for a condition
		return routeReply{ok: true}
	})
	before := time.Now()
	id := circuitID(t, n.dial("A"))
	rep.set(id, before)
	poll(t, "the slow dial's circuit never started ends", func() bool { return n.path(id) == nil })
	n.settled(id)
}

func (rep *idleReport) count() int {
	rep.mu.Lock()
	defer rep.mu.Unlock()
	return rep.answered
}

// Idle on its ingress router since before it went live (its route there),
// a circuit dialed right after its router connected ends about probeAfter
// after it went live, with no confirmation from the router.
func TestProbe_ACircuitInDoubtNeverStartedEndsAtItsProbe(t *testing.T) {
	n := line(t)
	rep := n.routers["A"].reportsIdle()
	// The egress router answers once it has dialed the host, as
	// OpenZiti's does: a few milliseconds after the ingress was routed.
	n.routers["C"].setAnswer(func(string, uint32) routeReply {
		time.Sleep(100 * time.Millisecond) // the host's dial, not a wait for a condition
		return routeReply{ok: true}
	})
	before := time.Now()
	id := circuitID(t, n.dial("A"))
	rep.set(id, before)
	start := time.Now()
	poll(t, "the circuit never started ends", func() bool { return n.path(id) == nil })
	if took := time.Since(start); took < probeAfter-100*time.Millisecond {
		t.Fatalf("ended %s after its answer, before its probe", took)
	}
	n.settled(id)
	if rep.count() != 1 {
		t.Fatalf("%d inspections, want 1", rep.count())
	}
}

// Idle since after it went live (its client started it at once, then
// went quiet), it is kept and in doubt no more: a cheaper path takes it,
// and an idle time past the move never ends it.
func TestProbe_ACircuitInDoubtStartedIsKeptAndJudged(t *testing.T) {
	n := square(t)
	rep := n.routers["A"].reportsIdle()
	id := circuitID(t, n.dial("A"))
	started := n.liveAt(id).Add(200 * time.Millisecond) // its start, once the answer came
	rep.set(id, started)
	poll(t, "the probe", func() bool { return rep.count() == 1 })
	n.routers["A"].barrier()
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "D"}) {
		t.Fatalf("a started circuit was ended (path %v)", p)
	}
	// Its router names it idle since its start, within the slack of a
	// dial in doubt: judged started, it stays.
	n.routers["A"].confirmIdle(map[string]time.Duration{id: time.Since(started)})
	n.routers["A"].barrier()
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "D"}) {
		t.Fatalf("a circuit judged started was ended by a confirmation (path %v)", p)
	}
	n.cheaper()
	n.smartNow()
	if p := n.path(id); !slices.Equal(p, []string{"A", "C", "D"}) {
		t.Fatalf("a circuit judged started by its probe did not move (path %v)", p)
	}
	n.routers["A"].confirmIdle(map[string]time.Duration{id: time.Hour})
	n.routers["A"].barrier()
	if p := n.path(id); !slices.Equal(p, []string{"A", "C", "D"}) {
		t.Fatalf("a started circuit was ended (path %v)", p)
	}
}

// The probe cannot tell (idle for about as long as it has been live): the
// circuit is kept, still in doubt, left to the router's confirmations.
func TestProbe_UndecidedIsKeptInDoubt(t *testing.T) {
	n := square(t)
	rep := n.routers["A"].reportsIdle()
	id := circuitID(t, n.dial("A"))
	rep.set(id, n.liveAt(id))
	poll(t, "the probe", func() bool { return rep.count() == 1 })
	n.routers["A"].barrier()
	n.cheaper()
	n.smartNow()
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "D"}) {
		t.Fatalf("path %v", p)
	}
}

// A dial long after its router connected is not in doubt: no probe.
func TestProbe_NoneForADialLongAfterItsRouterConnected(t *testing.T) {
	n := line(t)
	n.routers["A"].r.ConnectedAt = time.Now().Add(-time.Minute)
	rep := n.routers["A"].reportsIdle()
	id := circuitID(t, n.dial("A"))
	if pollUntil(probeAfter+time.Second, func() bool { return rep.count() > 0 }) {
		t.Fatal("a circuit not in doubt was probed")
	}
	if n.path(id) == nil {
		t.Fatal("the circuit ended")
	}
}

// liveAt is when circuit id went live.
func (n *testNet) liveAt(id string) time.Time {
	n.m.circuits.mu.Lock()
	defer n.m.circuits.mu.Unlock()
	return n.m.circuits.byID[id].liveAt
}

// A burst of dials (a router's queue, sent when its channel came back) is
// probed with one inspection: those due within probeBatch of the first.
func TestProbe_ABurstIsProbedOnce(t *testing.T) {
	n := line(t)
	rep := n.routers["A"].reportsIdle()
	first := circuitID(t, n.dial("A"))
	second := circuitID(t, n.dial("A"))
	n.liveSince(second, -probeBatch/2) // live a moment after the first
	rep.set(first, n.liveAt(first).Add(200*time.Millisecond))
	rep.set(second, n.liveAt(second).Add(200*time.Millisecond))
	poll(t, "the probe", func() bool { return rep.count() >= 1 })
	if pollUntil(probeBatch+500*time.Millisecond, func() bool { return rep.count() > 1 }) {
		t.Fatalf("%d inspections for a burst, want 1", rep.count())
	}
	for _, id := range []string{first, second} {
		if n.path(id) == nil {
			t.Fatalf("circuit %s ended", id)
		}
	}
}
