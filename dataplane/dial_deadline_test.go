package dataplane

import (
	"slices"
	"strings"
	"testing"
	"time"

	"edgectl/dataplane/wire"

	"google.golang.org/protobuf/encoding/protowire"
)

// The dial's deadline (Config.DialTimeout), from the data-plane chaos
// (issue 46): a link cut, and a host that accepts a dial only seconds
// later, made the node answer a dial after its client had given up; the
// circuit, routed end to end and never started, held the host's SDK (it
// waits for a circuit's start before it accepts the next dial), and the
// service took no new dial for minutes.

// lineWith is line (A–B–C, a terminator on C) with the Config changed.
func lineWith(t *testing.T, opts ...netOption) *testNet {
	n := newTestNet(t, opts...)
	for _, id := range []string{"A", "B", "C"} {
		n.addRouter(id)
	}
	n.link("ab", "A", "B")
	n.link("bc", "B", "C")
	n.terminator("t1", "C")
	return n
}

// routeTimeoutOf is the time a Route gives its router (field 6).
func routeTimeoutOf(b []byte) time.Duration {
	var d time.Duration
	_ = wire.Fields(b, func(num protowire.Number, v uint64, _ []byte) error {
		if num == 6 {
			d = time.Duration(v)
		}
		return nil
	})
	return d
}

// An egress router whose host answers after the dial's deadline: the dial
// is refused by the deadline (not answered when the host answers, after
// its client gave up), the routes told the routers no more time than the
// deadline, and the late success is unrouted: no circuit is left.
func TestDial_AHostAnsweringAfterTheDeadlineLeavesNoCircuit(t *testing.T) {
	const dialTimeout = 500 * time.Millisecond
	n := lineWith(t, func(c *Config) { c.DialTimeout = dialTimeout })
	g := newGate()
	held := n.routers["C"].holdRoutes(g, func(uint32) bool { return true })
	defer g.open()
	start := time.Now()
	answer := n.dialAsync("A")
	var id string
	select {
	case id = <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("router C got no route")
	}
	for _, r := range []string{"A", "B", "C"} {
		poll(t, "router "+r+" gets its route", func() bool { return len(n.routers[r].messages(wire.RouteType)) > 0 })
		if d := routeTimeoutOf(n.routers[r].messages(wire.RouteType)[0].Body); d <= 0 || d > dialTimeout {
			t.Errorf("router %s's route gives it %s (the dial's deadline: %s)", r, d, dialTimeout)
		}
	}
	// The default route timeout (10 s) is far longer: the answer comes at
	// the dial's deadline.
	why := refused(t, answerWithin(t, answer, 5*time.Second))
	if !strings.Contains(why, "within") {
		t.Errorf("refused: %s", why)
	}
	if took := time.Since(start); took < dialTimeout {
		t.Errorf("refused after %s, before the deadline %s", took, dialTimeout)
	}
	g.open() // the host answers now: its late success is unrouted
	poll(t, "router C unroutes the circuit", func() bool {
		for _, m := range n.routers["C"].messages(wire.UnrouteType) {
			if circuitOf(m) == id {
				return true
			}
		}
		return false
	})
	n.routers["C"].barrier()
	if cs := n.m.Circuits(); len(cs) != 0 {
		t.Fatalf("the node keeps %d circuits: %+v", len(cs), cs)
	}
	// Every route of every attempt went out with the deadline's time left.
	for _, r := range []string{"A", "B", "C"} {
		for _, m := range n.routers[r].messages(wire.RouteType) {
			if d := routeTimeoutOf(m.Body); d > dialTimeout {
				t.Errorf("router %s: a route gives it %s", r, d)
			}
		}
	}
}

// Two attempts share the deadline: a first attempt that takes most of it
// leaves the second only what is left.
func TestDial_TheSecondAttemptHasOnlyTheTimeLeft(t *testing.T) {
	const dialTimeout = 800 * time.Millisecond
	n := newTestNet(t, func(c *Config) { c.DialTimeout = dialTimeout; c.RouteTimeout = 600 * time.Millisecond })
	n.addRouter("A")
	n.terminator("t1", "A")
	n.terminator("t2", "A")
	n.routers["A"].setAnswer(func(string, uint32) routeReply { return routeReply{silent: true} })
	why := refused(t, n.dial("A"))
	if !strings.Contains(why, "within") {
		t.Errorf("refused: %s", why)
	}
	routes := n.routers["A"].messages(wire.RouteType)
	if len(routes) != 2 {
		t.Fatalf("router A got %d routes, want 2 attempts", len(routes))
	}
	// The first waited its 600 ms: the second has at most 200 ms.
	if d := routeTimeoutOf(routes[1].Body); d <= 0 || d > dialTimeout-600*time.Millisecond {
		t.Errorf("the second attempt's route gives router A %s, more than the time left", d)
	}
}

// A router of the path that refuses its route while the egress router is
// still dialing the host: the attempt's Unroute would reach the egress
// while it dialed the host, which it then kept connected for a circuit
// that never starts (issue 46: `ziti tunnel host` took no other dial). The
// second attempt goes around the refused link and ends on the same egress
// router and terminator: that router is not told to unroute at all (an
// Unroute there, and the host's end of the first attempt closing, took the
// second attempt's dial of the same circuit with it: OpenZiti's routers
// know a circuit by its id), and the second route gives it the same egress
// address, where it finds its dial of the host.
func TestDial_AnEgressThatAnsweredIsKeptForTheNextAttemptToTheSameHost(t *testing.T) {
	n := triangle(t)
	g := newGate()
	held := n.routers["C"].holdRoutes(g, func(a uint32) bool { return a == 0 })
	defer g.open()
	n.routers["B"].setAnswer(func(_ string, a uint32) routeReply {
		if a == 0 {
			return routeReply{reason: "invalid link destination bc"}
		}
		return routeReply{ok: true}
	})
	answer := n.dialAsync("A")
	var id string
	select {
	case id = <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("router C got no route")
	}
	poll(t, "router B refuses the first attempt", func() bool { return len(n.routers["B"].messages(wire.RouteType)) > 0 })
	if pollUntil(time.Second, func() bool { return unroutedOn(n, "C", id) }) {
		t.Fatal("router C was told to unroute the attempt while its route (its dial of the host) was under way")
	}
	g.open()
	if got := circuitID(t, answerWithin(t, answer, 5*time.Second)); got != id {
		t.Fatalf("answered circuit %s, routed %s", got, id)
	}
	if p := n.path(id); !slices.Equal(p, []string{"A", "C"}) {
		t.Fatalf("path %v", p)
	}
	n.settled(id)
	if unroutedOn(n, "C", id) {
		t.Fatal("router C, the egress of both attempts, was told to unroute the circuit")
	}
	if !unroutedOn(n, "B", id) {
		t.Fatal("router B, on the first attempt's path only, was not told to unroute it")
	}
	routes := n.routers["C"].messages(wire.RouteType)
	if len(routes) != 2 {
		t.Fatalf("router C got %d routes, want one per attempt", len(routes))
	}
	first, second := egressAddressOf(routes[0].Body), egressAddressOf(routes[1].Body)
	if first == "" || first != second {
		t.Fatalf("router C's egress address: %q in the first attempt, %q in the second (want the same)", first, second)
	}
}

// An egress router held after a failed attempt is unrouted when the next
// attempt ends elsewhere: in the square (A–B–D cheaper than A–C–D, t1 on
// D) with a second terminator on C, B refuses the first attempt's link
// B–D while D answers, and the second attempt takes t2 on C.
func TestDial_AnEgressLeftByTheNextAttemptIsUnrouted(t *testing.T) {
	n := square(t)
	n.terminator("t2", "C")
	n.routers["B"].setAnswer(func(_ string, a uint32) routeReply {
		if a == 0 {
			return routeReply{reason: "invalid link destination bd"}
		}
		return routeReply{ok: true}
	})
	id := circuitID(t, n.dial("A"))
	n.settled(id)
	if p := n.path(id); !slices.Equal(p, []string{"A", "C"}) {
		t.Fatalf("path %v, want A, C (t2)", p)
	}
	if len(n.routers["D"].messages(wire.RouteType)) != 1 {
		t.Fatalf("router D got %d routes, want the first attempt's", len(n.routers["D"].messages(wire.RouteType)))
	}
	if !unroutedOn(n, "D", id) {
		t.Error("router D, the egress of the first attempt only, was not told to unroute")
	}
	if unroutedOn(n, "C", id) {
		t.Error("router C, the egress of the circuit, was told to unroute it")
	}
}

// unroutedOn says whether router r got an Unroute of circuit id.
func unroutedOn(n *testNet, r, id string) bool {
	for _, m := range n.routers[r].messages(wire.UnrouteType) {
		if circuitOf(m) == id {
			return true
		}
	}
	return false
}

// egressAddressOf is the address (field 2) of a Route's egress (field 3).
func egressAddressOf(b []byte) string {
	var addr string
	_ = wire.Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num == 3 {
			_ = wire.Fields(raw, func(num protowire.Number, _ uint64, raw []byte) error {
				if num == 2 {
					addr = string(raw)
				}
				return nil
			})
		}
		return nil
	})
	return addr
}

// A node that stops (Close) while a dial is being routed lets it finish
// before it closes the routers' channels: cut off, the dial's routes would
// stay on the routers with no node to take them back, the egress router's
// dial of the host with them (the host's SDK waits for that circuit's
// start: a `ziti tunnel host` accepts no other dial meanwhile).
func TestClose_LetsADialBeingRoutedFinish(t *testing.T) {
	n := lineWith(t)
	g := newGate()
	held := n.routers["C"].holdRoutes(g, func(uint32) bool { return true })
	defer g.open()
	answer := n.dialAsync("A")
	select {
	case <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("router C got no route")
	}
	closed := make(chan struct{})
	go func() { n.m.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a dial was being routed")
	case <-time.After(300 * time.Millisecond):
	}
	g.open()
	circuitID(t, answerWithin(t, answer, 5*time.Second))
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return once the dial was answered")
	}
}
