package dataplane

import (
	"reflect"
	"testing"

	"edgectl/dataplane/path"
)

func checkPath(t *testing.T, g *path.Graph, src, dst string, nodes, links []string, cost int) {
	t.Helper()
	p, err := g.Shortest(src, dst)
	if err != nil {
		t.Fatalf("path %s→%s: %v", src, dst, err)
	}
	if !reflect.DeepEqual(p.Nodes, nodes) || !reflect.DeepEqual(p.Links, links) || p.Cost != cost {
		t.Fatalf("path %s→%s = %v %v cost %d, want %v %v cost %d", src, dst, p.Nodes, p.Links, p.Cost, nodes, links, cost)
	}
}

// An operator's changes count in paths: a link taken down is left out, and
// a static cost adds to the link's cost; links to avoid are left out too.
func TestUsableLinks_DownStaticCostAndAvoid(t *testing.T) {
	routers := []path.Router{{ID: "A"}, {ID: "B"}, {ID: "C"}}
	ab := Link{ID: "l-ab", SrcRouterID: "A", DstRouterID: "B", StaticCost: 1}
	bc := Link{ID: "l-bc", SrcRouterID: "B", DstRouterID: "C", StaticCost: 1}
	ac := Link{ID: "l-ac", SrcRouterID: "A", DstRouterID: "C", StaticCost: 1}
	ax := Link{ID: "l-ax", SrcRouterID: "A", DstRouterID: "X", StaticCost: 1}
	build := func(avoid map[string]bool, ls ...Link) *path.Graph {
		return path.NewGraph(routers, usableLinks(ls), avoid)
	}
	checkPath(t, build(nil, ab, bc, ac, ax), "A", "C", []string{"A", "C"}, []string{"l-ac"}, 1+path.MinRouterCost)
	down := ac
	down.Down = true
	checkPath(t, build(nil, ab, bc, down), "A", "C", []string{"A", "B", "C"}, []string{"l-ab", "l-bc"}, 2*(1+path.MinRouterCost))
	dear := ac
	dear.StaticCost = 100
	checkPath(t, build(nil, ab, bc, dear), "A", "C", []string{"A", "B", "C"}, []string{"l-ab", "l-bc"}, 2*(1+path.MinRouterCost))
	dear.StaticCost = 11
	checkPath(t, build(nil, ab, bc, dear), "A", "C", []string{"A", "C"}, []string{"l-ac"}, 11+path.MinRouterCost)
	checkPath(t, build(map[string]bool{"l-ac": true}, ab, bc, ac), "A", "C", []string{"A", "B", "C"}, []string{"l-ab", "l-bc"}, 2*(1+path.MinRouterCost))
}
