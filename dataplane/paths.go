package dataplane

import (
	"container/heap"
	"errors"
	"math"

	"edgectl/store"
)

// Paths (docs/openziti.md, "Links and paths"): a circuit from an ingress
// router to a terminator's router takes the cheapest path over usable
// links, as OpenZiti's controller computes it: entering a router costs the
// cheapest link to it plus the router's cost (at least minRouterCost); a
// router marked noTraversal may only start or end a path.

// minRouterCost is the least a router adds to a path (OpenZiti's default).
const minRouterCost = 10

// Path is the routers a circuit crosses, first the ingress, and the link
// between each two.
type Path struct {
	Nodes []string
	Links []string
	Cost  int
}

// errNoPath: no usable links join the two routers.
var errNoPath = errors.New("no path: no usable links join the routers")

// graph is a snapshot of what paths run over: the connected routers with
// their costs, and the usable links between them (the cheapest of each pair).
type graph struct {
	cost        map[string]int
	noTraversal map[string]bool
	edges       map[string]map[string]Link // router → neighbour → cheapest link
	links       map[string]Link            // every usable link, by id
}

// graph takes the snapshot: the routers connected to this node, their
// records in tx, and the links reported to this node between them, less
// those an operator took down and those to avoid (a router refused a route
// over them: one may be gone before its fault reached this node).
func (m *Manager) graph(tx *store.Tx, avoid map[string]bool) *graph {
	g := &graph{cost: map[string]int{}, noTraversal: map[string]bool{}, edges: map[string]map[string]Link{}, links: map[string]Link{}}
	for _, r := range m.connectedWhere(nil) {
		cost, noTraversal := 0, false
		if rec, err := tx.Get(r.Kind, r.ID); err == nil {
			switch v := rec.(type) {
			case *store.EdgeRouter:
				cost, noTraversal = v.Cost, v.NoTraversal
			case *store.Router:
				cost, noTraversal = v.Cost, v.NoTraversal
			}
		}
		g.cost[r.ID], g.noTraversal[r.ID] = max(cost, minRouterCost), noTraversal
	}
	g.addLinks(m.links.all(), avoid)
	return g
}

// addLinks adds the links between the graph's routers, but those an
// operator took down and those to avoid.
func (g *graph) addLinks(ls []Link, avoid map[string]bool) {
	for _, l := range ls {
		_, a := g.cost[l.SrcRouterID]
		_, b := g.cost[l.DstRouterID]
		if !a || !b || avoid[l.ID] || l.Down {
			continue
		}
		g.links[l.ID] = l
		g.add(l.SrcRouterID, l.DstRouterID, l)
		g.add(l.DstRouterID, l.SrcRouterID, l)
	}
}

func (g *graph) add(from, to string, l Link) {
	if g.edges[from] == nil {
		g.edges[from] = map[string]Link{}
	}
	if cur, ok := g.edges[from][to]; !ok || l.Cost() < cur.Cost() || (l.Cost() == cur.Cost() && l.ID < cur.ID) {
		g.edges[from][to] = l
	}
}

// pathCost is what a path of these routers and links costs now, as path
// counts it; false when one of them is no longer usable.
func (g *graph) pathCost(nodes, links []string) (int, bool) {
	total := 0
	for i := 1; i < len(nodes); i++ {
		l, ok := g.links[links[i-1]]
		rc, up := g.cost[nodes[i]]
		if !ok || !up {
			return 0, false
		}
		total += l.Cost() + rc
	}
	return total, true
}

// path is the cheapest path from router src to router dst (Dijkstra); the
// path of a router to itself is that router alone, at no cost.
func (g *graph) path(src, dst string) (Path, error) {
	if _, ok := g.cost[src]; !ok {
		return Path{}, errNoPath
	}
	if src == dst {
		return Path{Nodes: []string{src}}, nil
	}
	if _, ok := g.cost[dst]; !ok {
		return Path{}, errNoPath
	}
	dist := map[string]int{src: 0}
	prev := map[string]string{}
	done := map[string]bool{}
	q := &pathQueue{{id: src}}
	for q.Len() > 0 {
		u := heap.Pop(q).(pathItem)
		if done[u.id] {
			continue
		}
		done[u.id] = true
		if u.id == dst {
			break
		}
		if u.id != src && g.noTraversal[u.id] {
			continue // it may end a path, not carry one
		}
		for v, l := range g.edges[u.id] {
			if done[v] {
				continue
			}
			d := u.dist + l.Cost() + g.cost[v]
			if d < 0 || d > math.MaxInt32 {
				d = math.MaxInt32
			}
			if cur, ok := dist[v]; !ok || d < cur {
				dist[v], prev[v] = d, u.id
				heap.Push(q, pathItem{id: v, dist: d})
			}
		}
	}
	if !done[dst] {
		return Path{}, errNoPath
	}
	p := Path{Cost: dist[dst]}
	for at := dst; ; at = prev[at] {
		p.Nodes = append([]string{at}, p.Nodes...)
		if at == src {
			break
		}
	}
	for i := 0; i+1 < len(p.Nodes); i++ {
		p.Links = append(p.Links, g.edges[p.Nodes[i]][p.Nodes[i+1]].ID)
	}
	return p, nil
}

type pathItem struct {
	id   string
	dist int
}

type pathQueue []pathItem

func (q pathQueue) Len() int { return len(q) }

// Less orders by distance, then by router id: of paths of equal cost, the
// one through the routers settled first (the smaller ids) wins, the same
// every time whatever order the maps give.
func (q pathQueue) Less(i, j int) bool {
	return q[i].dist < q[j].dist || (q[i].dist == q[j].dist && q[i].id < q[j].id)
}
func (q pathQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pathQueue) Push(x any)   { *q = append(*q, x.(pathItem)) }
func (q *pathQueue) Pop() any     { old := *q; it := old[len(old)-1]; *q = old[:len(old)-1]; return it }
