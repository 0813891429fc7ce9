package path

import (
	"reflect"
	"testing"
	"time"

	"edgectl/dataplane/wire"

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
		ci := Circuit{ID: "c1", Nodes: c.path, Links: c.links, IngressID: in, EgressID: out}
		for _, reroute := range []bool{false, true} {
			attempt, eg := uint32(1), egress
			if reroute {
				attempt, eg = wire.SmartRerouteAttempt, nil
			}
			msgs := ci.Routes(attempt, eg, 10*time.Second)
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

// The links a router's route names are those of its hops (a refused
// route's suspects).
func TestLinksAt_TheLinksOfEachRoutersHops(t *testing.T) {
	ci := Circuit{Nodes: []string{"A", "B", "C"}, Links: []string{"ab", "bc"}}
	for i, want := range [][]string{{"ab"}, {"ab", "bc"}, {"bc"}} {
		if got := ci.LinksAt(i); !reflect.DeepEqual(got, want) {
			t.Errorf("linksAt %d = %v, want %v", i, got, want)
		}
	}
	if got := (Circuit{Nodes: []string{"A"}}).LinksAt(0); len(got) != 0 {
		t.Errorf("one router's route names links %v", got)
	}
}
