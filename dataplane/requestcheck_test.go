package dataplane

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"
)

// proposal is one command the node proposed to Raft.
type proposal struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// proposals are the commands proposed from the from-th on, but the
// reports of routers that connect (their hostname), which the edge sync
// writes in the background.
func (n *testNet) proposals(from int) []proposal {
	n.t.Helper()
	n.proposer.mu.Lock()
	defer n.proposer.mu.Unlock()
	var out []proposal
	for _, raw := range n.proposer.cmds[from:] {
		var p proposal
		if err := json.Unmarshal(raw, &p); err != nil {
			n.t.Fatalf("a proposal that is not an envelope: %s", raw)
		}
		if p.Type != string(fsm.CmdRouterReport) {
			out = append(out, p)
		}
	}
	return out
}

func (n *testNet) proposedCount() int {
	n.proposer.mu.Lock()
	defer n.proposer.mu.Unlock()
	return len(n.proposer.cmds)
}

// onlyAuditEvents fails unless every proposal from the from-th on is a
// router event (the event log), and returns the requests of the refused
// ones ("request/reason").
func (n *testNet) onlyAuditEvents(from int) []string {
	n.t.Helper()
	var refused []string
	for _, p := range n.proposals(from) {
		if p.Type != string(fsm.CmdRouterEvent) {
			n.t.Fatalf("a refused request was written to Raft: %s %s", p.Type, p.Payload)
		}
		var ev fsm.RouterEvent
		_ = json.Unmarshal(p.Payload, &ev)
		if ev.Action == fsm.RouterRefused {
			refused = append(refused, ev.RouterID+":"+ev.Detail["request"].(string)+"/"+ev.Detail["reason"].(string))
		}
	}
	slices.Sort(refused)
	return refused
}

// waitAudit waits for the refused-request events want (router:request/reason,
// sorted) to be proposed from the from-th proposal on, and for no other
// write.
func (n *testNet) waitAudit(from int, want []string) {
	n.t.Helper()
	if !pollUntil(10*time.Second, func() bool { return slices.Equal(n.onlyAuditEvents(from), want) }) {
		n.t.Fatalf("audit events %v, want %v", n.onlyAuditEvents(from), want)
	}
}

func (n *testNet) refusedCount(request, reason string) float64 {
	n.t.Helper()
	return counterValue(n.t, n.m.metrics.requestsRefused, "request", request, "reason", reason)
}

// edgeErrorCode is the edge error code of a reply (failing if it is no
// edge error).
func edgeErrorCode(t *testing.T, what string, r *ctrlchan.Message) uint32 {
	t.Helper()
	if r.ContentType != wire.ErrorType {
		t.Fatalf("%s: answered with content type %d, not an edge error", what, r.ContentType)
	}
	code, _ := r.Headers.Uint32(wire.ErrorCodeHeader)
	return code
}

// TestRequests_AnotherRoutersTerminatorIsRefusedUnwritten: router A, with
// its client's valid Bind session, asks to update, remove, report the
// health of, take the address of, and batch-remove router B's terminator.
// Each is refused with the protocol's answer (edge error
// INVALID_TERMINATOR, result FailedIdConflict, a failed channel result),
// nothing but audit events is written to Raft, the terminator is
// unchanged, and each refusal is counted.
func TestRequests_AnotherRoutersTerminatorIsRefusedUnwritten(t *testing.T) {
	n := newTestNet(t)
	a, b := n.addRouter("A"), n.addRouter("B")
	bind := n.bindSession()
	if res, text := createTerminator(t, b, "tb", bind, n.apiSession, 3); res != wire.TerminatorCreated {
		t.Fatalf("B's terminator: %d %s", res, text)
	}
	from := n.proposedCount()

	upd := pb(nil).str(1, bind).str(3, "tb").uint(4, 9).uint(5, 2).uint(6, 1).uint(7, 1).str(8, n.apiSession)
	if code := edgeErrorCode(t, "update", a.request(ctrlchan.NewMessage(wire.UpdateTerminatorRequestType, upd), 5*time.Second)); code != wire.ErrInvalidTerminator {
		t.Errorf("update: code %d, want %d", code, wire.ErrInvalidTerminator)
	}
	rm := pb(nil).str(1, bind).str(3, "tb").str(4, n.apiSession)
	if code := edgeErrorCode(t, "remove", a.request(ctrlchan.NewMessage(wire.RemoveTerminatorRequestType, rm), 5*time.Second)); code != wire.ErrInvalidTerminator {
		t.Errorf("remove: code %d, want %d", code, wire.ErrInvalidTerminator)
	}
	a.send(ctrlchan.NewMessage(wire.HealthEventType, pb(nil).str(1, bind).str(3, "tb").uint(4, 0).str(5, n.apiSession)))
	if res, text := createTerminator(t, a, "tb", bind, n.apiSession, 1); res != wire.TerminatorIDConflict || !strings.Contains(text, "different router") {
		t.Errorf("create at B's address: %d %q, want %d", res, text, wire.TerminatorIDConflict)
	}
	batch := a.request(ctrlchan.NewMessage(wire.RemoveTerminatorsRequestType, pb(nil).str(1, "tb")), 5*time.Second)
	if ok, _ := batch.Headers.Bool(ctrlchan.HeaderResultSuccess); batch.ContentType != ctrlchan.ContentResult || ok {
		t.Errorf("batch remove: content type %d success %v, want a failed result", batch.ContentType, ok)
	}

	poll(t, "the health event counted", func() bool { return n.refusedCount(reqHealthEvent, whyAnotherRouter) == 1 })
	for _, req := range []string{reqUpdateTerminator, reqRemoveTerminator, reqCreateTerminator, reqRemoveTerminators} {
		if got := n.refusedCount(req, whyAnotherRouter); got != 1 {
			t.Errorf("refused %s/%s = %v, want 1", req, whyAnotherRouter, got)
		}
	}
	n.waitAudit(from, []string{"A:create_terminator/another_router", "A:health_event/another_router",
		"A:remove_terminator/another_router", "A:remove_terminators/another_router", "A:update_terminator/another_router"})
	term, err := store.GetAs[*store.Terminator](n.s.Read(), store.KindTerminator, "tb")
	if err != nil || term.RouterID != "B" || term.Cost != 3 {
		t.Fatalf("B's terminator after A's requests: %+v %v", term, err)
	}

	// Again: counted every time, audited once a minute per router, request and reason.
	_ = a.request(ctrlchan.NewMessage(wire.UpdateTerminatorRequestType, upd), 5*time.Second)
	if got := n.refusedCount(reqUpdateTerminator, whyAnotherRouter); got != 2 {
		t.Errorf("refused update twice: %v", got)
	}
	a.barrier()
	if got := len(n.onlyAuditEvents(from)); got != 5 {
		t.Errorf("%d audit events after a repeat, want 5", got)
	}
}

// TestRequests_ATerminatorForAServiceTheHostMayNotBindIsRefused: a Bind
// session whose identity no service policy gives Bind on the service (a
// session left over, or one forged into the model) makes no terminator:
// FailedOther, nothing proposed, counted.
func TestRequests_ATerminatorForAServiceTheHostMayNotBindIsRefused(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	tok := n.sessionFor("bind-nopolicy", "svc", "Bind")
	from := n.proposedCount()
	if res, text := createTerminator(t, a, "ta", tok, n.apiSession, 1); res != wire.TerminatorFailed || !strings.Contains(text, "may not Bind") {
		t.Fatalf("create: %d %q, want %d (may not Bind)", res, text, wire.TerminatorFailed)
	}
	if got := n.refusedCount(reqCreateTerminator, whyMayNotBind); got != 1 {
		t.Errorf("refused create_terminator/may_not_bind = %v, want 1", got)
	}
	a.barrier()
	if p := n.proposals(from); len(p) != 0 {
		t.Fatalf("proposed %v", p)
	}
	if _, err := n.s.Read().Get(store.KindTerminator, "ta"); err == nil {
		t.Fatal("the terminator was made")
	}
}

// TestRequests_AnotherRoutersCircuitAndLinkAreLeftAlone: router C, on no
// path of the circuit A>B, sends its ingress, egress and forward faults,
// a route result and a confirmation naming it, and a fault of link A–B.
// The circuit stays live on its path with no unroute, the link stays,
// nothing but audit events is written, every message is counted.
func TestRequests_AnotherRoutersCircuitAndLinkAreLeftAlone(t *testing.T) {
	n := newTestNet(t).lineTo("B")
	id := circuitID(t, n.dial("A"))
	n.settled(id)
	from := n.proposedCount()

	c := n.routers["C"]
	n.fault("C", wire.IngressFault, id)
	n.fault("C", wire.EgressFault, id)
	n.fault("C", wire.ForwardFault, id)
	n.fault("C", wire.LinkFault, "ab")
	c.send(ctrlchan.NewMessage(wire.RouteResultType, []byte(id)))
	c.confirm(id)
	c.send(ctrlchan.NewMessage(wire.LinkStateType, pb(nil).str(1, "ab").uint(2, 1)))
	c.barrier()

	if p := n.path(id); !slices.Equal(p, []string{"A", "B"}) {
		t.Fatalf("the circuit's path after C's messages: %v", p)
	}
	for _, r := range []string{"A", "B"} {
		for _, u := range n.routers[r].messages(wire.UnrouteType) {
			if strings.Contains(string(u.Body), id) {
				t.Fatalf("router %s was told to unroute the circuit", r)
			}
		}
	}
	if _, _, ok := n.m.links.endsOf("ab"); !ok {
		t.Fatal("link ab is gone")
	}
	for req, want := range map[string]float64{reqFault: 4, reqRouteResult: 1, reqConfirmation: 1, reqLinkState: 1} {
		if got := n.refusedCount(req, whyAnotherRouter); got != want {
			t.Errorf("refused %s = %v, want %v", req, got, want)
		}
	}
	n.waitAudit(from, []string{"C:circuit_confirmation/another_router", "C:fault/another_router",
		"C:link_state/another_router", "C:route_result/another_router"})

	// The circuit's own routers are still heard: A's ingress fault ends it.
	n.fault("A", wire.IngressFault, id)
	poll(t, "the circuit ends on its ingress's fault", func() bool { return n.path(id) == nil })
}

// TestRequests_ADialThroughARouterTheClientMayNotUseIsCounted: the dial is
// refused with INVALID_EDGE_ROUTER_FOR_SESSION and counted.
func TestRequests_ADialThroughARouterTheClientMayNotUseIsCounted(t *testing.T) {
	n := newTestNet(t)
	n.addRouter("A")
	n.terminator("t1", "A")
	mustWrite(t, n.s, func(tx *store.Tx) error { return tx.Remove(store.KindEdgeRouterPolicy, "erp") })
	from := n.proposedCount()
	if code := edgeErrorCode(t, "dial", n.dial("A")); code != wire.ErrInvalidEdgeRouterForSession {
		t.Fatalf("dial: code %d, want %d", code, wire.ErrInvalidEdgeRouterForSession)
	}
	if got := n.refusedCount(reqDial, whyRouterNotAllowed); got != 1 {
		t.Errorf("refused dial/router_not_allowed = %v, want 1", got)
	}
	if p := n.proposals(from); len(p) != 0 {
		t.Fatalf("proposed %v", p)
	}
}
