package path

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"edgectl/store"
)

// terminatorStore is a store with the terminators of service "svc".
func terminatorStore(t *testing.T, ts ...*store.Terminator) *store.Tx {
	t.Helper()
	s := store.New()
	tx := s.Write()
	for _, term := range ts {
		term.Base = store.Base{ID: term.ID, CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(1, 0)}
		if term.ServiceID == "" {
			term.ServiceID = "svc"
		}
		if err := tx.Insert(store.KindTerminator, term); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
	return s.Read()
}

func term(id, router string, cost int, precedence string) *store.Terminator {
	return &store.Terminator{Base: store.Base{ID: id}, RouterID: router, Cost: cost, Precedence: precedence, Binding: "edge", Address: id}
}

// meshGraph: I (the ingress) – M – F, links of cost 5, routers of cost
// 10: the path I→M costs 5+10 = 15, I→F 15 + 5+10 = 30; U is connected
// but no link reaches it.
func meshGraph() *Graph {
	return testGraph(map[string]int{"I": 0, "M": 0, "F": 0, "U": 0}, nil,
		testLink{"l-im", "I", "M", 5}, testLink{"l-mf", "M", "F", 5})
}

func checkPick(t *testing.T, tx *store.Tx, g *Graph, instance string, wantTerm string, wantNodes []string, wantCost int) {
	t.Helper()
	got, p, err := Pick(g, tx, "svc", "I", instance, nil, nil)
	if err != nil {
		t.Fatalf("Pick: %v", err)
	}
	if got.ID != wantTerm || !reflect.DeepEqual(p.Nodes, wantNodes) || p.Cost != wantCost {
		t.Fatalf("picked %s over %v (cost %d), want %s over %v (cost %d)", got.ID, p.Nodes, p.Cost, wantTerm, wantNodes, wantCost)
	}
}

func TestPickRoute_TheIngressRoutersTerminatorWinsWhenCheapest(t *testing.T) {
	g := meshGraph()
	// A terminator on the ingress costs its own cost alone (a path of no
	// cost); one on M its cost plus 15.
	tx := terminatorStore(t, term("t-far", "F", 0, ""), term("t-mid", "M", 0, ""), term("t-local", "I", 0, ""))
	checkPick(t, tx, g, "", "t-local", []string{"I"}, 0)
	tx = terminatorStore(t, term("t-mid", "M", 0, ""), term("t-local", "I", 20, ""))
	checkPick(t, tx, g, "", "t-mid", []string{"I", "M"}, 15)
	tx = terminatorStore(t, term("t-mid", "M", 0, ""), term("t-local", "I", 14, ""))
	checkPick(t, tx, g, "", "t-local", []string{"I"}, 0)
	// Equal totals: the smaller id.
	tx = terminatorStore(t, term("t-b", "M", 0, ""), term("t-a", "I", 15, ""))
	checkPick(t, tx, g, "", "t-a", []string{"I"}, 0)
}

func TestPickRoute_PrecedenceBeatsCost(t *testing.T) {
	g := meshGraph()
	// Whichever comes first (the store lists them by id).
	for _, far := range []string{"t-a-far", "t-z-far"} {
		tx := terminatorStore(t, term("t-local", "I", 0, "default"), term(far, "F", 500, "required"))
		checkPick(t, tx, g, "", far, []string{"I", "M", "F"}, 30)
		tx = terminatorStore(t, term("t-local", "I", 0, "failed"), term(far, "F", 500, ""))
		checkPick(t, tx, g, "", far, []string{"I", "M", "F"}, 30)
	}
}

func TestPickRoute_SkipsTerminatorsNoPathReaches(t *testing.T) {
	g := meshGraph()
	// U is connected, no link joins it; "gone" is not connected at all.
	tx := terminatorStore(t, term("t-u", "U", 0, "required"), term("t-gone", "gone", 0, "required"), term("t-far", "F", 0, ""))
	checkPick(t, tx, g, "", "t-far", []string{"I", "M", "F"}, 30)
	tx = terminatorStore(t, term("t-u", "U", 0, ""), term("t-gone", "gone", 0, ""))
	_, _, err := Pick(g, tx, "svc", "I", "", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no terminator on a router this edge router has a path to") {
		t.Fatalf("only unreachable terminators: %v", err)
	}
}

func TestPickRoute_InstanceIDsSkipsAndNoTerminators(t *testing.T) {
	g := meshGraph()
	inst := term("t-inst", "F", 0, "")
	inst.Identity = "host-1"
	tx := terminatorStore(t, term("t-local", "I", 0, ""), inst)
	checkPick(t, tx, g, "host-1", "t-inst", []string{"I", "M", "F"}, 30)
	checkPick(t, tx, g, "", "t-local", []string{"I"}, 0)
	if _, _, err := Pick(g, tx, "svc", "I", "host-2", nil, nil); err == nil || !strings.Contains(err.Error(), `no terminator of instance "host-2"`) {
		t.Fatalf("an unknown instance: %v", err)
	}
	got, _, err := Pick(g, tx, "svc", "I", "", map[string]bool{"t-local": true}, nil)
	if err == nil || !strings.Contains(err.Error(), "no terminator left to try") {
		t.Fatalf("all skipped: %v %v", got, err)
	}
	if _, _, err := Pick(g, tx, "other", "I", "", nil, nil); err == nil || !strings.Contains(err.Error(), "has no terminators") {
		t.Fatalf("a service without terminators: %v", err)
	}
}
