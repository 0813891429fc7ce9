package dataplane

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"edgectl/auth"
	"edgectl/ctrlchan"
	"edgectl/dataplane/path"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/policy"
	"edgectl/store"
)

// Circuits. An SDK client (or a tunneler) dials a service through an edge
// router; the router asks this node for a circuit with the client's Dial
// session. The node checks the session as for terminators, picks a
// terminator of the service (the one the client named by instance id, else
// by precedence, then its cost plus the cost of the path to its router),
// routes the circuit on every router of the path (paths.go: a Route each,
// forwarding between the ingress, the links and the egress, the last one
// dialing the terminator), waits for every router's route result and
// answers with the circuit's id, its ingress address and the host's peer
// data. Circuits live in memory on the node that made them. A link that
// fails, or a router in the middle that goes, moves the circuits that used
// it to another path between the same ends (reroute), or ends them where
// there is none. They end when either end closes (a fault), when the
// routers no longer have them (their confirmations), when an end router
// goes, and when access is lost (the session ends: logout, expiry, a
// policy or posture change, a disabled identity), each with an Unroute to
// every router of the path.

// defaultRouteTimeout bounds a route's answer (Config.RouteTimeout).
const defaultRouteTimeout = 10 * time.Second

// Circuit is a circuit this node routed.
type Circuit struct {
	ID       string `json:"id"`
	RouterID string `json:"routerId"` // the ingress router
	// Path is the routers it crosses, the ingress first; Links the link
	// between each two.
	Path         []string  `json:"path"`
	Links        []string  `json:"links"`
	IngressID    string    `json:"ingressId"`
	EgressID     string    `json:"egressId"`
	TerminatorID string    `json:"terminatorId"`
	ServiceID    string    `json:"serviceId"`
	IdentityID   string    `json:"identityId"`
	SessionID    string    `json:"sessionId"`
	APISessionID string    `json:"apiSessionId"`
	CreatedAt    time.Time `json:"createdAt"`
}

// ErrNoCircuit: this node routed no circuit of that id.
var ErrNoCircuit = errors.New("no circuit of this id on this node")

// EndCircuit ends circuit id: its routers are told to unroute it now (a
// circuit being moved: once the move has stopped, on its old path and on
// the routers the move reached).
func (m *Manager) EndCircuit(id string) error {
	if !m.endCircuit(id, "deleted by an admin", true, false) {
		return ErrNoCircuit
	}
	return nil
}

// endCircuit ends circuit id for why (as circuits.end): a live one is
// unrouted on its path now, one being built or moved by its owner when
// done. It says whether there was such a circuit.
func (m *Manager) endCircuit(id, why string, now, evenBuilding bool) bool {
	ci, ok := m.circuits.end(id, why, evenBuilding)
	if ci != nil {
		m.unrouteAll(ci.Path, id, now)
		m.log.Info("circuit ended", "circuit", id, "reason", why)
	}
	return ok
}

// unroute tells router routerID to drop circuit id.
func (m *Manager) unroute(routerID, id string, now bool) {
	m.mu.Lock()
	r := m.routers[routerID]
	m.mu.Unlock()
	if r == nil || r.channel() == nil {
		return
	}
	_ = m.send(r, ctrlchan.NewMessage(wire.UnrouteType, wire.Unroute(id, now)))
}

// unrouteAll tells every router of a path to drop circuit id.
func (m *Manager) unrouteAll(path []string, id string, now bool) {
	for _, r := range path {
		m.unroute(r, id, now)
	}
}

// dial handles CreateCircuitV2Request.
func (m *Manager) dial(r *Router, msg *ctrlchan.Message) {
	start := time.Now()
	fail := func(err error, circuitID string) {
		code := uint32(wire.ErrInternal)
		var se *sessionError
		if errors.As(err, &se) {
			code = se.code
		}
		reply := ctrlchan.NewMessage(wire.ErrorType, []byte(err.Error()))
		reply.Headers.PutUint32(wire.ErrorCodeHeader, code)
		if circuitID != "" {
			reply.Headers.PutString(wire.CircuitIDHeader, circuitID)
		}
		_ = m.reply(r, msg, reply)
		m.metrics.dials.WithLabelValues("refused").Inc()
		m.log.Info("dial refused", "router", r.ID, "reason", err.Error())
	}
	req, err := wire.DecodeCreateCircuitV2Request(msg.Headers)
	if err != nil {
		fail(err, "")
		return
	}
	tx := m.cfg.Store.Read()
	s, as, err := m.sessionOf(tx, req.SessionToken, req.APISessionToken)
	if err == nil && s.Type != policy.Dial {
		err = refusedSession(wire.ErrWrongSessionType, "the session is a %s session, not Dial", s.Type)
	}
	if err == nil {
		err = mayUseRouter(tx, s, r.ID)
	}
	if err != nil {
		fail(err, "")
		return
	}
	ci := &Circuit{ID: auth.NewID(), RouterID: r.ID, ServiceID: s.ServiceID, IdentityID: s.IdentityID, SessionID: s.ID,
		APISessionID: as.ID, CreatedAt: m.cfg.Now().UTC()}
	// The circuit is reserved, building, before any route goes out: a
	// fault, a confirmation or an end may come before the results.
	m.circuits.reserve(ci)
	// Two attempts, as OpenZiti's: a terminator that fails is left out of
	// the second, and one its router no longer has is removed.
	var result *ctrlchan.Message
	failed, shun := map[string]bool{}, map[string]bool{}
	for attempt := uint32(0); ; attempt++ {
		tx := m.cfg.Store.Read()
		t, p, err := path.Pick(m.graph(tx, shun), path.Terminators(tx, s.ServiceID), s.ServiceID, r.ID, req.TerminatorInstanceID, failed)
		if err != nil {
			if attempt > 0 {
				err = fmt.Errorf("%w (after %d failed attempts)", err, attempt)
			}
			m.circuits.abandon(ci.ID)
			fail(err, ci.ID)
			return
		}
		ci.TerminatorID, ci.IngressID, ci.EgressID = t.ID, auth.NewToken()[:22], auth.NewToken()[:22]
		ci.Path, ci.Links = p.Nodes, p.Links
		answers := m.circuits.attempt(ci)
		var routeErr error
		result, routeErr = m.routeOn(ci, attempt, &wire.Egress{Binding: t.Binding, Address: ci.EgressID, Destination: t.Address, PeerData: req.PeerData}, answers)
		if routeErr == nil {
			break
		}
		m.unrouteAll(ci.Path, ci.ID, true)
		m.circuits.retract(ci.ID)
		if result != nil {
			if code, ok := result.Headers[wire.RouteResultErrorCodeHeader]; ok && len(code) == 1 && code[0] == wire.RouteErrInvalidTerminator && t.IsSystem {
				m.removeTerminator(t, "its router no longer has it")
			}
		}
		// The second attempt leaves out the terminator if it failed (a
		// single router's path: always), and the links of a route a router
		// refused (one may be gone before its fault came).
		var re *routeError
		if !errors.As(routeErr, &re) || re.egress || len(ci.Path) == 1 {
			failed[t.ID] = true
		}
		avoid(shun, routeErr)
		if why := m.circuits.endedWhy(ci.ID); why != "" {
			m.circuits.abandon(ci.ID)
			fail(fmt.Errorf("the circuit ended while it was routed: %s", why), ci.ID)
			return
		}
		if attempt+1 >= 2 || r.channel().Err() != nil {
			m.circuits.abandon(ci.ID)
			fail(fmt.Errorf("the host could not be reached: %s", routeErr), ci.ID)
			return
		}
	}
	if ended, again := m.circuits.promote(ci.ID); ended != "" {
		m.unrouteAll(ci.Path, ci.ID, true)
		fail(fmt.Errorf("the circuit ended while it was routed: %s", ended), ci.ID)
		return
	} else if again != "" {
		defer m.moveLater(ci.ID, again)
	}
	// The host's peer data: what its SDK told its router when it bound
	// (its public key, for end-to-end encryption), then what the egress
	// router answered, as OpenZiti's controller gives it.
	peer := map[uint32][]byte{}
	if t, err := store.GetAs[*store.Terminator](m.cfg.Store.Read(), store.KindTerminator, ci.TerminatorID); err == nil {
		for k, v := range t.PeerData {
			peer[k] = v
		}
	}
	for k, v := range result.Headers {
		if k >= 1000 && (k < wire.RouteResultAttemptHeader || k > wire.RouteResultErrorCodeHeader) &&
			(k < wire.TerminatorLocalAddressHeader || k > wire.InitiatorRemoteAddressHeader) {
			peer[uint32(k)] = v
		}
	}
	resp := ctrlchan.NewMessage(wire.CreateCircuitV2ResponseType, nil)
	resp.Headers = wire.CreateCircuitV2Response(ci.ID, ci.IngressID, peer)
	if err := m.reply(r, msg, resp); err != nil {
		m.endCircuit(ci.ID, "the ingress router did not take the answer", true, false)
		return
	}
	m.metrics.dials.WithLabelValues("routed").Inc()
	m.metrics.dialSeconds.Observe(time.Since(start).Seconds())
	m.log.Debug("circuit routed", "circuit", ci.ID, "path", strings.Join(ci.Path, ">"), "service", ci.ServiceID, "terminator", ci.TerminatorID, "took", time.Since(start))
}

// routeResult hands a router's route result to the dial waiting for it.
func (m *Manager) routeResult(r *Router, msg *ctrlchan.Message) {
	id := string(msg.Body)
	if !m.circuits.deliver(id, routeAnswer{router: r.ID, msg: msg}) {
		// A result nobody waits for: a late one, after the dial gave up
		// (a move's late results are of circuits that go on, or that the
		// move unrouted when it gave up).
		if !m.circuits.keeps(id, r.ID) {
			if n, _ := msg.Headers.Uint32(wire.RouteResultAttemptHeader); n != wire.SmartRerouteAttempt {
				m.unroute(r.ID, id, true)
			}
		}
	}
}

// fault handles a router's fault: an end of a circuit closed (the circuit
// ends and its routers unroute it), a router could not forward it (it
// moves), or a link failed (links.go). A circuit being built or moved is
// ended or moved by its owner once done.
func (m *Manager) fault(r *Router, msg *ctrlchan.Message) {
	f, err := wire.DecodeFault(msg.Body)
	if err != nil {
		return
	}
	switch f.Subject {
	case wire.IngressFault, wire.EgressFault:
		m.endCircuit(f.ID, "an end of it closed", false, true)
	case wire.ForwardFault, wire.UnknownOwnerForwardFault:
		for _, id := range strings.Fields(f.ID) {
			ci, _ := m.circuits.get(id)
			switch {
			case ci == nil:
				if f.Subject == wire.ForwardFault {
					m.unroute(r.ID, id, true)
				}
			case len(ci.Path) > 1:
				// A router of the path could not forward: its link may be
				// gone; a new path may have none of it.
				m.moveLater(ci.ID, "router "+r.ID+" could not forward it")
			default:
				m.endCircuit(id, "its router could not forward it", true, true)
			}
		}
	case wire.LinkFault, wire.LinkDuplicate:
		m.linkFault(r, f)
	}
}

// confirmCircuits takes a router's list of its circuits and unroutes those
// it should not hold (the router keeps circuits whose controller forgot
// them: this node restarted, or the circuit ended while it was away). A
// router a dial or a move under way has routed keeps the circuit.
func (m *Manager) confirmCircuits(r *Router, msg *ctrlchan.Message) {
	ids, err := wire.DecodeCircuitConfirmation(msg.Body)
	if err != nil {
		return
	}
	for _, id := range ids {
		if !m.circuits.keeps(id, r.ID) {
			m.unroute(r.ID, id, true)
		}
	}
}

// endCircuitsOf ends the circuits that lost their access: those of ended
// sessions or API sessions, and those of disabled identities.
func (m *Manager) endCircuitsOf(sessions, apiSessions, identities map[string]bool) {
	if len(sessions)+len(apiSessions)+len(identities) == 0 {
		return
	}
	for _, ci := range m.circuits.endWhere("its access was lost", func(c *Circuit) bool {
		return sessions[c.SessionID] || apiSessions[c.APISessionID] || identities[c.IdentityID]
	}) {
		m.unrouteAll(ci.Path, ci.ID, true)
		m.log.Info("circuit ended: access lost", "circuit", ci.ID, "identity", ci.IdentityID, "service", ci.ServiceID)
	}
}

// removeTerminator removes a router-made terminator that proved stale (a
// Raft write, on the pool of the terminator's router).
func (m *Manager) removeTerminator(t *store.Terminator, why string) {
	m.submit("requests/"+t.RouterID, requestsPerRouter, func() {
		ctx, cancel := m.timeout(writeTimeout)
		defer cancel()
		if _, err := m.cfg.Writer.Do(ctx, fsm.CmdTerminatorsDeleteByRouter, fsm.RouterTerminatorsDelete{RouterID: t.RouterID, IDs: []string{t.ID}}); err != nil {
			m.log.Warn("a stale terminator was not removed", "terminator", t.ID, "error", err)
			return
		}
		m.log.Info("terminator removed", "terminator", t.ID, "router", t.RouterID, "reason", why)
	})
}

// validateTerminators asks a router that connected which of its
// terminators it still has, and removes the others (hosts that went while
// the router could not tell any node).
func (m *Manager) validateTerminators(r *Router) {
	tx := m.cfg.Store.Read()
	var refs []wire.TerminatorRef
	byID := map[string]*store.Terminator{}
	tx.Each(store.KindTerminator, "router", func(rec store.Record) bool {
		t := rec.(*store.Terminator)
		if t.IsSystem {
			refs = append(refs, wire.TerminatorRef{ID: t.ID, Binding: t.Binding, Address: t.Address})
			byID[t.ID] = t
		}
		return true
	}, r.ID)
	if len(refs) == 0 {
		return
	}
	ctx, cancel := m.timeout(writeTimeout)
	defer cancel()
	reply, err := m.request(ctx, r, ctrlchan.NewMessage(wire.ValidateTerminatorsV2RequestType, wire.ValidateTerminatorsV2(refs, false)))
	if err != nil || reply.ContentType != wire.ValidateTerminatorsV2ResponseType {
		m.log.Warn("the router did not validate its terminators", "router", r.ID, "error", err)
		return
	}
	states, err := wire.DecodeValidateTerminatorsV2Response(reply.Body)
	if err != nil {
		return
	}
	for id, st := range states {
		if t := byID[id]; t != nil && !st.Valid {
			m.removeTerminator(t, "its router no longer has it: "+st.Detail)
		}
	}
}
