package dataplane

import (
	"reflect"
	"testing"
	"time"

	"edgectl/dataplane/path"
	"edgectl/dataplane/wire"
)

// An operator's changes count in paths: a link taken down is left out, and
// a static cost adds to the link's cost; links to avoid are left out too.
func TestUsableLinks_DownStaticCostAndAvoid(t *testing.T) {
	routers := []path.Router{{ID: "A"}, {ID: "B"}, {ID: "C"}}
	ab := Link{ID: "l-ab", SrcRouterID: "A", DstRouterID: "B", StaticCost: 1}
	bc := Link{ID: "l-bc", SrcRouterID: "B", DstRouterID: "C", StaticCost: 1}
	ac := Link{ID: "l-ac", SrcRouterID: "A", DstRouterID: "C", StaticCost: 1}
	ax := Link{ID: "l-ax", SrcRouterID: "A", DstRouterID: "X", StaticCost: 1}
	down, dear, fair := ac, ac, ac
	down.Down, dear.StaticCost, fair.StaticCost = true, 100, 11
	viaB := path.Path{Nodes: []string{"A", "B", "C"}, Links: []string{"l-ab", "l-bc"}, Cost: 2 * (1 + path.MinRouterCost)}
	for _, c := range []struct {
		what  string
		avoid map[string]bool
		links []Link
		want  path.Path
	}{
		{"direct (a link to a router not in the graph left out)", nil, []Link{ab, bc, ac, ax},
			path.Path{Nodes: []string{"A", "C"}, Links: []string{"l-ac"}, Cost: 1 + path.MinRouterCost}},
		{"A-C down", nil, []Link{ab, bc, down}, viaB},
		{"A-C at static cost 100", nil, []Link{ab, bc, dear}, viaB},
		{"A-C at static cost 11", nil, []Link{ab, bc, fair},
			path.Path{Nodes: []string{"A", "C"}, Links: []string{"l-ac"}, Cost: 11 + path.MinRouterCost}},
		{"A-C avoided", map[string]bool{"l-ac": true}, []Link{ab, bc, ac}, viaB},
	} {
		table := &links{byID: map[string]*Link{}}
		for _, l := range c.links {
			table.byID[l.ID] = &l
		}
		got, err := path.NewGraph(routers, table.usable(), c.avoid).Shortest("A", "C")
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: path %+v, %v; want %+v", c.what, got, err, c.want)
		}
	}
}

// The links paths run over are kept until the table changes: each change
// that moves a path (a new link, a latency, an operator's change, a fault,
// the links of a router gone) is seen by the next read.
func TestLinksUsable_KeptUntilTheTableChanges(t *testing.T) {
	var table links
	costs := func() map[string]int {
		out := map[string]int{}
		for _, l := range table.usable() {
			out[l.ID] = l.Cost
		}
		return out
	}
	check := func(what string, want map[string]int) {
		t.Helper()
		if got := costs(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: usable links %v, want %v", what, got, want)
		}
	}
	now := time.Now()
	base := 1 + 2*int(initialLinkLatency/time.Millisecond)
	check("empty", map[string]int{})
	table.report("A", wire.RouterLink{ID: "ab", DestRouterID: "B", Iteration: 1}, now)
	table.report("B", wire.RouterLink{ID: "bc", DestRouterID: "C", Iteration: 1}, now)
	check("reported", map[string]int{"ab": base, "bc": base})
	check("read again", map[string]int{"ab": base, "bc": base})
	table.latency("A", "ab", 5*time.Millisecond)
	check("a latency", map[string]int{"ab": 1 + 5 + int(initialLinkLatency/time.Millisecond), "bc": base})
	down, cost := true, 40
	table.change("bc", nil, LinkChange{Down: &down})
	check("bc down", map[string]int{"ab": 1 + 5 + int(initialLinkLatency/time.Millisecond)})
	table.change("ab", nil, LinkChange{StaticCost: &cost})
	check("ab's static cost", map[string]int{"ab": 40 + 5 + int(initialLinkLatency/time.Millisecond)})
	table.fault("ab", 0)
	check("ab failed", map[string]int{})
	table.report("A", wire.RouterLink{ID: "ac", DestRouterID: "C", Iteration: 1}, now)
	check("ac reported", map[string]int{"ac": base})
	table.removeFrom("A")
	check("A's links gone", map[string]int{})
}
