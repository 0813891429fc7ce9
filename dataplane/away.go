package dataplane

import (
	"errors"
	"slices"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"
)

// A router away (docs/openziti.md, "A router away from a node"). A router
// whose control channel to this node closes has not left the network: it
// keeps its links, its circuits and its channels to the other nodes, and
// dials this node again. So its circuits and the links it dialed are kept
// for a grace period (Config.RouterGrace): the router is away, not gone,
// and its circuits end only as any circuit does, by a fault of an end, a
// path that can no longer be found (a link fault another router reports)
// or an admin. OpenZiti's controller keeps them too, with no grace at all.
//
// The router is gone when the grace passes without it coming back, or at
// once when it is deleted, disabled or enrolled again: its links go, and
// its circuits end (an end of theirs) or move (a router of their middle),
// as before.
//
// What this node could not tell the router while it was away (the
// Unroutes of circuits that ended or moved off it, and those sent just
// before its channel closed, which may have been lost with it) is kept,
// and sent when it comes back. Then the node asks it for its circuits and
// links (the router-circuits and links inspections) and ends the
// circuits, and removes the links, that it had on that router and the
// router no longer has: whatever ended while the router could not say.
// No circuit is left routed on one router and not on another.

// defaultRouterGrace is how long a router may be away before its circuits
// are ended (Config.RouterGrace).
const defaultRouterGrace = 30 * time.Second

// reconcileTimeout bounds the wait for a returning router's inspections.
const reconcileTimeout = 30 * time.Second

// Pending unroutes are bounded: per router, and in age.
const (
	maxPendingUnroutes = 100_000
	pendingUnrouteTTL  = 30 * time.Minute
	// recentUnroutes are the last Unroutes sent to a router, kept so that
	// those its channel may have lost as it closed are sent again.
	recentUnroutes   = 256
	recentUnrouteAge = 10 * time.Second
)

// awayRouter is a router whose channel to this node closed, within its
// grace; back is closed when it returns or is gone.
type awayRouter struct {
	kind  *store.Kind
	since time.Time
	back  chan struct{}
}

// sentUnroute is an Unroute sent to a router, and when.
type sentUnroute struct {
	id string
	at time.Time
}

// lostUnroutes keeps, to send again, the Unroutes sent to router r in
// the moments before its channel closed: they may have been lost with it.
func (m *Manager) lostUnroutes(r *Router) {
	r.mu.Lock()
	var lost []string
	cutoff := m.cfg.Now().Add(-recentUnrouteAge)
	for _, u := range r.unrouted {
		if u.at.After(cutoff) {
			lost = append(lost, u.id)
		}
	}
	r.unrouted = nil
	r.mu.Unlock()
	m.unrouteWhenBack(r.ID, r, lost...)
}

// awayLocked makes router id away since since (m.mu held), and returns
// its state; nil when it is back already or the node shuts down.
func (m *Manager) awayLocked(id string, kind *store.Kind, since time.Time) *awayRouter {
	if m.routers[id] != nil || m.closed {
		return nil
	}
	if old := m.aways[id]; old != nil {
		close(old.back)
	}
	a := &awayRouter{kind: kind, since: since, back: make(chan struct{})}
	m.aways[id] = a
	return a
}

// away follows router r's channel closing while this node runs: a dial
// waiting for its answer is told it left, and the router is gone now
// (gone: why) or once its grace, from when it went away (a), passes
// without its return.
func (m *Manager) away(r *Router, gone string, a *awayRouter) {
	// The attempt fails at once and the next one goes around it.
	for _, ci := range m.circuits.where(func(c *Circuit) bool { return slices.Contains(c.Path, r.ID) }) {
		m.circuits.deliver(ci.ID, routeAnswer{router: r.ID})
	}
	switch {
	case gone != "":
		m.gone(r.ID, gone)
	case a != nil:
		m.log.Info("router away: its circuits and links are kept while it may return", "router", r.ID, "grace", m.cfg.RouterGrace)
		m.awaitReturn(r.ID, a)
		m.checkAwayLinks(r.ID, a)
	}
}

// awayLinkChecks are when, after a router went away, the other ends of the
// links it dialed are asked whether they still have them.
var awayLinkChecks = []time.Duration{500 * time.Millisecond, 2 * time.Second, 5 * time.Second, 10 * time.Second}

// checkAwayLinks asks the other end of each link router id dialed, when it
// is connected to this node, whether it still holds the link (its links
// inspection); a link it no longer holds failed: its circuits move or end
// now, not when the grace passes. Only the dialer reports a link (and its
// faults), so without this a router that died would leave its links usable
// for the whole grace; a node cut off from every router has no other end
// to ask and keeps them.
func (m *Manager) checkAwayLinks(id string, a *awayRouter) {
	m.goAttach(func() {
		for _, wait := range awayLinkChecks {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-a.back:
				t.Stop()
				return
			case <-m.stop:
				t.Stop()
				return
			}
			byEnd := map[string][]string{}
			for _, l := range m.links.all() {
				if l.SrcRouterID == id && m.router(l.DstRouterID) != nil {
					byEnd[l.DstRouterID] = append(byEnd[l.DstRouterID], l.ID)
				}
			}
			if len(byEnd) == 0 {
				return
			}
			for end, ids := range byEnd {
				r := m.router(end)
				if r == nil {
					continue
				}
				resp, err := m.inspect(r, inspectLinks)
				var has map[string]bool
				if err == nil {
					has, err = inspectedLinks(resp.Values[inspectLinks])
				}
				if err != nil {
					m.log.Debug("the other end of an away router's links could not be asked", "router", id, "other end", end, "error", err)
					continue
				}
				for _, lid := range ids {
					if has[lid] {
						continue
					}
					why := "router " + id + " that dialed it is away and router " + end + " no longer has it"
					m.failLink(lid, 0, why, "link "+lid+" of its path failed: "+why, "link down", "reason", why)
				}
			}
		}
	})
}

// keepAway makes router id away since since (its hello failed as it
// returned).
func (m *Manager) keepAway(id string, kind *store.Kind, since time.Time) {
	m.mu.Lock()
	a := m.awayLocked(id, kind, since)
	m.mu.Unlock()
	if a != nil {
		m.awaitReturn(id, a)
	}
}

// awaitReturn makes router id gone once its grace from a.since passes,
// unless it returns first.
func (m *Manager) awaitReturn(id string, a *awayRouter) {
	m.goAttach(func() {
		t := time.NewTimer(m.cfg.RouterGrace - m.cfg.Now().Sub(a.since))
		defer t.Stop()
		select {
		case <-t.C:
		case <-a.back:
			return
		case <-m.stop:
			return
		}
		if m.takeAway(id, a) {
			m.routerGone(id, "router "+id+" did not return within "+m.cfg.RouterGrace.String())
		}
	})
}

// takeAway ends router id's away state a, if it is still that one; it
// says whether it was.
func (m *Manager) takeAway(id string, a *awayRouter) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.aways[id] != a {
		return false
	}
	delete(m.aways, id)
	close(a.back)
	return true
}

// gone ends router id's away state, if any, and its circuits and links.
func (m *Manager) gone(id, why string) {
	m.mu.Lock()
	if a := m.aways[id]; a != nil {
		delete(m.aways, id)
		close(a.back)
	}
	m.mu.Unlock()
	m.routerGone(id, why)
}

// routerGone ends the circuits of router id, gone for why: those it was an
// end of end, those it was in the middle of move; the links it dialed go.
// A deleted router never returns: nothing is kept for it.
func (m *Manager) routerGone(id, why string) {
	m.log.Info("router gone: its circuits end or move", "router", id, "reason", why)
	m.linksDown("router "+id+" that dialed it is gone", m.links.removeFrom(id)...)
	m.dropRouterCircuits(id)
	if why == whyDeleted {
		m.unroutesMu.Lock()
		delete(m.unroutes, id)
		m.unroutesMu.Unlock()
	}
}

// returnedLocked ends router id's away state as it connects again (m.mu
// held): it returns when the router went away, and whether it was.
func (m *Manager) returnedLocked(id string) (time.Time, bool) {
	a := m.aways[id]
	if a == nil {
		return time.Time{}, false
	}
	delete(m.aways, id)
	close(a.back)
	return a.since, true
}

// checkAways ends the away state of the routers deleted, disabled or
// enrolled again in tx: they are gone.
func (m *Manager) checkAways(tx *store.Tx) {
	m.mu.Lock()
	type aw struct {
		id   string
		kind *store.Kind
	}
	var all []aw
	for id, a := range m.aways {
		all = append(all, aw{id, a.kind})
	}
	m.mu.Unlock()
	for _, a := range all {
		if why := recordRefuses(tx, a.kind, a.id); why != "" {
			m.gone(a.id, why)
		}
	}
}

// unrouteLater keeps Unroutes of circuits ids for router id, not
// connected, to send when it connects.
func (m *Manager) unrouteLater(id string, circuits ...string) {
	m.unrouteWhenBack(id, nil, circuits...)
}

// unrouteWhenBack keeps Unroutes of circuits for router id, to send when
// it connects; failed is the channel of id that could not take them (nil:
// none was connected). The router may have connected, and taken what was
// kept for it (reconcile), since the caller found it absent: then they
// are sent to it now, not left for its next return. Whichever comes last
// of the keeping and the router's taking sends them: the router is
// registered before it takes, and looked up here after keeping.
func (m *Manager) unrouteWhenBack(id string, failed *Router, circuits ...string) {
	if !m.keepUnroutes(id, circuits) {
		return
	}
	if r := m.router(id); r != nil && r != failed {
		m.sendKeptUnroutes(r)
	}
}

// sendKeptUnroutes sends connected router r the Unroutes kept for it,
// but those of circuits it holds rightly again.
func (m *Manager) sendKeptUnroutes(r *Router) {
	for _, id := range m.takeUnroutes(r.ID) {
		if !m.circuits.keeps(id, r.ID) {
			m.unroute(r.ID, id, true)
		}
	}
}

// keepUnroutes adds circuits to the Unroutes kept for router id; it says
// whether any was kept.
func (m *Manager) keepUnroutes(id string, circuits []string) bool {
	if len(circuits) == 0 {
		return false
	}
	now := m.cfg.Now()
	m.unroutesMu.Lock()
	defer m.unroutesMu.Unlock()
	if m.unroutes == nil {
		m.unroutes = map[string]map[string]time.Time{}
	}
	set := m.unroutes[id]
	if set == nil {
		set = map[string]time.Time{}
		m.unroutes[id] = set
	}
	for _, c := range circuits {
		if len(set) >= maxPendingUnroutes {
			for k, at := range set {
				if now.Sub(at) > pendingUnrouteTTL {
					delete(set, k)
				}
			}
			if len(set) >= maxPendingUnroutes {
				return true
			}
		}
		set[c] = now
	}
	return true
}

// takeUnroutes returns the Unroutes kept for router id, forgetting them.
func (m *Manager) takeUnroutes(id string) []string {
	m.unroutesMu.Lock()
	set := m.unroutes[id]
	delete(m.unroutes, id)
	m.unroutesMu.Unlock()
	now := m.cfg.Now()
	out := make([]string, 0, len(set))
	for c, at := range set {
		if now.Sub(at) <= pendingUnrouteTTL {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// noteUnroute records an Unroute sent to r (its channel may lose it).
func (r *Router) noteUnroute(id string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.unrouted) >= recentUnroutes {
		r.unrouted = r.unrouted[1:]
	}
	r.unrouted = append(r.unrouted, sentUnroute{id: id, at: at})
}

// reconcile runs as router r connects: it is sent the Unroutes it missed
// (but those of circuits it holds rightly again), and, when it was away,
// asked for its circuits and links; the circuits this node had on it that
// it no longer has end, and the links it dialed that it no longer has go.
func (m *Manager) reconcile(r *Router, wasAway bool) {
	m.sendKeptUnroutes(r)
	if !wasAway {
		return
	}
	// What this node had on the router before asking: a circuit routed or
	// a link reported since is not in question.
	held := m.circuits.liveOn(r.ID)
	var dialed []string
	for _, l := range m.links.all() {
		if l.SrcRouterID == r.ID {
			dialed = append(dialed, l.ID)
		}
	}
	if len(held) == 0 && len(dialed) == 0 {
		return
	}
	resp, err := m.inspect(r, inspectRouterCircuits, inspectLinks)
	if errors.Is(err, ctrlchan.ErrClosed) {
		// Gone again: its next return reconciles it.
		m.log.Debug("a returning router left before its circuits and links were read", "router", r.ID)
		return
	}
	if err != nil {
		// Sampled: a router reconnecting in a loop must not fill the log.
		m.sampler.warn("reconcile", r.ID, "a returning router's circuits and links could not be read: they are kept", "router", r.ID, "error", err)
		return
	}
	if has, err := inspectedCircuits(resp.Values[inspectRouterCircuits]); err != nil {
		m.sampler.warn("reconcile", r.ID, "a returning router's circuits could not be read: they are kept", "router", r.ID, "error", err)
	} else {
		for id, c := range held {
			if _, ok := has[id]; !ok {
				m.endIfSame(c, "router "+r.ID+" no longer has it (it ended while the router was away)")
			}
		}
	}
	if has, err := inspectedLinks(resp.Values[inspectLinks]); err != nil {
		m.sampler.warn("reconcile", r.ID, "a returning router's links could not be read: they are kept", "router", r.ID, "error", err)
	} else {
		for _, id := range dialed {
			if has[id] {
				continue
			}
			if l := m.links.fault(id, 0); l != nil && l.SrcRouterID == r.ID {
				m.log.Info("link gone while its router was away", "link", id, "router", r.ID)
				m.linksDown("router "+r.ID+" that dialed it no longer has it", l)
				m.rerouteLink(id, "link "+id+" of its path is gone")
			}
		}
	}
}

// The inspections a returning router is asked for, as OpenZiti's routers
// name them.
const (
	inspectRouterCircuits = "router-circuits"
	inspectLinks          = "links"
)

// inspect asks router r for the inspection values named, waiting at most
// reconcileTimeout.
func (m *Manager) inspect(r *Router, values ...string) (wire.InspectResponse, error) {
	ctx, cancel := m.timeout(reconcileTimeout)
	defer cancel()
	reply, err := m.request(ctx, r, ctrlchan.NewMessage(wire.InspectRequestType, wire.InspectRequest(values...)))
	if err != nil {
		return wire.InspectResponse{}, err
	}
	return wire.DecodeInspectResponse(reply.Body)
}

// inspectedLinks are the link ids of a links inspection.
func inspectedLinks(value string) (map[string]bool, error) {
	if value == "" {
		return nil, errors.New("no links value")
	}
	links, err := wire.DecodeInspectedLinks(value)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(links))
	for _, l := range links {
		out[l.ID] = true
	}
	return out, nil
}

// endIfSame ends circuit c, if it is still live on the same path, for why:
// every router of its path is told to unroute it.
func (m *Manager) endIfSame(c *Circuit, why string) {
	if !m.circuits.endSame(c) {
		return
	}
	m.unrouteAll(c.Path, c.ID, true)
	m.log.Info("circuit ended", "circuit", c.ID, "reason", why)
	m.circuitEnded(c, why)
}
