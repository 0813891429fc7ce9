package dataplane

import (
	"slices"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"

	"google.golang.org/protobuf/encoding/protowire"
)

// A circuit its client never started (issue 46: a dial a router queued
// while its channel to the node was down, answered when it came back,
// after its client gave up) held the host's SDK until it ended; the node
// kept it, as its routers' confirmations named a circuit it knows.

// confirmIdle sends the router's confirmation of circuits with their idle
// times, as OpenZiti's router's scanner does (ids 1, idleTimes 2).
func (fr *fakeRouter) confirmIdle(idle map[string]time.Duration) {
	var b []byte
	for id := range idle {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, id)
	}
	for id, d := range idle {
		e := protowire.AppendTag(nil, 1, protowire.BytesType)
		e = protowire.AppendString(e, id)
		e = protowire.AppendTag(e, 2, protowire.VarintType)
		e = protowire.AppendVarint(e, uint64(d))
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, e)
	}
	fr.send(ctrlchan.NewMessage(wire.CircuitConfirmationType, b))
}

// The ingress router reports the circuit idle for longer than it has been
// live (nothing forwarded since its route, before the answer): it ends,
// unrouted everywhere. Idle for less (its client sent once, then went
// quiet), or reported so by a router other than the ingress, it stays.
func TestConfirmation_ACircuitItsClientNeverStartedEnds(t *testing.T) {
	n := line(t)
	n.routers["A"].r.ConnectedAt = time.Now().Add(-time.Minute) // no queued dial
	start := time.Now()
	used := circuitID(t, n.dial("A"))
	id := circuitID(t, n.dial("A"))
	n.routers["A"].confirmIdle(map[string]time.Duration{used: 0})
	n.routers["C"].confirmIdle(map[string]time.Duration{id: time.Since(start) + time.Second})
	n.routers["A"].barrier()
	n.routers["C"].barrier()
	if p := n.path(used); !slices.Equal(p, []string{"A", "B", "C"}) {
		t.Fatalf("a circuit in use was ended (path %v)", p)
	}
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "C"}) {
		t.Fatalf("a circuit reported idle by a router not its ingress was ended (path %v)", p)
	}
	n.routers["A"].confirmIdle(map[string]time.Duration{id: time.Since(start) + time.Second})
	poll(t, "the circuit never started ends", func() bool { return n.path(id) == nil })
	n.settled(id)
	// Judged started (idle for less than it has been live), a circuit is
	// never judged again: a longer idle time is a quiet stream's.
	n.routers["A"].confirmIdle(map[string]time.Duration{used: time.Since(start) + time.Second})
	n.routers["A"].barrier()
	if p := n.path(used); !slices.Equal(p, []string{"A", "B", "C"}) {
		t.Fatalf("a circuit judged started was ended (path %v)", p)
	}
}

// A moved circuit was routed again since it went live (the routers' idle
// times start anew): it is not judged.
func TestConfirmation_AMovedCircuitIsNotJudged(t *testing.T) {
	n := square(t)
	n.routers["A"].r.ConnectedAt = time.Now().Add(-time.Minute)
	start := time.Now()
	id := circuitID(t, n.dial("A"))
	n.fault("B", wire.LinkFault, "bd")
	poll(t, "the circuit moves to A>C>D", func() bool { return slices.Equal(n.path(id), []string{"A", "C", "D"}) })
	n.routers["A"].confirmIdle(map[string]time.Duration{id: time.Since(start) + time.Second})
	n.routers["A"].barrier()
	if p := n.path(id); !slices.Equal(p, []string{"A", "C", "D"}) {
		t.Fatalf("a moved circuit was ended (path %v)", p)
	}
}

// A dial that came within seconds of its router's channel may have waited
// in the router's queue while the channel was down (issue 46: a rolling
// restart), and its routes were answered at once: its ingress router's
// idle time cannot be told from that of a circuit just started. Reported
// idle since (within a second of) when it went live, it ends; the same
// report of a dial that came later is of a circuit in use. (A router
// reports only circuits idle past its threshold, seconds; here the
// circuits are a few milliseconds old, and the slack alone decides.)
func TestConfirmation_ADialRightAfterItsRouterConnectedIsGivenSlack(t *testing.T) {
	n := line(t)
	early := circuitID(t, n.dial("A"))
	n.routers["A"].confirmIdle(map[string]time.Duration{early: 0})
	poll(t, "the circuit dialed right after its router connected ends", func() bool { return n.path(early) == nil })
	n.settled(early)

	n.routers["A"].r.ConnectedAt = time.Now().Add(-time.Minute)
	later := circuitID(t, n.dial("A"))
	n.routers["A"].confirmIdle(map[string]time.Duration{later: 0})
	n.routers["A"].barrier()
	if p := n.path(later); !slices.Equal(p, []string{"A", "B", "C"}) {
		t.Fatalf("a circuit dialed later was ended (path %v)", p)
	}
}

// cheaper makes A>C>D the cheaper path of square by far.
func (n *testNet) cheaper() {
	n.setLatency("ac", 1)
	n.setLatency("cd", 1)
	n.setLatency("ab", 200)
}

// liveSince makes circuit id live since ago, as if dialed then.
func (n *testNet) liveSince(id string, ago time.Duration) {
	n.m.circuits.mu.Lock()
	defer n.m.circuits.mu.Unlock()
	e := n.m.circuits.byID[id]
	e.liveAt = time.Now().Add(-ago)
	e.probeFrom = e.liveAt
}

// A dial right after its router connected may never have been started
// (issue 46: after a rolling restart), and its ingress router's idle time
// is the only evidence: a move for a cheaper path would route that router
// again and start the time anew, the judgement lost and the circuit kept,
// holding its host's SDK. It stays on its path until judged, then ends.
func TestConfirmation_ACircuitInDoubtWaitsForItsJudgementBeforeACheaperPath(t *testing.T) {
	n := square(t)
	id := circuitID(t, n.dial("A"))
	n.cheaper()
	n.smartNow()
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "D"}) {
		t.Fatalf("a circuit in doubt moved for a cheaper path (path %v)", p)
	}
	if got := len(n.routers["C"].messages(wire.RouteType)); got != 0 {
		t.Fatalf("router C was routed %d times", got)
	}
	n.routers["A"].confirmIdle(map[string]time.Duration{id: 0})
	poll(t, "the circuit never started ends", func() bool { return n.path(id) == nil })
	n.settled(id)
}

// Judged started by its ingress router's confirmation (idle for less than
// it has been live), the circuit is in doubt no more: it moves to the
// cheaper path, and an idle time past the move never ends it (an idle
// long-lived stream goes on).
func TestConfirmation_ACircuitJudgedStartedMovesToACheaperPath(t *testing.T) {
	n := square(t)
	id := circuitID(t, n.dial("A"))
	n.liveSince(id, 10*time.Second)
	n.routers["A"].confirmIdle(map[string]time.Duration{id: 5 * time.Second})
	n.routers["A"].barrier()
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "D"}) {
		t.Fatalf("a circuit in use was ended (path %v)", p)
	}
	n.cheaper()
	n.smartNow()
	if p := n.path(id); !slices.Equal(p, []string{"A", "C", "D"}) {
		t.Fatalf("a circuit judged started did not move (path %v)", p)
	}
	n.routers["A"].confirmIdle(map[string]time.Duration{id: time.Hour})
	n.routers["A"].barrier()
	if p := n.path(id); !slices.Equal(p, []string{"A", "C", "D"}) {
		t.Fatalf("a moved circuit was ended (path %v)", p)
	}
	n.settled(id)
}

// Past doubtLimit a circuit its ingress router never reported idle was
// used (a router reports one never started within about two minutes): it
// moves to the cheaper path.
func TestConfirmation_ACircuitNeverReportedIsInDoubtNoMoreAfterTheLimit(t *testing.T) {
	n := square(t)
	id := circuitID(t, n.dial("A"))
	n.liveSince(id, doubtLimit+time.Second)
	n.cheaper()
	n.smartNow()
	if p := n.path(id); !slices.Equal(p, []string{"A", "C", "D"}) {
		t.Fatalf("path %v", p)
	}
	n.settled(id)
}

// A fault moves a circuit in doubt at once: its path is broken, the move
// is no optimisation to wait with.
func TestConfirmation_AFaultMovesACircuitInDoubtAtOnce(t *testing.T) {
	n := square(t)
	id := circuitID(t, n.dial("A"))
	n.fault("B", wire.LinkFault, "bd")
	poll(t, "the circuit moves to A>C>D", func() bool { return slices.Equal(n.path(id), []string{"A", "C", "D"}) })
	n.settled(id)
}

// A cheaper path found while the dial still routes its circuit is not
// noted for a move once it is live (as a fault is): the circuit would be
// moved in its first milliseconds, in doubt.
func TestConfirmation_ACheaperPathWhileTheDialRoutesMovesNothingAfter(t *testing.T) {
	n := square(t)
	g := newGate()
	held := n.routers["B"].holdRoutes(g, dialAttempt)
	answer := n.dialAsync("A")
	id := <-held
	n.cheaper()
	n.m.reroute(id, "a cheaper path", true)
	g.open()
	if got := circuitID(t, <-answer); got != id {
		t.Fatalf("answered circuit %s, routed %s", got, id)
	}
	n.routers["A"].barrier()
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "D"}) {
		t.Fatalf("a circuit in doubt moved for a cheaper path (path %v)", p)
	}
	n.routers["A"].confirmIdle(map[string]time.Duration{id: 0})
	poll(t, "the circuit never started ends", func() bool { return n.path(id) == nil })
	n.settled(id)
}
