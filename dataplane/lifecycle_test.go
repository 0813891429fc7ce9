package dataplane

import (
	"slices"
	"testing"

	"edgectl/dataplane/wire"
)

// line is routers A–B–C with a terminator on C: a dial through A takes A>B>C.
func line(t *testing.T) *testNet {
	n := newTestNet(t)
	for _, id := range []string{"A", "B", "C"} {
		n.addRouter(id)
	}
	n.link("ab", "A", "B")
	n.link("bc", "B", "C")
	n.terminator("t1", "C")
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

