package dataplane

import (
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
		if rec, err := tx.Get(r.Kind, r.ID); err == nil {
			switch v := rec.(type) {
			case *store.EdgeRouter:
				pr.Cost, pr.NoTraversal = v.Cost, v.NoTraversal
			case *store.Router:
				pr.Cost, pr.NoTraversal = v.Cost, v.NoTraversal
			}
		}
		routers = append(routers, pr)
	}
	return path.NewGraph(routers, usableLinks(m.links.all()), avoid)
}

// usableLinks are the links paths may take, at their cost: all but those
// an operator took down.
func usableLinks(ls []Link) []path.Link {
	out := make([]path.Link, 0, len(ls))
	for _, l := range ls {
		if !l.Down {
			out = append(out, path.Link{ID: l.ID, From: l.SrcRouterID, To: l.DstRouterID, Cost: l.Cost()})
		}
	}
	return out
}
