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
	id := circuitID(t, n.dial("A"))
	n.routers["A"].confirmIdle(map[string]time.Duration{id: 0})
	n.routers["C"].confirmIdle(map[string]time.Duration{id: time.Since(start) + time.Second})
	n.routers["A"].barrier()
	n.routers["C"].barrier()
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "C"}) {
		t.Fatalf("a circuit in use was ended (path %v)", p)
	}
	n.routers["A"].confirmIdle(map[string]time.Duration{id: time.Since(start) + time.Second})
	poll(t, "the circuit never started ends", func() bool { return n.path(id) == nil })
	n.settled(id)
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
