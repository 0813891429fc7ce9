package dataplane

import (
	"strings"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"
)

// Peers: each router announces its link listeners in its hello; this node
// tells every connected router the listeners of the others (announce,
// retire), and answers a listening router whether a link's dialer is who it
// says (verifyRouter).

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
		m.tellPeers(o, wire.PeerStateChanges([]wire.PeerStateChange{peerState(r, wire.PeerHealthy)}))
	}
	if len(changes) > 0 {
		m.tellPeers(r, wire.PeerStateChanges(changes))
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
		m.tellPeers(o, body)
	}
}

// tellPeers sends router o a PeerStateChanges body on o's own queue, one
// at a time and in order (a router's arrival is never told after its
// departure): the router that arrives or leaves, and whatever follows its
// arrival or departure (its circuits ended), never waits for o.
func (m *Manager) tellPeers(o *Router, body []byte) {
	m.submit("peers/"+o.ID, 1, func() { _ = m.send(o, ctrlchan.NewMessage(wire.PeerStateChangesType, body)) })
}
