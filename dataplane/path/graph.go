// Package path finds the paths circuits take (docs/openziti.md, "Links and
// paths"): the graph of routers and usable links, the cheapest path between
// two routers (Dijkstra), the terminator a dial goes to, the Route messages
// of a circuit on its path, and the circuits smart rerouting moves.
//
// It owns no state: every function works on the snapshot it is given (a
// Graph keeps the searches it made, which do not change with it). It
// must never hold a channel, a lock or the data plane's Manager, never read
// the clock and never send: the Manager takes a snapshot, asks, and acts.
package path

import (
	"container/heap"
	"errors"
	"math"
	"slices"
	"sync"
)

// A circuit from an ingress router to a terminator's router takes the
// cheapest path over usable links, as OpenZiti's controller computes it:
// entering a router costs the cheapest link to it plus the router's cost (at
// least MinRouterCost); a router marked NoTraversal may only start or end a
// path.

// MinRouterCost is the least a router adds to a path (OpenZiti's default).
const MinRouterCost = 10

// Path is the routers a circuit crosses, first the ingress, and the link
// between each two.
type Path struct {
	Nodes []string
	Links []string
	Cost  int
}

// ErrNoPath: no usable links join the two routers.
var ErrNoPath = errors.New("no path: no usable links join the routers")

// Router is a connected router a path may cross.
type Router struct {
	ID          string
	Cost        int
	NoTraversal bool
}

// Link is a usable link between two routers, at its cost in a path.
type Link struct {
	ID       string
	From, To string
	Cost     int
}

// Graph is a snapshot of what paths run over: the connected routers with
// their costs, and the usable links between them (the cheapest of each pair).
type Graph struct {
	cost        map[string]int
	noTraversal map[string]bool
	edges       map[string]map[string]Link // router → neighbour → cheapest link
	links       map[string]Link            // every usable link, by id

	// The same graph by router number, for the search: routers numbered
	// in id order (ids), each one's neighbours with what entering them
	// costs (the link's cost plus theirs).
	ids   []string
	num   map[string]int
	adj   [][]hop
	trees []*tree // the searches made so far, by source: a graph does not change once built, so a search holds for the graph's life
	mu    sync.Mutex
}

// hop is a neighbour and what entering it costs.
type hop struct {
	to, cost int
}

// NewGraph is the graph of these routers and the links between them, less
// those to avoid (a router refused a route over them: one may be gone before
// its fault reached this node) and those to a router not listed.
func NewGraph(routers []Router, links []Link, avoid map[string]bool) *Graph {
	g := &Graph{cost: map[string]int{}, noTraversal: map[string]bool{}, edges: map[string]map[string]Link{}, links: map[string]Link{}}
	for _, r := range routers {
		g.cost[r.ID], g.noTraversal[r.ID] = max(r.Cost, MinRouterCost), r.NoTraversal
	}
	g.addLinks(links, avoid)
	g.ids = make([]string, 0, len(g.cost))
	for id := range g.cost {
		g.ids = append(g.ids, id)
	}
	slices.Sort(g.ids)
	g.num = make(map[string]int, len(g.ids))
	for i, id := range g.ids {
		g.num[id] = i
	}
	g.adj = make([][]hop, len(g.ids))
	for i, id := range g.ids {
		for v, l := range g.edges[id] {
			c := l.Cost + g.cost[v]
			if c < 0 || c > math.MaxInt32 {
				c = math.MaxInt32
			}
			g.adj[i] = append(g.adj[i], hop{to: g.num[v], cost: c})
		}
	}
	g.trees = make([]*tree, len(g.ids))
	return g
}

// addLinks adds the links between the graph's routers, but those to avoid.
func (g *Graph) addLinks(ls []Link, avoid map[string]bool) {
	for _, l := range ls {
		_, a := g.cost[l.From]
		_, b := g.cost[l.To]
		if !a || !b || avoid[l.ID] {
			continue
		}
		g.links[l.ID] = l
		g.add(l.From, l.To, l)
		g.add(l.To, l.From, l)
	}
}

func (g *Graph) add(from, to string, l Link) {
	if g.edges[from] == nil {
		g.edges[from] = map[string]Link{}
	}
	if cur, ok := g.edges[from][to]; !ok || l.Cost < cur.Cost || (l.Cost == cur.Cost && l.ID < cur.ID) {
		g.edges[from][to] = l
	}
}

// Cost is what a path of these routers and links costs now, as Shortest
// counts it; false when one of them is no longer usable.
func (g *Graph) Cost(nodes, links []string) (int, bool) {
	total := 0
	for i := 1; i < len(nodes); i++ {
		l, ok := g.links[links[i-1]]
		rc, up := g.cost[nodes[i]]
		if !ok || !up {
			return 0, false
		}
		total += l.Cost + rc
	}
	return total, true
}

// Shortest is the cheapest path from router src to router dst (Dijkstra);
// the path of a router to itself is that router alone, at no cost. The
// graph keeps the tree of cheapest paths from each src it was asked for,
// so that a dial's pick, which asks for the path to every router holding
// a terminator of the service, runs one search, not one per router.
func (g *Graph) Shortest(src, dst string) (Path, error) {
	if _, ok := g.cost[src]; !ok {
		return Path{}, ErrNoPath
	}
	if src == dst {
		return Path{Nodes: []string{src}}, nil
	}
	if _, ok := g.cost[dst]; !ok {
		return Path{}, ErrNoPath
	}
	si, di := g.num[src], g.num[dst]
	t := g.tree(si)
	if t.dist[di] < 0 {
		return Path{}, ErrNoPath
	}
	p := Path{Cost: t.dist[di]}
	n := 1
	for at := di; at != si; at = t.prev[at] {
		n++
	}
	p.Nodes, p.Links = make([]string, n), make([]string, n-1)
	for at, i := di, n-1; ; at, i = t.prev[at], i-1 {
		p.Nodes[i] = g.ids[at]
		if at == si {
			break
		}
	}
	for i := 0; i+1 < n; i++ {
		p.Links[i] = g.edges[p.Nodes[i]][p.Nodes[i+1]].ID
	}
	return p, nil
}

// tree is the cheapest paths from one router to every router they reach,
// by router number: each one's cost (-1: not reached) and the router
// before it.
type tree struct {
	dist []int
	prev []int
}

// tree is the tree of cheapest paths from router src, searched once per
// graph.
func (g *Graph) tree(src int) *tree {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := g.trees[src]; t != nil {
		return t
	}
	t := g.search(src)
	g.trees[src] = t
	return t
}

// search is Dijkstra from src over the whole graph. Of paths of equal
// cost, the one through the routers settled first (the smaller ids: the
// routers are numbered in id order) wins.
func (g *Graph) search(src int) *tree {
	n := len(g.ids)
	t := &tree{dist: make([]int, n), prev: make([]int, n)}
	for i := range t.dist {
		t.dist[i], t.prev[i] = -1, -1
	}
	t.dist[src] = 0
	done := make([]bool, n)
	q := &queue{{id: src}}
	for q.Len() > 0 {
		u := heap.Pop(q).(item)
		if done[u.id] {
			continue
		}
		done[u.id] = true
		if u.id != src && g.noTraversal[g.ids[u.id]] {
			continue // it may end a path, not carry one
		}
		for _, h := range g.adj[u.id] {
			if done[h.to] {
				continue
			}
			d := u.dist + h.cost
			if d < 0 || d > math.MaxInt32 {
				d = math.MaxInt32
			}
			if cur := t.dist[h.to]; cur < 0 || d < cur {
				t.dist[h.to], t.prev[h.to] = d, u.id
				heap.Push(q, item{id: h.to, dist: d})
			}
		}
	}
	return t
}

type item struct {
	id   int // the router's number
	dist int
}

type queue []item

func (q queue) Len() int { return len(q) }

// Less orders by distance, then by router id: of paths of equal cost, the
// one through the routers settled first (the smaller ids) wins, the same
// every time whatever order the maps give.
func (q queue) Less(i, j int) bool {
	return q[i].dist < q[j].dist || (q[i].dist == q[j].dist && q[i].id < q[j].id)
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(item)) }
func (q *queue) Pop() any     { old := *q; it := old[len(old)-1]; *q = old[:len(old)-1]; return it }
