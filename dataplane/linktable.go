package dataplane

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"edgectl/dataplane/path"
	"edgectl/dataplane/wire"
)

// The link table: the links reported to this node, with their latencies,
// connections and an operator's changes, in memory (links.go handles the
// messages and the Manager's side).

// initialLinkLatency is a link end's latency until its router reports one
// (OpenZiti's: a new link is dear until measured, but usable).
const initialLinkLatency = 65 * time.Second

// Link is a router link as this node knows it.
type Link struct {
	ID          string
	SrcRouterID string // the router that dialed it and reports it
	DstRouterID string
	Protocol    string
	DialAddress string
	Iteration   uint32
	StaticCost  int
	// Down: an operator took the link out of paths (UpdateLink).
	Down       bool
	SrcLatency time.Duration
	DstLatency time.Duration
	ReportedAt time.Time
	// Conns are its connections (a link may have several), as its
	// routers last reported them; StateIteration orders those reports.
	Conns          []wire.LinkConn
	StateIteration uint32
}

// Cost is the link's cost in a path: its static cost plus the latency
// measured at each end, in milliseconds (OpenZiti's).
func (l *Link) Cost() int {
	return l.StaticCost + int(l.SrcLatency/time.Millisecond) + int(l.DstLatency/time.Millisecond)
}

// other is the end of the link that is not routerID.
func (l *Link) other(routerID string) string {
	if l.SrcRouterID == routerID {
		return l.DstRouterID
	}
	return l.SrcRouterID
}

// links is the node's link table.
type links struct {
	mu   sync.Mutex
	byID map[string]*Link
	// set holds the operators' changes by link and iteration (UpdateLink,
	// ApplyLinkChange): a link of that iteration reported again (its router
	// reconnected) or reported after the change (a change from another
	// node that came first) takes it; a newer iteration, or a fault of the
	// link, drops it, as OpenZiti's controller starts a link dialed again
	// afresh.
	set map[linkKey]LinkChange
	// paths is what paths run over (usable), kept until the table
	// changes: every dial reads it.
	paths   []path.Link
	pathsOK bool
}

type linkKey struct {
	id        string
	iteration uint32
}

// maxLinkChanges bounds set: past it, the changes of links this node does
// not have are dropped.
const maxLinkChanges = 4096

// report records a link a router reports; an older iteration of a known
// link changes nothing. It says whether the table changed.
func (t *links) report(src string, rl wire.RouterLink, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.byID[rl.ID]; old != nil && old.Iteration >= rl.Iteration {
		return false
	}
	if t.byID == nil {
		t.byID = map[string]*Link{}
	}
	l := &Link{ID: rl.ID, SrcRouterID: src, DstRouterID: rl.DestRouterID, Protocol: rl.Protocol,
		DialAddress: rl.DialAddress, Iteration: rl.Iteration, StaticCost: 1,
		SrcLatency: initialLinkLatency, DstLatency: initialLinkLatency, ReportedAt: now}
	if rl.ConnState != nil {
		l.Conns, l.StateIteration = rl.ConnState.Conns, rl.ConnState.StateIteration
	}
	for k, c := range t.set {
		switch {
		case k.id != rl.ID:
		case k.iteration == rl.Iteration:
			c.apply(l)
		case k.iteration < rl.Iteration:
			delete(t.set, k)
		}
	}
	t.byID[rl.ID] = l
	t.pathsOK = false
	return true
}

// LinkChange is what an operator changes of a link; nil fields stay.
type LinkChange struct {
	StaticCost *int
	Down       *bool
}

// over is c made after old: c's fields, and old's where c changes none.
func (c LinkChange) over(old LinkChange) LinkChange {
	if c.StaticCost == nil {
		c.StaticCost = old.StaticCost
	}
	if c.Down == nil {
		c.Down = old.Down
	}
	return c
}

// apply sets the fields c changes on l.
func (c LinkChange) apply(l *Link) {
	if c.StaticCost != nil {
		l.StaticCost = *c.StaticCost
	}
	if c.Down != nil {
		l.Down = *c.Down
	}
}

// change applies c to link id at iteration (the link's current one when
// nil) and keeps it for the link's reports of that iteration. It returns
// the link as changed, and what happened: LinkChanged, or linkKept (the link
// here is not of that iteration yet, or not here: a later report takes
// it), linkNewer (the link here is of a newer iteration: c is not kept),
// linkUnknown (no such link and no iteration given).
func (t *links) change(id string, iteration *uint32, c LinkChange) (Link, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.byID[id]
	switch {
	case l == nil && iteration == nil:
		return Link{}, linkUnknown
	case l != nil && iteration != nil && l.Iteration > *iteration:
		return *l, linkNewer
	}
	key := linkKey{id: id}
	if iteration != nil {
		key.iteration = *iteration
	} else {
		key.iteration = l.Iteration
	}
	if t.set == nil {
		t.set = map[linkKey]LinkChange{}
	}
	if len(t.set) >= maxLinkChanges {
		for k := range t.set {
			if t.byID[k.id] == nil {
				delete(t.set, k)
			}
		}
	}
	t.set[key] = c.over(t.set[key])
	if l == nil || l.Iteration != key.iteration {
		return Link{}, linkKept
	}
	c.apply(l)
	t.pathsOK = false
	return *l, LinkChanged
}

// What a link change did on a node (change, ApplyLinkChange): LinkChanged
// when it was made, else why not.
const (
	LinkChanged = "changed"
	linkKept    = "kept until its routers report the link to this node"
	linkNewer   = "not made: the link was dialed again since (a newer iteration), which starts at static cost 1, up"
	linkUnknown = "no such link"
)

// connState takes a link's new connections, if the report is of its
// current iteration and newer than the last one.
func (t *links) connState(u wire.LinkStateUpdate) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.byID[u.LinkID]
	if l == nil || u.ConnState == nil || u.Iteration != l.Iteration || u.ConnState.StateIteration < l.StateIteration {
		return
	}
	l.Conns, l.StateIteration = u.ConnState.Conns, u.ConnState.StateIteration
}

// fault removes link id unless the fault is of an older iteration than
// the link's; it returns the link removed. The operators' changes of the
// link go with it.
func (t *links) fault(id string, iteration uint32) *Link {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.byID[id]
	if l == nil || (iteration != 0 && l.Iteration != 0 && iteration < l.Iteration) {
		return nil
	}
	delete(t.byID, id)
	t.pathsOK = false
	for k := range t.set {
		if k.id == id && k.iteration <= l.Iteration {
			delete(t.set, k)
		}
	}
	return l
}

// endsOf are link id's routers (ok false: no such link).
func (t *links) endsOf(id string) (src, dst string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.byID[id]; l != nil {
		return l.SrcRouterID, l.DstRouterID, true
	}
	return "", "", false
}

// removeFrom removes the links router id dialed (it reports them again
// when it reconnects) and returns them.
func (t *links) removeFrom(id string) []*Link {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*Link
	for lid, l := range t.byID {
		if l.SrcRouterID == id {
			out = append(out, l)
			delete(t.byID, lid)
			t.pathsOK = false
		}
	}
	return out
}

// latency sets the latency router routerID measured on link id.
func (t *links) latency(routerID, id string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.byID[id]
	switch {
	case l == nil:
	case l.SrcRouterID == routerID:
		l.SrcLatency, t.pathsOK = d, false
	case l.DstRouterID == routerID:
		l.DstLatency, t.pathsOK = d, false
	}
}

// usable are the links paths may take, at their cost, by id: all but
// those an operator took down. The slice is shared until the table
// changes: callers must not modify it.
func (t *links) usable() []path.Link {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pathsOK {
		return t.paths
	}
	out := make([]path.Link, 0, len(t.byID))
	for _, l := range t.byID {
		if !l.Down {
			out = append(out, path.Link{ID: l.ID, From: l.SrcRouterID, To: l.DstRouterID, Cost: l.Cost()})
		}
	}
	slices.SortFunc(out, func(a, b path.Link) int { return strings.Compare(a.ID, b.ID) })
	t.paths, t.pathsOK = out, true
	return out
}

// all returns copies of the links, by id.
func (t *links) all() []Link {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Link, 0, len(t.byID))
	for _, l := range t.byID {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
