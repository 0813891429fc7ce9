package dataplane

import (
	"slices"
	"strings"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
)

// line is routers A–B–C with a terminator on C: a dial through A takes A>B>C.
func line(t *testing.T, opts ...netOption) *testNet {
	return newTestNet(t, opts...).lineTo("C")
}

// lineTo adds routers A, B and C, linked A–B and B–C, and terminator t1 on
// router term.
func (n *testNet) lineTo(term string) *testNet {
	for _, id := range []string{"A", "B", "C"} {
		n.addRouter(id)
	}
	n.link("ab", "A", "B")
	n.link("bc", "B", "C")
	n.terminator("t1", term)
	return n
}

func TestDial_RoutesEveryRouterOfThePath(t *testing.T) {
	n := line(t)
	id := circuitID(t, n.dial("A"))
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "C"}) {
		t.Fatalf("path %v", p)
	}
	n.settled(id)
	if len(n.routers["C"].messages(wire.RouteType)) != 1 {
		t.Fatal("the egress got more than one route")
	}
}

// triangle is line plus a dear link A–C: a dial takes A>B>C, and A>C once
// B costs more.
func triangle(t *testing.T, opts ...netOption) *testNet {
	n := line(t, opts...)
	n.link("ac", "A", "C")
	n.setLatency("ab", 10)
	n.setLatency("bc", 10)
	n.setLatency("ac", 100)
	return n
}

// square is A–B–D and A–C–D, the first cheaper, with a terminator on D.
func square(t *testing.T) *testNet {
	n := newTestNet(t)
	for _, id := range []string{"A", "B", "C", "D"} {
		n.addRouter(id)
	}
	for _, l := range []struct {
		id, a, b string
		ms       int
	}{{"ab", "A", "B", 10}, {"bd", "B", "D", 10}, {"ac", "A", "C", 50}, {"cd", "C", "D", 50}} {
		n.link(l.id, l.a, l.b)
		n.setLatency(l.id, l.ms)
	}
	n.terminator("t1", "D")
	return n
}

func dialAttempt(a uint32) bool    { return a != wire.SmartRerouteAttempt }
func rerouteAttempt(a uint32) bool { return a == wire.SmartRerouteAttempt }

// P1: a fault that arrives while the dial is still routing must not move
// the half-built circuit under the dial (the dial's route on the router
// dropped from the path was never unrouted); the circuit moves once routed.
func TestDial_AFaultWhileRoutingMovesTheCircuitOnlyOnceRouted(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault func(n *testNet, id string)
	}{
		{"forward fault", func(n *testNet, id string) {
			n.setRouterCost("B", 500) // A>C is cheaper now
			n.fault("A", wire.ForwardFault, id)
		}},
		{"link fault", func(n *testNet, id string) { n.fault("B", wire.LinkFault, "bc") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := triangle(t)
			g := newGate()
			held := n.routers["B"].holdRoutes(g, dialAttempt)
			answer := n.dialAsync("A")
			id := <-held
			c.fault(n, id)
			n.routers["A"].barrier()
			n.routers["B"].barrier()
			g.open()
			if got := circuitID(t, <-answer); got != id {
				t.Fatalf("answered circuit %s, routed %s", got, id)
			}
			poll(t, "the circuit moves to A>C", func() bool { return slices.Equal(n.path(id), []string{"A", "C"}) })
			n.settled(id)
		})
	}
}

// P2: EndCircuit during a reroute ends the circuit on the old path and on
// the routers of the new one, and no Route of the move follows an Unroute.
func TestEndCircuit_DuringAMoveUnroutesTheNewPathToo(t *testing.T) {
	n := square(t)
	id := circuitID(t, n.dial("A"))
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "D"}) {
		t.Fatalf("path %v", p)
	}
	g := newGate()
	held := n.routers["C"].holdRoutes(g, rerouteAttempt)
	n.fault("B", wire.LinkFault, "bd")
	<-held
	if err := n.m.EndCircuit(id); err != nil {
		t.Fatalf("EndCircuit: %v", err)
	}
	g.open()
	n.settled(id)
	if n.path(id) != nil {
		t.Fatalf("the ended circuit is still listed, path %v", n.path(id))
	}
}

// A router of the new path that confirms its circuits during the move
// keeps the circuit's route.
func TestConfirmation_DuringAMoveKeepsTheNewPathsRoutes(t *testing.T) {
	n := square(t)
	id := circuitID(t, n.dial("A"))
	g := newGate()
	held := n.routers["C"].holdRoutes(g, rerouteAttempt)
	n.fault("B", wire.LinkFault, "bd")
	<-held
	n.routers["C"].confirm(id)
	n.routers["C"].barrier()
	if u := n.routers["C"].messages(wire.UnrouteType); len(u) > 0 {
		t.Errorf("router C, of the new path, was told to unroute the circuit it confirmed")
	}
	g.open()
	poll(t, "the circuit moves to A>C>D", func() bool { return slices.Equal(n.path(id), []string{"A", "C", "D"}) })
	n.settled(id)
}

// A successful move unroutes the routers that left the path.
func TestReroute_UnroutesTheRoutersThatLeftThePath(t *testing.T) {
	n := square(t)
	id := circuitID(t, n.dial("A"))
	n.fault("B", wire.LinkFault, "bd")
	poll(t, "the circuit moves to A>C>D", func() bool { return slices.Equal(n.path(id), []string{"A", "C", "D"}) })
	n.settled(id)
}

// A router of the path that leaves while the dial waits for its answer
// fails the attempt at once; the second attempt goes around it.
func TestDial_ARouterLeavingMidDialFailsTheAttemptAtOnce(t *testing.T) {
	n := triangle(t)
	n.routers["B"].setAnswer(func(string, uint32) routeReply { return routeReply{silent: true} })
	answer := n.dialAsync("A")
	id := n.routers["B"].firstRoute()
	n.routers["B"].leave()
	delete(n.routers, "B")
	if got := circuitID(t, answerWithin(t, answer, 5*time.Second)); got != id {
		t.Fatalf("answered circuit %s, routed %s", got, id)
	}
	if p := n.path(id); !slices.Equal(p, []string{"A", "C"}) {
		t.Fatalf("path %v", p)
	}
	n.settled(id)
}

// An end of the circuit that closes while the dial routes it ends it: the
// dial is refused and every router it routed unroutes it.
func TestDial_AnIngressFaultWhileRoutingEndsTheCircuit(t *testing.T) {
	n := triangle(t)
	g := newGate()
	held := n.routers["B"].holdRoutes(g, dialAttempt)
	answer := n.dialAsync("A")
	id := <-held
	n.fault("A", wire.IngressFault, id)
	n.routers["A"].barrier()
	g.open()
	if why := refused(t, answerWithin(t, answer, 5*time.Second)); !strings.Contains(why, "ended while it was routed") {
		t.Fatalf("refused: %s", why)
	}
	n.settled(id)
	if n.path(id) != nil {
		t.Fatal("the circuit is listed")
	}
}

// Close stops the moves under way (their waits for routers end with it)
// and waits for them.
func TestClose_StopsAndJoinsTheMovesUnderWay(t *testing.T) {
	n := square(t)
	id := circuitID(t, n.dial("A"))
	n.routers["C"].setAnswer(func(_ string, a uint32) routeReply { return routeReply{ok: true, silent: rerouteAttempt(a)} })
	n.fault("B", wire.LinkFault, "bd")
	poll(t, "router C gets the move's route", func() bool { return n.routers["C"].routed(id) })
	start := time.Now()
	n.m.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Close took %s", took)
	}
	if n.m.busy(id) {
		t.Fatal("the move goes on after Close returned")
	}
}

// A link fault moves the circuits over the link a few at a time per
// router, not all at once.
func TestReroute_MovesAreBoundedPerRouter(t *testing.T) {
	n := square(t)
	const circuits = 3 * movesPerRouter
	for i := 0; i < circuits; i++ {
		circuitID(t, n.dial("A"))
	}
	n.routers["C"].setAnswer(func(_ string, a uint32) routeReply { return routeReply{ok: true, silent: rerouteAttempt(a)} })
	n.fault("B", wire.LinkFault, "bd")
	poll(t, "router C gets moves' routes, the other moves queued", func() bool {
		waiting, _ := n.m.queued("moves/A")
		return len(n.routers["C"].messages(wire.RouteType)) >= movesPerRouter && waiting == circuits-movesPerRouter
	})
	if waiting, running := n.m.queued("moves/A"); running != movesPerRouter || waiting != circuits-movesPerRouter {
		t.Fatalf("moves of circuits entering at A: %d running, %d waiting", running, waiting)
	}
	if got := len(n.routers["C"].messages(wire.RouteType)); got != movesPerRouter {
		t.Fatalf("router C holds %d moves' routes at once, want %d", got, movesPerRouter)
	}
}

// A router that reads nothing does not stall the reader of another: the
// faults of B's circuits unroute them on the stalled S without waiting.
func TestFault_AStalledRouterDoesNotStallAnothersReader(t *testing.T) {
	n := newTestNet(t, func(c *Config) { c.Channel = ctrlchan.Options{QueueSize: 2, WriteTimeout: time.Minute} })
	b, s := n.addRouter("B"), n.addRouter("S")
	n.link("bs", "B", "S")
	n.terminator("t1", "S")
	var ids []string
	for i := 0; i < 8; i++ {
		ids = append(ids, circuitID(t, n.dial("B")))
	}
	s.stall()
	for _, id := range ids {
		n.fault("B", wire.IngressFault, id)
	}
	done := make(chan struct{})
	go func() {
		b.barrier()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("router B's reader waited for the stalled router S")
	}
	s.resume()
	for _, id := range ids {
		n.settled(id)
	}
}

// A router in the middle that refuses its route fails the attempt; the
// second attempt avoids the links its route named.
func TestDial_ARefusedRouteIsTriedAgainAroundItsLinks(t *testing.T) {
	n := triangle(t)
	n.routers["B"].setAnswer(func(string, uint32) routeReply { return routeReply{reason: "no link bc"} })
	id := circuitID(t, n.dial("A"))
	if p := n.path(id); !slices.Equal(p, []string{"A", "C"}) {
		t.Fatalf("path %v", p)
	}
	n.settled(id)
}

// Routers that do not answer in time fail the attempt; two such attempts
// refuse the dial, and every router routed is told to unroute.
func TestDial_RoutesThatTimeOutRefuseTheDial(t *testing.T) {
	n := line(t, func(c *Config) { c.RouteTimeout = 100 * time.Millisecond })
	n.routers["C"].setAnswer(func(string, uint32) routeReply { return routeReply{silent: true} })
	why := refused(t, n.dial("A"))
	// The egress did not answer: its terminator failed, and none is left.
	if !strings.Contains(why, "after 1 failed attempts") {
		t.Fatalf("refused: %s", why)
	}
	id := circuitOf(n.routers["C"].messages(wire.RouteType)[0])
	n.settled(id)
	// A late answer of the given-up dial is unrouted.
	late := ctrlchan.NewMessage(wire.RouteResultType, []byte(id))
	late.Headers.PutUint32(wire.RouteResultAttemptHeader, 0)
	late.Headers.PutBool(wire.RouteResultSuccessHeader, true)
	before := len(n.routers["C"].messages(wire.UnrouteType))
	n.routers["C"].send(late)
	poll(t, "a late route result is unrouted", func() bool { return len(n.routers["C"].messages(wire.UnrouteType)) == before+1 })
}

func TestDial_Refusals(t *testing.T) {
	n := line(t)
	bad := n.dialRequest()
	bad.Headers.PutString(wire.CreateCircuitReqSessionTokenHeader, "garbage")
	if r := n.routers["A"].request(bad, 5*time.Second); r.ContentType != wire.ErrorType {
		t.Fatalf("a bad session token: %d", r.ContentType)
	}
	none := ctrlchan.NewMessage(wire.CreateCircuitV2RequestType, nil)
	if why := refused(t, n.routers["A"].request(none, 5*time.Second)); !strings.Contains(why, "no session token") {
		t.Fatalf("no session token: %s", why)
	}
	// No terminator: refused.
	n2 := newTestNet(t)
	n2.addRouter("A")
	if why := refused(t, n2.dial("A")); !strings.Contains(why, "no terminators") {
		t.Fatalf("no terminators: %s", why)
	}
}

// Confirmations of circuits the node does not have are unrouted on the
// router that sent them, not their forward faults; EndCircuit of one is
// refused.
func TestConfirmationsOfUnknownCircuitsAreUnrouted_TheirForwardFaultsAreNot(t *testing.T) {
	n := line(t)
	a := n.routers["A"]
	a.confirm("ghost-1")
	n.fault("A", wire.ForwardFault, "ghost-2 ghost-3")
	a.barrier()
	got := map[string]bool{}
	for _, m := range a.messages(wire.UnrouteType) {
		got[circuitOf(m)] = true
	}
	// A forward fault of a circuit the node does not know is left to the
	// router's confirmation once idle: the node may have restarted, and
	// the fault be of a moment the circuit got over.
	if !got["ghost-1"] || got["ghost-2"] || got["ghost-3"] {
		t.Fatalf("unrouted %v", got)
	}
	if err := n.m.EndCircuit("ghost-1"); err != ErrNoCircuit {
		t.Fatalf("EndCircuit of an unknown circuit: %v", err)
	}
	// A live circuit's routers confirm it: nothing is unrouted.
	id := circuitID(t, n.dial("A"))
	for _, r := range n.routers {
		r.confirm(id)
		r.barrier()
	}
	n.settled(id)
	if err := n.m.EndCircuit(id); err != nil {
		t.Fatal(err)
	}
	n.settled(id)
}

// An end router that is gone (its grace passed) ends its circuits; one in
// the middle that is gone moves them around it.
func TestRouterGone_EndsOrMovesItsCircuits(t *testing.T) {
	n := triangle(t, withRouterGrace(50*time.Millisecond))
	id := circuitID(t, n.dial("A"))
	n.routers["B"].leave()
	delete(n.routers, "B")
	poll(t, "the circuit moves to A>C", func() bool { return slices.Equal(n.path(id), []string{"A", "C"}) })
	n.settled(id)
	n.routers["C"].leave()
	delete(n.routers, "C")
	poll(t, "the circuit ends", func() bool { return n.path(id) == nil })
	n.settled(id)
}

// Circuits move to a path that became cheaper, a few per cycle.
func TestSmartReroute_MovesToACheaperPath(t *testing.T) {
	n := square(t)
	n.routers["A"].r.ConnectedAt = time.Now().Add(-time.Minute) // no queued dial: not in doubt
	id := circuitID(t, n.dial("A"))
	n.smartNow() // nothing cheaper: nothing moves
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "D"}) {
		t.Fatalf("path %v", p)
	}
	n.setLatency("ac", 1)
	n.setLatency("cd", 1)
	n.setLatency("ab", 200)
	n.smartNow()
	if p := n.path(id); !slices.Equal(p, []string{"A", "C", "D"}) {
		t.Fatalf("path %v", p)
	}
	n.settled(id)
}

func (n *testNet) smartNow() { n.m.smartReroute() }

// An operator's link changes move the circuits: down takes them off it,
// removal tells its routers to close it.
func TestLinkChanges_MoveTheCircuits(t *testing.T) {
	n := square(t)
	id := circuitID(t, n.dial("A"))
	down := true
	if _, err := n.m.UpdateLink("bd", LinkChange{Down: &down}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the circuit moves to A>C>D", func() bool { return slices.Equal(n.path(id), []string{"A", "C", "D"}) })
	n.settled(id)
	n.m.RemoveLink("cd")
	poll(t, "no path: the circuit ends", func() bool { return n.path(id) == nil })
	n.settled(id)
	for _, r := range []string{"C", "D"} {
		n.routers[r].gotN(wire.FaultType, 1) // told to close the removed link
	}
	n.m.RemoveLink("unknown") // every router is told
	poll(t, "every router is told of the unknown link", func() bool { return len(n.routers["A"].messages(wire.FaultType)) > 0 })
}

// Routers report their links, the links' connections and latencies, and
// ask the node to verify a link's dialer.
func TestLinkMessages(t *testing.T) {
	n := newTestNet(t)
	a, b := n.addRouter("A"), n.addRouter("B")
	link := pb(nil).str(1, "l1").str(2, "B").str(3, "tls").str(5, "tls:b:1").uint(6, 3)
	a.send(ctrlchan.NewMessage(wire.RouterLinksType, pb(nil).msg(1, link)))
	a.send(ctrlchan.NewMessage(wire.LinkStateType, pb(nil).str(1, "l1").uint(2, 3)))
	a.barrier()
	if ls := n.m.Links(); len(ls) != 1 || ls[0].ID != "l1" || ls[0].DstRouterID != "B" || ls[0].Iteration != 3 || !n.m.LinkUsable(ls[0]) {
		t.Fatalf("links %+v", ls)
	}
	for _, c := range []struct {
		fp string
		ok bool
	}{{"fp-a", true}, {"F:P-A", true}, {"fp-b", false}} {
		r := b.request(ctrlchan.NewMessage(wire.VerifyRouterType, pb(nil).str(1, "A").str(2, c.fp)), 5*time.Second)
		if ok, why := r.Result(); ok != c.ok {
			t.Errorf("fingerprint %s: %v %s", c.fp, ok, why)
		}
	}
	// A fault of the link from one end: the link goes, the other end is told.
	n.fault("A", wire.LinkFault, "l1")
	a.barrier()
	if len(n.m.Links()) != 0 {
		t.Fatal("the faulted link stays")
	}
	b.gotN(wire.FaultType, 1)
}

// The ingress router that leaves while its dial routes: the dial gives up
// at once and every other router it routed unroutes the circuit.
func TestDial_TheIngressLeavingMidDialUnroutesTheOthers(t *testing.T) {
	n := line(t)
	g := newGate()
	held := n.routers["B"].holdRoutes(g, dialAttempt)
	n.dialAsync("A")
	id := <-held
	n.routers["A"].leave()
	delete(n.routers, "A")
	g.open()
	poll(t, "the dial gives up", func() bool { return !n.m.busy(id) })
	n.settled(id)
}

// Each kind of fault of a live circuit: an end that closes ends it, a
// router that cannot forward moves it, a link that fails (or is a
// duplicate) moves the circuits over it.
func TestFault_EveryKindOnALiveCircuit(t *testing.T) {
	for _, c := range []struct {
		name     string
		fault    func(n *testNet, id string)
		wantPath []string // nil: ended
	}{
		{"ingress", func(n *testNet, id string) { n.fault("A", wire.IngressFault, id) }, nil},
		{"egress", func(n *testNet, id string) { n.fault("D", wire.EgressFault, id) }, nil},
		{"forward", func(n *testNet, id string) {
			n.setRouterCost("B", 500)
			n.fault("A", wire.ForwardFault, id)
		}, []string{"A", "C", "D"}},
		{"link", func(n *testNet, id string) { n.fault("B", wire.LinkFault, "bd") }, []string{"A", "C", "D"}},
		{"link duplicate", func(n *testNet, id string) { n.fault("B", wire.LinkDuplicate, "bd") }, []string{"A", "C", "D"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := square(t)
			id := circuitID(t, n.dial("A"))
			c.fault(n, id)
			if c.wantPath == nil {
				poll(t, "the circuit ends", func() bool { return n.path(id) == nil })
			} else {
				poll(t, "the circuit moves", func() bool { return slices.Equal(n.path(id), c.wantPath) })
			}
			n.settled(id)
		})
	}
}

// A circuit within one router: a forward fault ends it; an unknown-owner
// forward fault of a circuit the node does not have changes nothing.
func TestFault_OnAOneRouterCircuit(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	n.terminator("t1", "A")
	id := circuitID(t, n.dial("A"))
	n.fault("A", wire.UnknownOwnerForwardFault, "ghost")
	a.barrier()
	if len(a.messages(wire.UnrouteType)) != 0 {
		t.Fatal("an unknown-owner fault was unrouted")
	}
	n.fault("A", wire.ForwardFault, id)
	poll(t, "the circuit ends", func() bool { return n.path(id) == nil })
	n.settled(id)
}

// A router that reads nothing holds up neither the routers that connect
// after it (it is told of their link listeners) nor the end of the
// circuits of a router that leaves (it is told that one left): each router
// is told of its peers on a queue of its own.
func TestPeers_AStalledRouterHoldsUpNoArrivalOrDeparture(t *testing.T) {
	n := newTestNet(t, withRouterGrace(50*time.Millisecond),
		func(c *Config) { c.Channel = ctrlchan.Options{QueueSize: 2, WriteTimeout: 20 * time.Second} })
	s := n.addRouter("S")
	a := n.addRouter("A")
	n.terminator("t1", "A")
	id := circuitID(t, n.dial("A"))
	s.stall()
	for _, r := range []string{"B", "C", "D", "E", "F"} {
		n.addRouter(r)
	}
	a.leave()
	poll(t, "the circuit of A, which is gone, ended", func() bool { c, _ := n.m.circuits.get(id); return c == nil })
	s.resume()
	poll(t, "S told of every arrival and departure", func() bool {
		return len(s.messages(wire.PeerStateChangesType)) >= 7
	})
}

// A node that shuts down leaves the routers their circuits (a rolling
// restart must not cut the streams of the circuits it routed): closing
// every router's channel ends none of them and unroutes none, as a killed
// node would not. Before, each closed channel counted as its router
// leaving, and the circuits it was an end of were unrouted on the routers
// whose channels were still open.
func TestClose_LeavesTheRoutersTheirCircuits(t *testing.T) {
	n := line(t)
	id := circuitID(t, n.dial("A"))
	n.settled(id)
	n.m.Close()
	if p := n.path(id); !slices.Equal(p, []string{"A", "B", "C"}) {
		t.Fatalf("after Close the circuit's path is %v: it was ended", p)
	}
	for _, rid := range []string{"A", "B", "C"} {
		if got := n.routers[rid].messages(wire.UnrouteType); len(got) != 0 {
			t.Fatalf("router %s was sent %d Unroutes as the node shut down", rid, len(got))
		}
	}
}

// An end of a circuit the node does not know (it restarted, or lost its
// routers' channels, and forgot it) that closes has every router drop it:
// the other end is not left waiting on a circuit nobody will end. Found by
// TestDataPlaneChaos: a host killed after its circuits' node had been cut
// off from the routers left the client's stream hanging.
func TestFault_AnEndOfAnUnknownCircuitClosedIsUnroutedEverywhere(t *testing.T) {
	n := line(t)
	n.fault("C", wire.EgressFault, "forgotten-1")
	n.fault("A", wire.IngressFault, "forgotten-2")
	for _, rid := range []string{"A", "B", "C"} {
		r := n.routers[rid]
		poll(t, "router "+rid+" told to drop both circuits", func() bool {
			got := map[string]bool{}
			for _, m := range r.messages(wire.UnrouteType) {
				got[circuitOf(m)] = true
			}
			return got["forgotten-1"] && got["forgotten-2"]
		})
	}
}
