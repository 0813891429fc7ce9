package dataplane

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"
)

// Links between routers (docs/openziti.md, "Links and paths"). Each router
// announces its link listeners in its hello; this node tells every
// connected router the listeners of the others (PeerStateChanges), and
// routers dial each other. The listening router asks a node whether the
// dialer is who it says (VerifyRouter); the dialing router reports its
// links to every node (RouterLinks), their faults (Fault) and their
// latency (Metrics). Each node keeps the links reported to it, in memory:
// every router reports to every node, so a node's death removes no link
// from the others. Paths (paths.go) run over the usable links: both ends
// connected to this node.

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
	return true
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
// the link as changed, and what happened: linkChanged, or linkKept (the link
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
	return *l, linkChanged
}

// What a link change did on a node (change, ApplyLinkChange).
const (
	linkChanged = "changed"
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
	for k := range t.set {
		if k.id == id && k.iteration <= l.Iteration {
			delete(t.set, k)
		}
	}
	return l
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
		l.SrcLatency = d
	case l.DstRouterID == routerID:
		l.DstLatency = d
	}
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

// ErrNoLink: no link of that id is reported to this node.
var ErrNoLink = errors.New("no such link")

// LinkChange is what an operator changes of a link; nil fields stay.
type LinkChange struct {
	StaticCost *int
	Down       *bool
}

// UpdateLink changes link id's static cost, or takes it out of paths (down)
// or back, as OpenZiti's controller does on PATCH /links/{id}: the circuits
// over it then move to the cheapest path (off it, when it is down). The
// change lasts while the link does, through its router's reconnects to
// this node; a link that fails and is dialed again starts at static cost
// 1, up, and a node that restarts has no changes (they are in memory, as
// OpenZiti's). It returns the link as changed, or ErrNoLink.
func (m *Manager) UpdateLink(id string, c LinkChange) (Link, error) {
	l, what := m.links.change(id, nil, c)
	if what == linkUnknown {
		return Link{}, ErrNoLink
	}
	m.linkChanged(l, "link "+id+" of its path changed")
	return l, nil
}

// ApplyLinkChange makes on this node a change that another node made to
// link id at iteration (UpdateLink there), and says what it did: changed,
// kept until the link is reported here, or not made (a newer iteration
// here).
func (m *Manager) ApplyLinkChange(id string, iteration uint32, c LinkChange) string {
	l, what := m.links.change(id, &iteration, c)
	if what == linkChanged {
		m.linkChanged(l, "link "+id+" of its path changed on another node")
	}
	return what
}

// linkChanged logs an operator's change of l and moves its circuits.
func (m *Manager) linkChanged(l Link, why string) {
	m.log.Info("link changed", "link", l.ID, "iteration", l.Iteration, "staticCost", l.StaticCost, "down", l.Down)
	m.rerouteLink(l.ID, why)
}

// RemoveLink forgets link id and tells its routers to close it, as
// OpenZiti's controller does on DELETE /links/{id}: its circuits move to
// other paths, and the routers dial the link again (they report it anew).
// A link this node does not have is closed on every router connected to
// it (one may hold a link no node knows).
func (m *Manager) RemoveLink(id string) {
	l := m.links.fault(id, 0)
	var to []*Router
	fault := wire.Fault{Subject: wire.LinkFault, ID: id}
	if l != nil {
		m.log.Info("link removed", "link", id)
		m.rerouteLink(id, "link "+id+" of its path was removed")
		fault.Iteration = l.Iteration
		for _, end := range []string{l.SrcRouterID, l.DstRouterID} {
			if r := m.router(end); r != nil {
				to = append(to, r)
			}
		}
	} else {
		m.log.Info("unknown link removed: every connected router is told to close it", "link", id)
		to = m.connectedWhere(nil)
	}
	body := wire.EncodeFault(fault)
	for _, r := range to {
		if err := m.send(r, ctrlchan.NewMessage(wire.FaultType, body)); err != nil {
			m.log.Warn("a router was not told to close a removed link", "link", id, "router", r.ID, "error", err)
		}
	}
}

// Links lists the links reported to this node, by id.
func (m *Manager) Links() []Link { return m.links.all() }

// LinkUsable says whether both ends of l are connected to this node (a
// path may use it).
func (m *Manager) LinkUsable(l Link) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.routers[l.SrcRouterID] != nil && m.routers[l.DstRouterID] != nil
}

// routerLinks takes the links a router dialed.
func (m *Manager) routerLinks(r *Router, msg *ctrlchan.Message) {
	ls, err := wire.DecodeRouterLinks(msg.Body)
	if err != nil {
		m.log.Warn("a router's links could not be read", "router", r.ID, "error", err)
		return
	}
	for _, l := range ls {
		if l.ID == "" || l.DestRouterID == "" || l.DestRouterID == r.ID {
			continue
		}
		if m.links.report(r.ID, l, m.cfg.Now().UTC()) {
			m.log.Info("link up", "link", l.ID, "from", r.ID, "to", l.DestRouterID, "iteration", l.Iteration)
		}
	}
}

// linkState takes a router's report that a link's connections changed.
func (m *Manager) linkState(r *Router, msg *ctrlchan.Message) {
	u, err := wire.DecodeLinkStateUpdate(msg.Body)
	if err != nil {
		m.log.Warn("a link's state could not be read", "router", r.ID, "error", err)
		return
	}
	m.links.connState(u)
}

// linkFault takes a router's report that a link closed (or is a
// duplicate of another): the link goes, its circuits move to other paths,
// and the router at its other end is told, so that it closes its end too.
func (m *Manager) linkFault(r *Router, f wire.Fault) {
	l := m.links.fault(f.ID, f.Iteration)
	if l == nil {
		return
	}
	m.log.Info("link down", "link", l.ID, "reported by", r.ID, "subject", f.Subject)
	usable := m.LinkUsable(*l)
	m.rerouteLink(l.ID, "link "+l.ID+" of its path failed")
	if !usable {
		return
	}
	if other := m.router(l.other(r.ID)); other != nil {
		_ = m.send(other, ctrlchan.NewMessage(wire.FaultType, wire.EncodeFault(wire.Fault{Subject: wire.LinkFault, ID: l.ID, Iteration: l.Iteration})))
	}
}

// linkMetrics takes a router's link latencies from its metrics: the mean
// round trip plus the mean queue time of each of its links.
func (m *Manager) linkMetrics(r *Router, msg *ctrlchan.Message) {
	_, means, err := wire.DecodeMetrics(msg.Body)
	if err != nil {
		return
	}
	for name, mean := range means {
		id, ok := strings.CutPrefix(name, "link.")
		if !ok {
			continue
		}
		if id, ok = strings.CutSuffix(id, ".latency"); !ok {
			continue
		}
		m.links.latency(r.ID, id, time.Duration(mean+means["link."+id+".queue_time"]))
	}
}

// verifyRouter answers a router that accepted a link: is the dialer the
// router it names, an enrolled router whose certificate it presented?
func (m *Manager) verifyRouter(r *Router, msg *ctrlchan.Message) {
	id, fps, err := wire.DecodeVerifyRouter(msg.Body)
	ok, why := false, "the request could not be read"
	if err == nil {
		ok, why = verifiedRouter(m.cfg.Store.Read(), id, fps)
	}
	if !ok {
		m.log.Warn("a link's dialer was not verified", "router", r.ID, "dialer", id, "reason", why)
	}
	_ = m.reply(r, msg, ctrlchan.NewResult(ok, why))
}

// verifiedRouter says whether router id is enrolled with one of the
// certificate fingerprints fps.
func verifiedRouter(tx *store.Tx, id string, fps []string) (bool, string) {
	for _, k := range []*store.Kind{store.KindEdgeRouter, store.KindRouter} {
		rec, err := tx.Get(k, id)
		if err != nil {
			continue
		}
		e := enrollmentOf(rec)
		if !e.IsVerified || e.Fingerprint == nil {
			return false, "router " + id + " is not enrolled"
		}
		for _, fp := range fps {
			if strings.ToLower(strings.ReplaceAll(fp, ":", "")) == *e.Fingerprint {
				return true, ""
			}
		}
		return false, "router " + id + " did not present its certificate"
	}
	return false, "no router " + id
}

// router is the connected router id (nil when it is not connected).
func (m *Manager) router(id string) *Router {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.routers[id]; r != nil && r.channel() != nil {
		return r
	}
	return nil
}

// peerState is router r as its peers are told of it.
func peerState(r *Router, state uint64) wire.PeerStateChange {
	c := wire.PeerStateChange{ID: r.ID, State: state}
	if state == wire.PeerHealthy {
		c.Version, c.Listeners = r.Version.Version, r.listeners
	}
	return c
}

// announce tells router r the link listeners of every other connected
// router, and them r's: routers dial their links from these.
func (m *Manager) announce(r *Router) {
	var changes []wire.PeerStateChange
	for _, o := range m.connectedWhere(func(o *Router) bool { return o != r }) {
		changes = append(changes, peerState(o, wire.PeerHealthy))
		_ = m.send(o, ctrlchan.NewMessage(wire.PeerStateChangesType, wire.PeerStateChanges([]wire.PeerStateChange{peerState(r, wire.PeerHealthy)})))
	}
	if len(changes) > 0 {
		_ = m.send(r, ctrlchan.NewMessage(wire.PeerStateChangesType, wire.PeerStateChanges(changes)))
	}
}

// retire tells the other routers that r left: unhealthy while its record
// exists (it may come back), removed once it is deleted.
func (m *Manager) retire(r *Router) {
	state := uint64(wire.PeerUnhealthy)
	if _, err := m.cfg.Store.Read().Get(r.Kind, r.ID); err != nil {
		state = wire.PeerRemoved
	}
	body := wire.PeerStateChanges([]wire.PeerStateChange{peerState(r, state)})
	for _, o := range m.connectedWhere(func(o *Router) bool { return o != r }) {
		_ = m.send(o, ctrlchan.NewMessage(wire.PeerStateChangesType, body))
	}
}
