package path

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// testGraph builds a graph of routers (id → cost) and links ("a-b" → cost).
type testLink struct {
	id, src, dst string
	cost         int
}

func testGraph(routers map[string]int, noTraversal []string, ls ...testLink) *Graph {
	var rs []Router
	for id, c := range routers {
		rs = append(rs, Router{ID: id, Cost: c, NoTraversal: slices.Contains(noTraversal, id)})
	}
	links := make([]Link, 0, len(ls))
	for _, tl := range ls {
		links = append(links, Link{ID: tl.id, From: tl.src, To: tl.dst, Cost: tl.cost})
	}
	return NewGraph(rs, links, nil)
}

func checkPath(t *testing.T, g *Graph, src, dst string, nodes, links []string, cost int) {
	t.Helper()
	p, err := g.Shortest(src, dst)
	if err != nil {
		t.Fatalf("path %s→%s: %v", src, dst, err)
	}
	if !reflect.DeepEqual(p.Nodes, nodes) || !reflect.DeepEqual(p.Links, links) || p.Cost != cost {
		t.Fatalf("path %s→%s = %v %v cost %d, want %v %v cost %d", src, dst, p.Nodes, p.Links, p.Cost, nodes, links, cost)
	}
}

func TestGraphPath_TakesTheCheapestByLinkAndRouterCost(t *testing.T) {
	// A–D directly costs 100 + D's 10 = 110; through B: (5+10) + (5+10) =
	// 30; through C: C's cost 50 makes it (1+50) + (1+10) = 62.
	g := testGraph(map[string]int{"A": 0, "B": 0, "C": 50, "D": 0}, nil,
		testLink{"l-ad", "A", "D", 100},
		testLink{"l-ab", "A", "B", 5}, testLink{"l-bd", "B", "D", 5},
		testLink{"l-ac", "A", "C", 1}, testLink{"l-cd", "C", "D", 1})
	checkPath(t, g, "A", "D", []string{"A", "B", "D"}, []string{"l-ab", "l-bd"}, 30)
	// The router cost counts, not only the links: with B dear, C wins.
	g = testGraph(map[string]int{"A": 0, "B": 60, "C": 50, "D": 0}, nil,
		testLink{"l-ad", "A", "D", 100},
		testLink{"l-ab", "A", "B", 5}, testLink{"l-bd", "B", "D", 5},
		testLink{"l-ac", "A", "C", 1}, testLink{"l-cd", "C", "D", 1})
	checkPath(t, g, "A", "D", []string{"A", "C", "D"}, []string{"l-ac", "l-cd"}, 62)
	// A router cost below the minimum counts as the minimum; the source's cost is not counted.
	g = testGraph(map[string]int{"A": 1000, "B": 3}, nil, testLink{"l", "A", "B", 7})
	checkPath(t, g, "A", "B", []string{"A", "B"}, []string{"l"}, 7+MinRouterCost)
}

func TestGraphAdd_KeepsTheCheapestLinkOfAPair(t *testing.T) {
	g := testGraph(map[string]int{"A": 0, "B": 0}, nil,
		testLink{"l-dear", "A", "B", 40}, testLink{"l-cheap", "B", "A", 3}, testLink{"l-also-dear", "A", "B", 40})
	checkPath(t, g, "A", "B", []string{"A", "B"}, []string{"l-cheap"}, 13)
	checkPath(t, g, "B", "A", []string{"B", "A"}, []string{"l-cheap"}, 13)
	// Of two links of equal cost, the smaller id, whatever the order they came in.
	for _, ls := range [][]testLink{{{"l2", "A", "B", 3}, {"l1", "B", "A", 3}}, {{"l1", "B", "A", 3}, {"l2", "A", "B", 3}}} {
		checkPath(t, testGraph(map[string]int{"A": 0, "B": 0}, nil, ls...), "A", "B", []string{"A", "B"}, []string{"l1"}, 13)
	}
}

func TestGraphPath_NoTraversalRoutersOnlyEndAPath(t *testing.T) {
	// B is the cheap way from A to C, but may not carry the circuit.
	g := testGraph(map[string]int{"A": 0, "B": 0, "C": 0, "D": 0}, []string{"B"},
		testLink{"l-ab", "A", "B", 1}, testLink{"l-bc", "B", "C", 1},
		testLink{"l-ad", "A", "D", 50}, testLink{"l-dc", "D", "C", 50})
	checkPath(t, g, "A", "C", []string{"A", "D", "C"}, []string{"l-ad", "l-dc"}, 120)
	// It may start or end one.
	checkPath(t, g, "A", "B", []string{"A", "B"}, []string{"l-ab"}, 11)
	checkPath(t, g, "B", "C", []string{"B", "C"}, []string{"l-bc"}, 11)
	// With no other way, there is no path through it.
	g = testGraph(map[string]int{"A": 0, "B": 0, "C": 0}, []string{"B"}, testLink{"l-ab", "A", "B", 1}, testLink{"l-bc", "B", "C", 1})
	if _, err := g.Shortest("A", "C"); !errors.Is(err, ErrNoPath) {
		t.Fatalf("a path through a noTraversal router: %v", err)
	}
}

func TestGraphPath_NoPath(t *testing.T) {
	g := testGraph(map[string]int{"A": 0, "B": 0, "C": 0, "D": 0}, nil, testLink{"l-ab", "A", "B", 1}, testLink{"l-cd", "C", "D", 1})
	for _, c := range [][2]string{{"A", "C"}, {"D", "B"}, {"A", "gone"}, {"gone", "A"}, {"gone", "gone"}} {
		if p, err := g.Shortest(c[0], c[1]); !errors.Is(err, ErrNoPath) {
			t.Errorf("path %s→%s = %+v, %v; want ErrNoPath", c[0], c[1], p, err)
		}
	}
}

func TestGraphPath_ToItselfIsOneRouterAtNoCost(t *testing.T) {
	g := testGraph(map[string]int{"A": 70, "B": 0}, []string{"A"}, testLink{"l", "A", "B", 1})
	checkPath(t, g, "A", "A", []string{"A"}, nil, 0)
	checkPath(t, testGraph(map[string]int{"lonely": 0}, nil), "lonely", "lonely", []string{"lonely"}, nil, 0)
}

func TestGraphPath_TiesAreBrokenTheSameWayEveryTime(t *testing.T) {
	// Four paths of equal cost from S to D: through A, B, C or E (each
	// 1+10 + 1+10 = 22). Whatever the order maps give them, the answer is
	// the same: the way through the router of the smallest id.
	for i := 0; i < 200; i++ {
		g := testGraph(map[string]int{"S": 0, "A": 0, "B": 0, "C": 0, "E": 0, "D": 0}, nil,
			testLink{"l-se", "S", "E", 1}, testLink{"l-ed", "E", "D", 1},
			testLink{"l-sc", "S", "C", 1}, testLink{"l-cd", "C", "D", 1},
			testLink{"l-sb", "S", "B", 1}, testLink{"l-bd", "B", "D", 1},
			testLink{"l-sa", "S", "A", 1}, testLink{"l-ad", "A", "D", 1})
		checkPath(t, g, "S", "D", []string{"S", "A", "D"}, []string{"l-sa", "l-ad"}, 22)
	}
}

// A path's cost now is what path counted for it, and a path over a link or
// a router that is gone has none (smart rerouting compares the two).
func TestGraphPathCost_IsWhatPathCounts(t *testing.T) {
	g := testGraph(map[string]int{"S": 0, "A": 25, "B": 0, "D": 0}, nil,
		testLink{"sa", "S", "A", 5}, testLink{"ad", "A", "D", 5}, testLink{"sb", "S", "B", 40}, testLink{"bd", "B", "D", 40})
	p, err := g.Shortest("S", "D")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := g.Cost(p.Nodes, p.Links); !ok || c != p.Cost {
		t.Fatalf("cost of %v = %d, %v; path counted %d", p.Nodes, c, ok, p.Cost)
	}
	if c, ok := g.Cost([]string{"S", "B", "D"}, []string{"sb", "bd"}); !ok || c != 40+10+40+10 {
		t.Fatalf("cost of S>B>D = %d, %v; want 100", c, ok)
	}
	if _, ok := g.Cost([]string{"S", "B", "D"}, []string{"sb", "gone"}); ok {
		t.Fatal("a path over a link that is gone has a cost")
	}
	if _, ok := g.Cost([]string{"S", "X", "D"}, []string{"sa", "ad"}); ok {
		t.Fatal("a path through a router that is gone has a cost")
	}
}

// Links to avoid and links to a router not in the graph are left out.
func TestNewGraph_LeavesOutLinksToAvoidAndToRoutersNotInIt(t *testing.T) {
	routers := []Router{{ID: "A"}, {ID: "B"}, {ID: "C"}}
	ab := Link{ID: "l-ab", From: "A", To: "B", Cost: 1}
	bc := Link{ID: "l-bc", From: "B", To: "C", Cost: 1}
	ac := Link{ID: "l-ac", From: "A", To: "C", Cost: 1}
	ax := Link{ID: "l-ax", From: "A", To: "X", Cost: 1}
	checkPath(t, NewGraph(routers, []Link{ab, bc, ac}, map[string]bool{"l-ac": true}), "A", "C", []string{"A", "B", "C"}, []string{"l-ab", "l-bc"}, 2*(1+MinRouterCost))
	if g := NewGraph(routers, []Link{ab, bc, ac, ax}, nil); len(g.links) != 3 || g.edges["X"] != nil {
		t.Fatalf("a link to a router not in the graph was added: %v", g.links)
	}
}

// Shortest keeps the search it made from a router for the graph's life:
// its costs are those of an independent search (Bellman-Ford over the
// same rules) for every pair, asked in random order and more than once,
// and each path it returns costs what it says over links of the graph.
func TestGraphPath_KeptSearchesAgreeWithAnIndependentOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 5))
	for range 200 {
		n := 2 + rng.IntN(8)
		costs := map[string]int{}
		var ids, noTraversal []string
		for i := range n {
			id := fmt.Sprintf("r%d", i)
			costs[id] = rng.IntN(30)
			ids = append(ids, id)
			if rng.IntN(5) == 0 {
				noTraversal = append(noTraversal, id)
			}
		}
		var links []testLink
		for i := range rng.IntN(3 * n) {
			links = append(links, testLink{fmt.Sprintf("l%d", i), ids[rng.IntN(n)], ids[rng.IntN(n)], rng.IntN(20)})
		}
		g := testGraph(costs, noTraversal, links...)
		for range 3 * n * n {
			src, dst := ids[rng.IntN(n)], ids[rng.IntN(n)]
			want, reached := bellmanFord(g, src, dst)
			p, err := g.Shortest(src, dst)
			if !reached {
				if err == nil {
					t.Fatalf("%s→%s: a path %v where none exists", src, dst, p.Nodes)
				}
				continue
			}
			if err != nil || p.Cost != want {
				t.Fatalf("%s→%s: cost %d (%v), want %d", src, dst, p.Cost, err, want)
			}
			if c, ok := g.Cost(p.Nodes, p.Links); !ok || c != p.Cost || p.Nodes[0] != src || p.Nodes[len(p.Nodes)-1] != dst {
				t.Fatalf("%s→%s: path %v %v costs %d (%v), says %d", src, dst, p.Nodes, p.Links, c, ok, p.Cost)
			}
		}
	}
}

// bellmanFord is the cheapest cost from src to dst by the graph's rules
// (entering a router costs the link and the router; a NoTraversal router
// only starts or ends a path), relaxing every edge until nothing changes.
func bellmanFord(g *Graph, src, dst string) (int, bool) {
	dist := map[string]int{src: 0}
	for changed := true; changed; {
		changed = false
		for u, es := range g.edges {
			du, ok := dist[u]
			if !ok || (u != src && g.noTraversal[u]) {
				continue
			}
			for v, l := range es {
				if d := du + l.Cost + g.cost[v]; v != src {
					if cur, ok := dist[v]; !ok || d < cur {
						dist[v], changed = d, true
					}
				}
			}
		}
	}
	d, ok := dist[dst]
	if src == dst {
		return 0, true
	}
	return d, ok
}
