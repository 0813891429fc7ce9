package dataplane

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"edgectl/ctrlchan"
	"edgectl/dataplane/path"
	"edgectl/dataplane/wire"
)

// Moving circuits (docs/openziti.md, "Links and paths"): a link or a
// router in the middle of a path that fails, an operator's link change and
// a cheaper path (smart rerouting) move a circuit to another path between
// the same ends, or end it where there is none.

// dropRouterCircuits ends the circuits that began or ended on a router
// that is gone (away.go: not back within its grace, deleted, disabled):
// every router of their paths unroutes them (the gone one if it ever
// returns). Those that crossed it move to other paths.
func (m *Manager) dropRouterCircuits(routerID string) {
	for _, ci := range m.circuits.endWhere("router "+routerID+" at an end of it is gone", func(c *Circuit) bool {
		return len(c.Path) > 0 && (c.Path[0] == routerID || c.Path[len(c.Path)-1] == routerID)
	}) {
		m.circuitEnded(ci, "router "+routerID+" at an end of it is gone")
		m.unrouteAll(ci.Path, ci.ID, true)
	}
	for _, ci := range m.circuits.where(func(c *Circuit) bool { return slices.Contains(c.Path, routerID) }) {
		m.moveLater(ci.ID, "router "+routerID+" of its path is gone")
	}
}

// rerouteLink moves the circuits that use link id to the cheapest path
// (another one, when the link is gone or down).
func (m *Manager) rerouteLink(id, why string) {
	for _, ci := range m.circuits.where(func(c *Circuit) bool { return slices.Contains(c.Links, id) }) {
		m.moveLater(ci.ID, why)
	}
}

// moveLater moves circuit id to another path in the background, on the
// pool of its ingress router.
func (m *Manager) moveLater(id, why string) {
	ci, _ := m.circuits.get(id)
	if ci == nil {
		return
	}
	m.submit("moves/"+ci.IngressRouterID, movesPerRouter, func() { m.reroute(id, why, false) })
}

// reroute moves circuit id to the cheapest path between the same ingress
// and egress routers (moveOnce). Circuits move independently; a circuit
// asked to move while it is built or moved moves once more when done, over
// the links as they are then. An optional move (nothing failed) leaves a
// circuit that is busy or in doubt (circuits.startMove).
func (m *Manager) reroute(id, why string, optional bool) {
	for why != "" {
		old := m.circuits.startMove(id, why, optional)
		optional = false // a move asked for meanwhile (again) is a fault's
		if old == nil {
			return // gone, or its owner moves it when done
		}
		next, err := m.moveOnce(old)
		failed, kept := "", false
		if err != nil && !errors.Is(err, errEnded) && m.anyAway(old.Path) && m.linksKept(old.Links) {
			// Its routers still carry it, as far as this node knows: one
			// of them is only away (its channel here closed, it may be
			// back in a moment, as after this node was cut off from the
			// routers) and no link of its path is known to have failed.
			// It stays on its path.
			next, kept = old, true
		} else if err != nil {
			failed = "no other path: " + err.Error()
		}
		unroute, ended, again, doubt := m.circuits.finishMove(old, next, failed)
		slices.Sort(unroute)
		m.unrouteAll(unroute, id, true)
		if doubt {
			m.probeLater(next.Path[0]) // in doubt (probe.go)
		}
		switch {
		case kept && ended == "":
			m.metrics.reroutes.WithLabelValues("kept").Inc()
			m.log.Info("circuit kept on its path: no other path while a router of it is away", "circuit", id, "reason", why, "error", err)
		case ended != "":
			m.metrics.reroutes.WithLabelValues("ended").Inc()
			m.log.Info("circuit ended while it moved", "circuit", id, "reason", why, "ended", ended)
			m.circuitEnded(old, ended)
		default:
			m.metrics.reroutes.WithLabelValues("moved").Inc()
			m.log.Info("circuit rerouted", "circuit", id, "reason", why, "path", strings.Join(next.Path, ">"))
			m.circuitRerouted(old, next, why)
		}
		why = again
	}
}

// anyAway says whether a router of path is away from this node.
func (m *Manager) anyAway(path []string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range path {
		if m.aways[id] != nil {
			return true
		}
	}
	return false
}

// linksKept says whether every link of ids is still in the link table.
func (m *Manager) linksKept(ids []string) bool {
	for _, id := range ids {
		if _, _, ok := m.links.endsOf(id); !ok {
			return false
		}
	}
	return true
}

// moveOnce routes circuit old on the cheapest path between the same
// ingress and egress routers, keeping its ingress and egress (the client's
// stream goes on: only the routers' forwarding changes): each router of the
// new path gets its route, the ingress first, each awaited. It returns the
// circuit on its new path, or why there is none.
func (m *Manager) moveOnce(old *Circuit) (*Circuit, error) {
	// Two tries, as OpenZiti's: a router that refuses its route may name a
	// link that is gone before its fault reached this node; the second try
	// avoids the links of the route it refused.
	var err error
	shun := map[string]bool{}
	for try := 0; try < 2; try++ {
		var p path.Path
		if p, err = m.graph(m.cfg.Store.Read(), shun).Shortest(old.Path[0], old.Path[len(old.Path)-1]); err != nil {
			return nil, err
		}
		next := *old
		next.Path, next.Links = p.Nodes, p.Links
		if err = m.routeInOrder(&next); err == nil {
			return &next, nil
		}
		if errors.Is(err, errEnded) {
			return nil, err
		}
		avoid(shun, err)
	}
	return nil, err
}

// errEnded: the circuit was ended during its move.
var errEnded = errors.New("the circuit was ended")

// routeInOrder sends a rerouted circuit's routes one router at a time, the
// ingress first, each waiting for its result: a router forwards to a link
// only once the router at the link's other end knows the circuit.
func (m *Manager) routeInOrder(ci *Circuit) error {
	msgs := ci.hops().Routes(wire.SmartRerouteAttempt, nil, m.cfg.RouteTimeout)
	for i, id := range ci.Path {
		r := m.router(id)
		if r == nil {
			return fmt.Errorf("router %s of the path is not connected to this node", id)
		}
		if !m.circuits.moveHop(ci.ID, id) {
			return errEnded
		}
		ctx, cancel := m.timeout(m.cfg.RouteTimeout)
		reply, err := m.request(ctx, r, ctrlchan.NewMessage(wire.RouteType, msgs[i]))
		cancel()
		if err != nil {
			return &routeError{err: fmt.Errorf("router %s: %w", id, err), suspect: ci.hops().LinksAt(i)}
		}
		if _, ok := reply.Headers[wire.RouteResultSuccessHeader]; !ok {
			reason, _ := reply.Headers.String(wire.RouteResultErrorHeader)
			return &routeError{err: fmt.Errorf("router %s: %s", id, reason), suspect: ci.hops().LinksAt(i), result: reply}
		}
	}
	return nil
}

// smartReroute moves the circuits whose cheapest path became cheaper
// enough (path.SmartReroutes): an optimisation, so only live circuits
// not in doubt (circuits.movable), and none marked to move later.
func (m *Manager) smartReroute() {
	cs := m.circuits.movable()
	if len(cs) == 0 {
		return
	}
	open := make([]path.Circuit, 0, len(cs))
	for _, ci := range cs {
		open = append(open, ci.hops())
	}
	for _, id := range path.SmartReroutes(m.graph(m.cfg.Store.Read(), nil), open) {
		m.reroute(id, "a cheaper path", true)
	}
}
