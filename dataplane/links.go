package dataplane

import (
	"errors"
	"strings"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
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

// ErrNoLink: no link of that id is reported to this node.
var ErrNoLink = errors.New("no such link")

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
	m.afterLinkChange(l, "link "+id+" of its path changed")
	return l, nil
}

// ApplyLinkChange makes on this node a change that another node made to
// link id at iteration (UpdateLink there), and says what it did: changed,
// kept until the link is reported here, or not made (a newer iteration
// here).
func (m *Manager) ApplyLinkChange(id string, iteration uint32, c LinkChange) string {
	l, what := m.links.change(id, &iteration, c)
	if what == LinkChanged {
		m.afterLinkChange(l, "link "+id+" of its path changed on another node")
	}
	return what
}

// afterLinkChange logs an operator's change of l and moves its circuits.
func (m *Manager) afterLinkChange(l Link, why string) {
	m.log.Info("link changed", "link", l.ID, "iteration", l.Iteration, "staticCost", l.StaticCost, "down", l.Down)
	m.rerouteLink(l.ID, why)
}

// RemoveLink forgets link id and tells its routers to close it, as
// OpenZiti's controller does on DELETE /links/{id}: its circuits move to
// other paths, and the routers dial the link again (they report it anew).
// A link this node does not have is closed on every router connected to
// it (one may hold a link no node knows).
func (m *Manager) RemoveLink(id string) {
	l := m.failLink(id, 0, "removed by an admin", "link "+id+" of its path was removed", "link removed")
	var to []*Router
	fault := wire.Fault{Subject: wire.LinkFault, ID: id}
	if l != nil {
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
			m.log.Info("link reported", "link", l.ID, "from", r.ID, "to", l.DestRouterID, "iteration", l.Iteration)
			m.linkUp(r.ID, l)
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
	if src, dst, ok := m.links.endsOf(u.LinkID); ok && r.ID != src && r.ID != dst {
		m.refuseRequest(r, reqLinkState, whyAnotherRouter, "link "+u.LinkID+" is between routers "+src+" and "+dst, true)
		return
	}
	m.links.connState(u)
}

// linkFault takes a router's report that a link closed (or is a
// duplicate of another): the link goes, its circuits move to other paths,
// and the router at its other end is told, so that it closes its end too.
func (m *Manager) linkFault(r *Router, f wire.Fault) {
	if src, dst, ok := m.links.endsOf(f.ID); ok && r.ID != src && r.ID != dst {
		m.refuseRequest(r, reqFault, whyAnotherRouter, "link "+f.ID+" is between routers "+src+" and "+dst, true)
		return
	}
	l := m.failLink(f.ID, f.Iteration, "a fault reported by router "+r.ID, "link "+f.ID+" of its path failed",
		"link fault reported", "reported by", r.ID, "subject", f.Subject)
	if l == nil || !m.LinkUsable(*l) {
		return
	}
	if other := m.router(l.other(r.ID)); other != nil {
		_ = m.send(other, ctrlchan.NewMessage(wire.FaultType, wire.EncodeFault(wire.Fault{Subject: wire.LinkFault, ID: l.ID, Iteration: l.Iteration})))
	}
}

// failLink takes link id out of this node's links as failed, unless the
// failure is of an older iteration than the link's (0: any): it logs msg
// with args, reports the link down for down, and moves the circuits over
// it to other paths for moved. It returns the link taken out, nil when
// there was none (then nothing is done). A router's fault, an admin's
// removal and an away router's link its other end no longer has all fail
// a link through it.
func (m *Manager) failLink(id string, iteration uint32, down, moved, msg string, args ...any) *Link {
	l := m.links.fault(id, iteration)
	if l == nil {
		return nil
	}
	m.log.Info(msg, append([]any{"link", id}, args...)...)
	m.linksDown(down, l)
	m.rerouteLink(id, moved)
	return l
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
