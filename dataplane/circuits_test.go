package dataplane

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"

	"google.golang.org/protobuf/encoding/protowire"
)

// decodedRoute is what a test reads back of ctrl_pb.Route.
type decodedRoute struct {
	circuitID string
	attempt   uint64
	egress    *wire.Egress
	forwards  []wire.Forward
	timeout   uint64
}

// protoFields calls fn with each field of b (varints as v, bytes as raw),
// failing the test on bytes that are not a message.
func protoFields(t *testing.T, b []byte, fn func(num protowire.Number, v uint64, raw []byte)) {
	t.Helper()
	err := wire.Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		fn(num, v, raw)
		return nil
	})
	if err != nil {
		t.Fatalf("not a message: %v", err)
	}
}

func decodeRoute(t *testing.T, b []byte) decodedRoute {
	t.Helper()
	var r decodedRoute
	protoFields(t, b, func(num protowire.Number, v uint64, raw []byte) {
		switch num {
		case 1:
			r.circuitID = string(raw)
		case 2:
			r.attempt = v
		case 3:
			r.egress = &wire.Egress{}
			protoFields(t, raw, func(num protowire.Number, _ uint64, raw []byte) {
				switch num {
				case 1:
					r.egress.Binding = string(raw)
				case 2:
					r.egress.Address = string(raw)
				case 3:
					r.egress.Destination = string(raw)
				case 4:
					if r.egress.PeerData == nil {
						r.egress.PeerData = map[uint32][]byte{}
					}
					var k uint64
					var val []byte
					protoFields(t, raw, func(num protowire.Number, v uint64, raw []byte) {
						if num == 1 {
							k = v
						} else {
							val = raw
						}
					})
					r.egress.PeerData[uint32(k)] = val
				}
			})
		case 4:
			var f wire.Forward
			protoFields(t, raw, func(num protowire.Number, v uint64, raw []byte) {
				switch num {
				case 1:
					f.Src = string(raw)
				case 2:
					f.Dst = string(raw)
				case 3:
					f.DstType = v
				}
			})
			r.forwards = append(r.forwards, f)
		case 6:
			r.timeout = v
		}
	})
	return r
}

func TestRoutes_ForwardsOfEachRouterOfThePath(t *testing.T) {
	const in, out = "ingress", "egress"
	egress := &wire.Egress{Binding: "edge", Address: out, Destination: "hosted-token", PeerData: map[uint32][]byte{1: []byte("pd")}}
	fw := func(src, dst string, typ uint64) wire.Forward { return wire.Forward{Src: src, Dst: dst, DstType: typ} }
	for _, c := range []struct {
		name  string
		path  []string
		links []string
		want  [][]wire.Forward
	}{
		{"one router", []string{"A"}, nil, [][]wire.Forward{
			{fw(in, out, wire.DestEnd), fw(out, in, wire.DestStart)},
		}},
		{"two routers", []string{"A", "B"}, []string{"L1"}, [][]wire.Forward{
			{fw(in, "L1", wire.DestLink), fw("L1", in, wire.DestStart)},
			{fw(out, "L1", wire.DestLink), fw("L1", out, wire.DestEnd)},
		}},
		{"three routers", []string{"A", "B", "C"}, []string{"L1", "L2"}, [][]wire.Forward{
			{fw(in, "L1", wire.DestLink), fw("L1", in, wire.DestStart)},
			{fw("L1", "L2", wire.DestLink), fw("L2", "L1", wire.DestLink)},
			{fw(out, "L2", wire.DestLink), fw("L2", out, wire.DestEnd)},
		}},
	} {
		ci := &Circuit{ID: "c1", Path: c.path, Links: c.links, IngressID: in, EgressID: out}
		for _, reroute := range []bool{false, true} {
			attempt, eg := uint32(1), egress
			if reroute {
				attempt, eg = wire.SmartRerouteAttempt, nil
			}
			msgs := routes(ci, attempt, eg, 10*time.Second)
			if len(msgs) != len(c.path) {
				t.Fatalf("%s: %d routes for %d routers", c.name, len(msgs), len(c.path))
			}
			for i, b := range msgs {
				r := decodeRoute(t, b)
				if r.circuitID != "c1" || r.attempt != uint64(attempt) || r.timeout != uint64(10*time.Second) {
					t.Errorf("%s (reroute %v), router %s: circuit %q attempt %d timeout %d", c.name, reroute, c.path[i], r.circuitID, r.attempt, r.timeout)
				}
				if !reflect.DeepEqual(r.forwards, c.want[i]) {
					t.Errorf("%s (reroute %v), router %s: forwards %+v, want %+v", c.name, reroute, c.path[i], r.forwards, c.want[i])
				}
				last := i == len(msgs)-1
				switch {
				case last && !reroute:
					if !reflect.DeepEqual(r.egress, egress) {
						t.Errorf("%s, last router %s: egress %+v, want %+v", c.name, c.path[i], r.egress, egress)
					}
				case r.egress != nil:
					t.Errorf("%s (reroute %v), router %s: an egress %+v", c.name, reroute, c.path[i], r.egress)
				}
			}
		}
	}
}

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
func meshGraph() *graph {
	return testGraph(map[string]int{"I": 0, "M": 0, "F": 0, "U": 0}, nil,
		testLink{"l-im", "I", "M", 5}, testLink{"l-mf", "M", "F", 5})
}

func checkPick(t *testing.T, tx *store.Tx, g *graph, instance string, wantTerm string, wantNodes []string, wantCost int) {
	t.Helper()
	got, p, err := pickRoute(tx, g, "svc", "I", instance, nil)
	if err != nil {
		t.Fatalf("pickRoute: %v", err)
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
	_, _, err := pickRoute(tx, g, "svc", "I", "", nil)
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
	if _, _, err := pickRoute(tx, g, "svc", "I", "host-2", nil); err == nil || !strings.Contains(err.Error(), `no terminator of instance "host-2"`) {
		t.Fatalf("an unknown instance: %v", err)
	}
	got, _, err := pickRoute(tx, g, "svc", "I", "", map[string]bool{"t-local": true})
	if err == nil || !strings.Contains(err.Error(), "no terminator left to try") {
		t.Fatalf("all skipped: %v %v", got, err)
	}
	if _, _, err := pickRoute(tx, g, "other", "I", "", nil); err == nil || !strings.Contains(err.Error(), "has no terminators") {
		t.Fatalf("a service without terminators: %v", err)
	}
}

// A refused route's suspect links are those the refusing router's route
// names, and the next try avoids them.
func TestRouteError_SuspectsTheRefusingRoutersLinks(t *testing.T) {
	ci := &Circuit{Path: []string{"A", "B", "C"}, Links: []string{"ab", "bc"}}
	for i, want := range [][]string{{"ab"}, {"ab", "bc"}, {"bc"}} {
		if got := linksAt(ci, i); !reflect.DeepEqual(got, want) {
			t.Errorf("linksAt %d = %v, want %v", i, got, want)
		}
	}
	if got := linksAt(&Circuit{Path: []string{"A"}}, 0); len(got) != 0 {
		t.Errorf("one router's route names links %v", got)
	}
	shun := map[string]bool{}
	avoid(shun, fmt.Errorf("wrapped: %w", &routeError{err: errors.New("invalid link destination ab"), suspect: linksAt(ci, 0)}))
	avoid(shun, errors.New("not a route error"))
	if !reflect.DeepEqual(shun, map[string]bool{"ab": true}) {
		t.Fatalf("links avoided %v", shun)
	}
}

// TestConfirmation_ACircuitTheNodeDoesNotKnowIsUnrouted: a router that
// confirms a circuit this node has no record of is told to drop it.
func TestConfirmation_ACircuitTheNodeDoesNotKnowIsUnrouted(t *testing.T) {
	m := New(Config{Store: store.New()})
	p := connectOverPipe(t, m, &Router{ID: "r-1"})
	var body []byte
	body = protowire.AppendTag(body, 1, protowire.BytesType)
	body = protowire.AppendString(body, "c-unknown")
	p.send(ctrlchan.NewMessage(wire.CircuitConfirmationType, body))
	got := p.next()
	if got.ContentType != wire.UnrouteType {
		t.Fatalf("the node answered content type %d, not an Unroute", got.ContentType)
	}
	var id string
	_ = wire.Fields(got.Body, func(num protowire.Number, _ uint64, raw []byte) error {
		if num == 1 {
			id = string(raw)
		}
		return nil
	})
	if id != "c-unknown" {
		t.Fatalf("the Unroute names circuit %q", id)
	}
}
