package dataplane

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/dpevent"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"
)

// withEvents gives the Manager a data-plane event log.
func withEvents(l *dpevent.Log) netOption { return func(c *Config) { c.Events = l } }

// events are the kept events that match ns and action.
func events(l *dpevent.Log, ns, action string) []*dpevent.Event {
	var out []*dpevent.Event
	l.After(0, func(e *dpevent.Event) bool {
		if e.Namespace == ns && e.Action == action {
			out = append(out, e)
		}
		return true
	})
	return out
}

func waitEvents(t *testing.T, l *dpevent.Log, ns, action string, n int) []*dpevent.Event {
	t.Helper()
	poll(t, fmt.Sprintf("%d %s.%s events", n, ns, action), func() bool { return len(events(l, ns, action)) >= n })
	return events(l, ns, action)
}

func TestDataPlaneEvents_CircuitCreatedReroutedEnded(t *testing.T) {
	l := dpevent.New(dpevent.Config{NodeID: "node-1"})
	n := newTestNet(t, withEvents(l), withRouterGrace(50*time.Millisecond))
	for _, id := range []string{"A", "B", "C"} {
		n.addRouter(id)
	}
	n.link("ab", "A", "B")
	n.link("bc", "B", "C")
	n.link("ac", "A", "C")
	n.setLatency("ab", 10)
	n.setLatency("bc", 10)
	n.setLatency("ac", 100)
	n.terminator("t1", "C")
	id := circuitID(t, n.dial("A"))
	c := waitEvents(t, l, dpevent.Circuit, dpevent.Created, 1)[0]
	if c.CircuitID != id || c.IdentityName != "client" || c.ServiceName != "svc" || c.TerminatorID != "t1" || c.NodeID != "node-1" ||
		!slices.Equal(c.Path, []string{"A", "B", "C"}) || c.SetupMillis == nil {
		t.Fatalf("created %+v", c)
	}
	// B is gone: the circuit moves to A>C; C is gone: it ends.
	n.routers["B"].leave()
	delete(n.routers, "B")
	r := waitEvents(t, l, dpevent.Circuit, dpevent.Rerouted, 1)[0]
	if r.CircuitID != id || !slices.Equal(r.Path, []string{"A", "C"}) || !slices.Equal(r.PreviousPath, []string{"A", "B", "C"}) || !strings.Contains(r.Reason, "B") {
		t.Fatalf("rerouted %+v", r)
	}
	n.settled(id)
	n.routers["C"].leave()
	delete(n.routers, "C")
	e := waitEvents(t, l, dpevent.Circuit, dpevent.Ended, 1)[0]
	if e.CircuitID != id || e.DurationMillis == nil || e.BytesIn == nil || *e.BytesIn != 0 || !strings.Contains(e.Reason, "router C") {
		t.Fatalf("ended %+v", e)
	}
	// The routers leaving are router events; their links went down.
	if got := waitEvents(t, l, dpevent.Router, dpevent.Disconnected, 2); got[0].RouterID != "B" {
		t.Fatalf("disconnected %+v", got[0])
	}
}

func TestDataPlaneEvents_FailureCauses(t *testing.T) {
	// No terminator.
	l := dpevent.New(dpevent.Config{})
	n := newTestNet(t, withEvents(l))
	n.addRouter("A")
	refused(t, n.dial("A"))
	if f := waitEvents(t, l, dpevent.Circuit, dpevent.Failed, 1)[0]; f.Cause != dpevent.CauseNoTerminator || f.IdentityID != "client" || f.ServiceID != "svc" || f.Reason == "" {
		t.Fatalf("no terminator: %+v", f)
	}
	// No path: the terminator's router has no link to the ingress.
	n.addRouter("B")
	n.terminator("t1", "B")
	refused(t, n.dial("A"))
	if f := waitEvents(t, l, dpevent.Circuit, dpevent.Failed, 2)[1]; f.Cause != dpevent.CauseNoPath {
		t.Fatalf("no path: %+v", f)
	}
	// Access refused: a session token that is not one.
	bad := n.dialRequest()
	bad.Headers.PutString(wire.CreateCircuitReqSessionTokenHeader, "garbage")
	n.routers["A"].request(bad, 5*time.Second)
	if f := waitEvents(t, l, dpevent.Circuit, dpevent.Failed, 3)[2]; f.Cause != dpevent.CauseAccessRefused || f.RouterID != "A" {
		t.Fatalf("access refused: %+v", f)
	}
	// A router that refuses the route.
	n.link("ab", "A", "B")
	n.routers["B"].setAnswer(func(string, uint32) routeReply { return routeReply{reason: "dial refused by the host"} })
	refused(t, n.dial("A"))
	if f := waitEvents(t, l, dpevent.Circuit, dpevent.Failed, 4)[3]; f.Cause != dpevent.CauseRouterError {
		t.Fatalf("router error: %+v", f)
	}
	// Each counted by its cause.
	for _, c := range []string{dpevent.CauseNoTerminator, dpevent.CauseNoPath, dpevent.CauseAccessRefused, dpevent.CauseRouterError} {
		if got := counterValue(t, n.m.metrics.failures, "cause", c); got != 1 {
			t.Fatalf("edgectl_circuit_failures_total{cause=%q} = %v, want 1", c, got)
		}
	}
}

func TestDataPlaneEvents_UsageOfThisNodesCircuits(t *testing.T) {
	l := dpevent.New(dpevent.Config{})
	n := newTestNet(t, withEvents(l))
	a := n.addRouter("A")
	n.terminator("t1", "A")
	id := circuitID(t, n.dial("A"))
	report := func(ids ...string) {
		buckets := map[string]wire.UsageBucket{}
		for _, c := range ids {
			buckets[c] = wire.UsageBucket{Values: map[string]uint64{"ingress.rx": 1000, "egress.rx": 400, "ingress.tx": 400, "egress.tx": 1000}, Tags: map[string]string{"hostId": "h"}}
		}
		a.send(ctrlchan.NewMessage(wire.MetricsType, wire.EncodeUsage("A", []wire.UsageCounter{{IntervalStartUTC: time.Now().Unix(), IntervalLength: 1, Buckets: buckets}})))
		a.barrier()
	}
	report(id, "another-nodes-circuit")
	u := waitEvents(t, l, dpevent.Usage, dpevent.UsageCircuit, 1)
	if len(u) != 1 || u[0].CircuitID != id || *u[0].BytesIn != 1000 || *u[0].BytesOut != 400 || u[0].Usage["egress.tx"] != 1000 ||
		u[0].IdentityName != "client" || u[0].ServiceName != "svc" || u[0].RouterID != "A" || u[0].IntervalSeconds != 1 || u[0].HostID != "h" {
		t.Fatalf("usage %+v (only this node's circuit)", u)
	}
	if byID := events(l, dpevent.Usage, dpevent.UsageIdentity); len(byID) != 1 || byID[0].IdentityID != "client" || *byID[0].BytesIn != 1000 || byID[0].Circuits != 1 {
		t.Fatalf("usage by identity %+v", byID)
	}
	if bySvc := events(l, dpevent.Usage, dpevent.UsageService); len(bySvc) != 1 || bySvc[0].ServiceName != "svc" || *bySvc[0].BytesOut != 400 {
		t.Fatalf("usage by service %+v", bySvc)
	}
	report(id)
	if in, out := n.m.CircuitBytes(id); in != 2000 || out != 800 {
		t.Fatalf("the live circuit's bytes: %d in, %d out", in, out)
	}
	if in, out := counterValue(t, n.m.metrics.serviceBytes, "service_id", "svc", "direction", "in"), counterValue(t, n.m.metrics.serviceBytes, "service_id", "svc", "direction", "out"); in != 2000 || out != 800 {
		t.Fatalf("edgectl_service_bytes_total of svc: %v in, %v out (only this node's circuit)", in, out)
	}
	if err := n.m.EndCircuit(id); err != nil {
		t.Fatal(err)
	}
	e := waitEvents(t, l, dpevent.Circuit, dpevent.Ended, 1)[0]
	if *e.BytesIn != 2000 || *e.BytesOut != 800 {
		t.Fatalf("the ended circuit's bytes: %d %d", *e.BytesIn, *e.BytesOut)
	}
	// The report of its last interval comes after its end: still its usage.
	report(id)
	if u := events(l, dpevent.Usage, dpevent.UsageCircuit); len(u) != 3 || u[2].IdentityName != "client" {
		t.Fatalf("usage after the end %+v", u)
	}
}

func TestDataPlaneEvents_LinksAndTerminators(t *testing.T) {
	l := dpevent.New(dpevent.Config{})
	n := newTestNet(t, withEvents(l))
	a, _ := n.addRouter("A"), n.addRouter("B")
	link := pb(nil).str(1, "l1").str(2, "B").str(3, "tls").str(5, "tls:b:1").uint(6, 3)
	a.send(ctrlchan.NewMessage(wire.RouterLinksType, pb(nil).msg(1, link)))
	a.barrier()
	if up := waitEvents(t, l, dpevent.Link, dpevent.Up, 1)[0]; up.LinkID != "l1" || up.SrcRouterID != "A" || up.DstRouterID != "B" || up.Protocol != "tls" {
		t.Fatalf("link up %+v", up)
	}
	n.fault("A", wire.LinkFault, "l1")
	a.barrier()
	if down := waitEvents(t, l, dpevent.Link, dpevent.Down, 1)[0]; down.LinkID != "l1" || !strings.Contains(down.Reason, "fault") {
		t.Fatalf("link down %+v", down)
	}
	// Terminators, from the model's changes as the FSM hands them over.
	t1 := &store.Terminator{Base: store.Base{ID: "t1"}, ServiceID: "svc", RouterID: "A", Binding: "edge", Address: "x", HostID: "h1"}
	n.m.Applied([]fsm.Changes{{Index: 1001, Changes: []store.Change{{Kind: store.KindTerminator, New: t1}}},
		{Index: 1002, Changes: []store.Change{{Kind: store.KindTerminator, Old: t1, New: t1}}}, // an update: no event
		{Index: 1003, Changes: []store.Change{{Kind: store.KindTerminator, Old: t1}}}})
	waitEvents(t, l, dpevent.Terminator, dpevent.Removed, 1)
	c, r := events(l, dpevent.Terminator, dpevent.Created), events(l, dpevent.Terminator, dpevent.Removed)
	if len(c) != 1 || len(r) != 1 || c[0].TerminatorID != "t1" || c[0].ServiceName != "svc" || c[0].HostID != "h1" || r[0].TerminatorID != "t1" {
		t.Fatalf("terminator events %+v %+v", c, r)
	}
}

func TestDataPlaneEvents_NoneWithoutALog(t *testing.T) {
	n := newTestNet(t) // Config.Events nil: every site is a no-op
	n.addRouter("A")
	refused(t, n.dial("A"))
	// The metrics count without the events.
	if got := counterValue(t, n.m.metrics.failures, "cause", dpevent.CauseNoTerminator); got != 1 {
		t.Fatalf("a failure without the event log counted %v times", got)
	}
}
