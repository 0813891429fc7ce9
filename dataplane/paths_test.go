package dataplane

import (
	"reflect"
	"testing"

	"edgectl/dataplane/path"
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
		got, err := path.NewGraph(routers, usableLinks(c.links), c.avoid).Shortest("A", "C")
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: path %+v, %v; want %+v", c.what, got, err, c.want)
		}
	}
}
