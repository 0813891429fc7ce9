package dataplane

import (
	"slices"
	"strings"
	"sync"

	"edgectl/dataplane/path"
	"edgectl/store"
)

// graph takes the snapshot paths are found on (package path): the routers
// connected to this node, their records in tx, and the links reported to
// this node between them, less those an operator took down and those to
// avoid (a router refused a route over them: one may be gone before its
// fault reached this node).
func (m *Manager) graph(tx *store.Tx, avoid map[string]bool) *path.Graph {
	var routers []path.Router
	for _, r := range m.connectedWhere(nil) {
		pr := path.Router{ID: r.ID}
		if rec, ok := tx.Lookup(r.Kind, r.ID); ok {
			switch v := rec.(type) {
			case *store.EdgeRouter:
				pr.Cost, pr.NoTraversal = v.Cost, v.NoTraversal
			case *store.Router:
				pr.Cost, pr.NoTraversal = v.Cost, v.NoTraversal
			}
		}
		routers = append(routers, pr)
	}
	links := m.links.usable()
	if len(avoid) > 0 {
		return path.NewGraph(routers, links, avoid)
	}
	return m.paths.get(routers, links)
}

// graphCache keeps the last graph built with what it was built from. A
// graph is read only once built, so dials share it: on a full mesh of 100
// routers (4,950 links) building one costs many times the path search
// (path's BenchmarkNewGraphShortest_FullMesh100 against
// BenchmarkShortest_FullMesh100), and every dial and every move asked for
// one. Comparing the inputs, not counting changes, keeps it right whatever
// changed: a link's latency, a router's cost, a router gone.
type graphCache struct {
	mu      sync.Mutex
	routers []path.Router
	links   []path.Link
	g       *path.Graph
}

// get is the graph of routers and links: the last one when they are the
// same (routers in any order), else a new one, kept.
func (c *graphCache) get(routers []path.Router, links []path.Link) *path.Graph {
	slices.SortFunc(routers, func(a, b path.Router) int { return strings.Compare(a.ID, b.ID) })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.g != nil && slices.Equal(c.routers, routers) && (sameSlice(c.links, links) || slices.Equal(c.links, links)) {
		c.links = links // the same links: the next compare is by the slice
		return c.g
	}
	c.routers, c.links, c.g = routers, links, path.NewGraph(routers, links, nil)
	return c.g
}

// sameSlice says whether a and b are the same slice (the links table's
// kept one): then they are equal without reading them.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
