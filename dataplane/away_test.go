package dataplane

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/dpevent"
	"edgectl/dataplane/wire"
	"edgectl/fsm"

	"google.golang.org/protobuf/encoding/protowire"
)

// A router away from this node (away.go): its control channel here closes,
// but it still routes (it keeps its channels to the other nodes and dials
// this one again).

// inspects makes router fr answer the node's inspections as a router
// holding circuits and links would (router-circuits, links), and counts
// the inspections it answered.
func (fr *fakeRouter) inspects(circuits, links []string) *int {
	answered := new(int)
	fr.reply(wire.InspectRequestType, func(*ctrlchan.Message) *ctrlchan.Message {
		cs := map[string]any{}
		for _, id := range circuits {
			cs[id] = map[string]any{"id": id, "ctrlId": "node-1", "timeSinceActivity": "10ms"}
		}
		var ls []any
		for _, id := range links {
			ls = append(ls, map[string]any{"id": id, "dialed": true})
		}
		rc, _ := json.Marshal(map[string]any{"circuits": cs})
		lk, _ := json.Marshal(map[string]any{"links": ls})
		b := protowire.AppendTag(nil, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
		for _, v := range [][2]string{{"router-circuits", string(rc)}, {"links", string(lk)}} {
			var iv []byte
			iv = protowire.AppendTag(iv, 1, protowire.BytesType)
			iv = protowire.AppendString(iv, v[0])
			iv = protowire.AppendTag(iv, 2, protowire.BytesType)
			iv = protowire.AppendString(iv, v[1])
			b = protowire.AppendTag(b, 3, protowire.BytesType)
			b = protowire.AppendBytes(b, iv)
		}
		fr.mu.Lock()
		*answered++
		fr.mu.Unlock()
		return ctrlchan.NewMessage(wire.InspectResponseType, b)
	})
	return answered
}

// unrouted are the circuits router fr was told to unroute.
func (fr *fakeRouter) unrouted() []string {
	var out []string
	for _, m := range fr.messages(wire.UnrouteType) {
		out = append(out, circuitOf(m))
	}
	slices.Sort(out)
	return out
}

// isAway says whether router id is away from the node (its channel closed,
// within its grace).
func (n *testNet) isAway(id string) bool {
	n.m.mu.Lock()
	defer n.m.mu.Unlock()
	return n.m.aways[id] != nil
}

// leaves closes router id's channel and waits until the node has dropped
// it: its router disconnected event (sent once the drop is done) is in
// the net's event log.
func (n *testNet) leaves(id string) {
	n.t.Helper()
	count := func() int {
		k := 0
		for _, e := range events(n.events, dpevent.Router, dpevent.Disconnected) {
			if e.RouterID == id {
				k++
			}
		}
		return k
	}
	before := count()
	n.routers[id].leave()
	poll(n.t, "router "+id+" dropped", func() bool { return count() > before })
}

// awayNet is a net whose Manager keeps data-plane events (leaves needs
// them).
func awayNet(t *testing.T, opts ...netOption) []netOption {
	return append(opts, withEvents(dpevent.New(dpevent.Config{NodeID: "node-1"})))
}

// A router that is only away keeps its circuits: the node ends none and
// unroutes none (before, its channel closing ended every circuit it was an
// end of, on routers that still carried their traffic, and a node cut off
// from the routers left streams half-routed: TestDataPlaneChaos, cut-node).
// When it returns, it is told to unroute what ended while it was away, and
// the circuits and links it no longer has end and go; those it has stay.
func TestRouterAway_ItsCircuitsAreKeptAndReconciledOnItsReturn(t *testing.T) {
	n := triangle(t, awayNet(t)...) // A>B>C; link ac dialed by A
	kept := circuitID(t, n.dial("A"))
	lost := circuitID(t, n.dial("A"))
	closed := circuitID(t, n.dial("A"))
	for _, id := range []string{kept, lost, closed} {
		n.settled(id)
	}

	n.leaves("A")
	for _, id := range []string{kept, lost, closed} {
		if p := n.path(id); !slices.Equal(p, []string{"A", "B", "C"}) {
			t.Fatalf("circuit %s's path is %v once A is away: it was ended or moved", id, p)
		}
	}
	if !n.isAway("A") {
		t.Fatal("A is not away once its channel closed")
	}
	for _, rid := range []string{"B", "C"} {
		if got := n.routers[rid].unrouted(); len(got) != 0 {
			t.Fatalf("router %s was told to unroute %v when A went away", rid, got)
		}
	}
	if len(n.m.Links()) != 3 {
		t.Fatalf("links once A is away: %v (A's are kept)", n.m.Links())
	}

	// While A is away, the far end of one circuit closes: it ends, and A,
	// which cannot be told, is told on its return.
	n.fault("C", wire.EgressFault, closed)
	poll(t, "the closed circuit ends", func() bool { return n.path(closed) == nil })

	// A returns: it no longer has lost (it ended there unseen) nor link ac.
	a := n.addRouterWith("A", func(fr *fakeRouter) { fr.inspects([]string{kept, closed}, []string{"ab"}) })
	poll(t, "the circuit A no longer has ends", func() bool { return n.path(lost) == nil })
	poll(t, "A is told to unroute what ended while it was away", func() bool {
		got := a.unrouted()
		return slices.Contains(got, closed) && slices.Contains(got, lost)
	})
	for _, rid := range []string{"B", "C"} {
		r := n.routers[rid]
		poll(t, "router "+rid+" unroutes the circuits that ended", func() bool {
			got := r.unrouted()
			return slices.Contains(got, lost) && slices.Contains(got, closed)
		})
		r.barrier()
		if slices.Contains(r.unrouted(), kept) {
			t.Fatalf("router %s was told to unroute the circuit A still has", rid)
		}
	}
	if p := n.path(kept); !slices.Equal(p, []string{"A", "B", "C"}) {
		t.Fatalf("the circuit A still has: path %v", p)
	}
	if slices.Contains(a.unrouted(), kept) {
		t.Fatal("A was told to unroute the circuit it still has")
	}
	poll(t, "link ac, which A no longer has, goes", func() bool {
		for _, l := range n.m.Links() {
			if l.ID == "ac" {
				return false
			}
		}
		return true
	})
	if n.isAway("A") {
		t.Fatal("A is still away once back")
	}
}

// An Unroute kept for a router found not connected reaches it once it is
// connected, even when its return took what was kept for it in between
// (the keeper looked it up before it connected, and kept after its
// reconcile: CI once saw A never told of a circuit that ended while it
// was away). Here the keeping comes after the return, as in that window.
func TestRouterAway_AnUnrouteKeptAfterTheReturnIsSentAtOnce(t *testing.T) {
	n := line(t, awayNet(t)...)
	id := circuitID(t, n.dial("A"))
	n.settled(id)
	n.leaves("A")
	var asked *int
	a := n.addRouterWith("A", func(fr *fakeRouter) { asked = fr.inspects([]string{id}, []string{"ab"}) })
	// Its reconcile took the kept Unroutes before it asked.
	poll(t, "A's return is reconciled", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return *asked > 0
	})
	n.m.unrouteLater("A", "ended-while-away")
	poll(t, "A is told to unroute the circuit kept for it", func() bool {
		return slices.Contains(a.unrouted(), "ended-while-away")
	})
	a.barrier()
	if slices.Contains(a.unrouted(), id) {
		t.Fatal("A was told to unroute the circuit it still has")
	}
}

// A router that does not return within its grace is gone: the circuits it
// was an end of end, on every router of their paths, and its links go.
func TestRouterAway_GoneOnceItsGracePasses(t *testing.T) {
	n := line(t, awayNet(t, withRouterGrace(300*time.Millisecond))...)
	id := circuitID(t, n.dial("A"))
	n.settled(id)
	n.leaves("A")
	poll(t, "the circuit ends once A's grace passed", func() bool { return n.path(id) == nil })
	for _, rid := range []string{"B", "C"} {
		r := n.routers[rid]
		poll(t, "router "+rid+" unroutes it", func() bool { return slices.Contains(r.unrouted(), id) })
	}
	for _, l := range n.m.Links() {
		if l.SrcRouterID == "A" {
			t.Fatalf("link %s A dialed is kept after A is gone", l.ID)
		}
	}
	// A comes back much later: it is told to unroute the circuit.
	a := n.addRouter("A")
	poll(t, "A, back, unroutes the circuit", func() bool { return slices.Contains(a.unrouted(), id) })
}

// A router deleted while it is away is gone at once.
func TestRouterAway_GoneAtOnceWhenDeleted(t *testing.T) {
	n := line(t, awayNet(t)...)
	id := circuitID(t, n.dial("A"))
	n.settled(id)
	n.leaves("A")
	n.do(fsm.CmdEdgeRouterDelete, fsm.Delete{ID: "A"})
	poll(t, "the circuit ends once A is deleted", func() bool { return n.path(id) == nil })
	if n.isAway("A") {
		t.Fatal("a deleted router is still away")
	}
}

// A router that died is away too (its channel closed), but the other ends
// of the links it dialed have closed them: asked, they say so, and the
// circuits crossing those links move or end at once, not when the grace
// passes (only the dialer reports a link's faults). While the other end
// still holds the link, the router is only away and nothing changes.
func TestRouterAway_ItsLinksTheOtherEndNoLongerHasFailAtOnce(t *testing.T) {
	n := line(t, awayNet(t)...) // the default grace: 30 s
	id := circuitID(t, n.dial("A"))
	n.settled(id)
	held := n.routers["C"].inspects(nil, []string{"bc"}) // C still holds B's link
	n.leaves("B")
	poll(t, "C asked for its links", func() bool {
		n.routers["C"].mu.Lock()
		defer n.routers["C"].mu.Unlock()
		return *held > 0
	})
	if n.path(id) == nil {
		t.Fatal("the circuit ended while B's link was still held by C")
	}
	n.routers["C"].inspects(nil, nil) // C closed it: B died
	poll(t, "the circuit ends: no path is left", func() bool { return n.path(id) == nil })
	for _, l := range n.m.Links() {
		if l.ID == "bc" {
			t.Fatal("link bc is kept though C no longer has it")
		}
	}
}

// A forward fault a router reports for a circuit while another router of
// its path is away (a node cut off from the routers, the first of them
// back): no other path can be routed, but the away router still carries
// it and no link of its path failed, so the circuit stays on its path
// (before, it ended, and its stream with it: TestDataPlaneChaos, cut-node).
func TestRouterAway_AForwardFaultWhileARouterOfThePathIsAwayKeepsTheCircuit(t *testing.T) {
	n := line(t, awayNet(t)...)
	id := circuitID(t, n.dial("A"))
	n.settled(id)
	path := n.path(id)
	n.leaves("B")
	n.fault("C", wire.ForwardFault, id)
	poll(t, "the move given up, the circuit kept", func() bool {
		return counterValue(t, n.m.metrics.reroutes, "result", "kept") == 1
	})
	if p := n.path(id); !slices.Equal(p, path) {
		t.Fatalf("the circuit's path is %v, was %v", p, path)
	}
}
