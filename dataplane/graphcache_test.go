package dataplane

import (
	"testing"

	"edgectl/dataplane/path"
)

// TestGraphCache_ReusedOnlyWhileRoutersAndLinksAreTheSame: the same
// routers (in any order) and links give the graph already built; a link's
// new cost or a router gone give a new one, whose paths follow the change.
func TestGraphCache_ReusedOnlyWhileRoutersAndLinksAreTheSame(t *testing.T) {
	routers := func(ids ...string) []path.Router {
		var out []path.Router
		for _, id := range ids {
			out = append(out, path.Router{ID: id})
		}
		return out
	}
	links := func(abCost int) []path.Link {
		return []path.Link{{ID: "ab", From: "A", To: "B", Cost: abCost}, {ID: "ac", From: "A", To: "C", Cost: 1}, {ID: "cb", From: "C", To: "B", Cost: 1}}
	}
	var c graphCache
	g1 := c.get(routers("A", "B", "C"), links(1))
	if g2 := c.get(routers("C", "A", "B"), links(1)); g2 != g1 {
		t.Fatal("the same routers in another order and the same links built a new graph")
	}
	if p, err := g1.Shortest("A", "B"); err != nil || len(p.Nodes) != 2 {
		t.Fatalf("A→B on the cheap direct link: %v %v", p, err)
	}
	g3 := c.get(routers("A", "B", "C"), links(100))
	if g3 == g1 {
		t.Fatal("a link's new cost reused the old graph")
	}
	if p, err := g3.Shortest("A", "B"); err != nil || len(p.Nodes) != 3 || p.Nodes[1] != "C" {
		t.Fatalf("A→B with the direct link dear: %v %v, want through C", p, err)
	}
	g4 := c.get(routers("A", "B"), links(100))
	if p, err := g4.Shortest("A", "B"); g4 == g3 || err != nil || len(p.Nodes) != 2 {
		t.Fatalf("with C gone: the same graph %v, path %v %v, want the direct link", g4 == g3, p, err)
	}
}
