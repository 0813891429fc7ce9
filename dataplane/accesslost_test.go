package dataplane

import (
	"encoding/json"
	"strings"
	"testing"

	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"
)

// edgeRouterPolicy creates, through the FSM, an edge router policy giving
// every identity the edge routers roles select.
func (n *testNet) edgeRouterPolicy(id string, routerRoles ...string) {
	n.t.Helper()
	raw, err := json.Marshal(&store.EdgeRouterPolicy{Base: store.Base{ID: id}, Named: store.Named{Name: id},
		Semantic: "AnyOf", IdentityRoles: []string{"#all"}, EdgeRouterRoles: routerRoles})
	if err != nil {
		n.t.Fatal(err)
	}
	n.do(fsm.CmdPolicyCreate, fsm.PolicyCreate{Table: store.KindEdgeRouterPolicy.Table, Policy: raw})
}

// deleteEdgeRouterPolicy deletes policy id through the FSM.
func (n *testNet) deleteEdgeRouterPolicy(id string) {
	n.t.Helper()
	n.do(fsm.CmdPolicyDelete, fsm.PolicyDelete{Table: store.KindEdgeRouterPolicy.Table, ID: id})
}

// TestAccessLost_AnEdgeRouterPolicyChangeEndsTheDialersCircuit: the client
// dials through A and through B; an edge router policy change leaves it
// only B. The circuit entering at A ends (unrouted on its routers), the
// one entering at B goes on, and a new dial through A is refused.
func TestAccessLost_AnEdgeRouterPolicyChangeEndsTheDialersCircuit(t *testing.T) {
	n := newTestNet(t)
	n.addRouter("A")
	n.addRouter("B")
	n.link("ab", "A", "B")
	n.terminator("t1", "B")
	n.edgeRouterPolicy("erp-b", "@B")
	viaA := circuitID(t, n.dial("A"))
	viaB := circuitID(t, n.dial("B"))
	n.settled(viaA)

	n.deleteEdgeRouterPolicy("erp")
	poll(t, "the circuit through A ends", func() bool { return n.path(viaA) == nil })
	n.settled(viaA) // no router keeps its route
	if n.path(viaB) == nil {
		t.Fatal("the circuit through B, which the client may still use, ended")
	}
	if code := edgeErrorCode(t, "a new dial through A", n.dial("A")); code != wire.ErrInvalidEdgeRouterForSession {
		t.Fatalf("a new dial through A: code %d", code)
	}
}

// TestAccessLost_AHostThatLosesItsRouterEndsItsCircuits: the host's
// terminator is on B; an edge router policy change leaves its identity
// only A. The circuit to it ends though its dialer may still use A, and a
// new dial finds no terminator.
func TestAccessLost_AHostThatLosesItsRouterEndsItsCircuits(t *testing.T) {
	n := newTestNet(t)
	n.addRouter("A")
	b := n.addRouter("B")
	n.link("ab", "A", "B")
	n.edgeRouterPolicy("erp-a", "@A")
	bind := n.bindSession()
	if res, text := createTerminator(t, b, "hosted", bind, n.apiSession, 1); res != wire.TerminatorCreated {
		t.Fatalf("terminator: %d %s", res, text)
	}
	id := circuitID(t, n.dial("A"))
	n.settled(id)

	n.deleteEdgeRouterPolicy("erp")
	poll(t, "the circuit to the host ends", func() bool { return n.path(id) == nil })
	n.settled(id)
	if text := refused(t, n.dial("A")); !strings.Contains(text, "terminator") {
		t.Fatalf("a new dial: %q", text)
	}
}
