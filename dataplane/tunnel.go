package dataplane

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"time"

	"edgectl/auth"
	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/policy"
	"edgectl/store"
)

// A router's own tunneler. An edge router with isTunnelerEnabled runs a
// tunneler inside `ziti router` (a `tunnel` listener, mode host or proxy)
// that acts as the router's identity: the identity of type Router with the
// router's id (store/routeridentity.go). A router that holds the router
// data model finds that identity's services, configs and policies there,
// and asks this node only for what changes the model or the fabric:
//
//   - CreateTunnelTerminatorRequestV2 (host mode): a terminator, binding
//     "tunnel", hosted by the router's identity, of a service it may Bind;
//     the answer is a CreateTunnelTerminatorResponseV2 with a result;
//   - UpdateTunnelTerminatorRequest: its cost or precedence;
//   - TunnelHealthEvent: a health check's result (counted, no answer);
//   - CreateTunnelCircuitV2Request (proxy mode): a circuit for a service
//     it may Dial, named by name, answered with CreateTunnelCircuitV2Response
//     or an edge error;
//   - it removes its terminators with ctrl_pb.RemoveTerminatorsRequest
//     (terminators.go), as for any host of the router.
//
// Policies apply as to any identity: the router drops a service its model
// no longer grants (its terminator goes, its intercept closes), and this
// node checks the grant again on every request. Writes go through Raft as
// the SDK hosts' terminators do (terminator.createByRouter).

// tunnelBinding is the binding of a tunneler's terminators (OpenZiti's
// common.TunnelBinding): the router dials the host itself.
const tunnelBinding = "tunnel"

// tunnelIdentity is the identity router r's tunneler acts as: the identity
// of type Router with the router's id, not disabled.
func (m *Manager) tunnelIdentity(tx *store.Tx, r *Router) (*store.Identity, error) {
	i, err := store.GetAs[*store.Identity](tx, store.KindIdentity, r.ID)
	if err != nil || i.TypeID != store.IdentityTypeRouter {
		return nil, refusedSession(wire.ErrTunnelingNotEnabled, "tunneling not enabled: router %s has no identity of type Router (isTunnelerEnabled is false)", r.ID)
	}
	if i.Disabled && (i.DisabledUntil == nil || i.DisabledUntil.After(m.cfg.Now())) {
		return nil, refusedSession(wire.ErrTunnelingNotEnabled, "the identity of router %s is disabled", r.ID)
	}
	return i, nil
}

// tunnelAccess checks that the router's identity may use service s as typ
// (Dial or Bind) through its own router: a service policy of that type
// grants it (posture checks cannot pass: a router reports no posture), and
// edge router policies give the identity and the service the router.
func tunnelAccess(tx *store.Tx, identityID string, s *store.Service, routerID, typ string) error {
	if !policy.Allowed(policy.PairGrants(tx, identityID, s.ID), typ, nil) {
		return refusedSession(wire.ErrInvalidService, "invalid service: the router's identity may not %s service %s", typ, s.Name)
	}
	if !slices.Contains(policy.SessionEdgeRouters(tx, identityID, s.ID), routerID) {
		return refusedSession(wire.ErrInvalidEdgeRouterForSession, "service %s may not use edge router %s", s.Name, routerID)
	}
	return nil
}

// createTunnelTerminator handles CreateTunnelTerminatorRequestV2.
func (m *Manager) createTunnelTerminator(r *Router, msg *ctrlchan.Message) {
	req, err := wire.DecodeCreateTunnelTerminatorV2(msg.Body)
	reply := func(result uint64, text string) {
		var id string
		var start int64
		if req != nil {
			id, start = req.Address, req.StartTime
		}
		_ = m.reply(r, msg, ctrlchan.NewMessage(wire.CreateTunnelTerminatorResponseV2Type, wire.CreateTunnelTerminatorV2Response(id, start, result, text)))
		if result != wire.TerminatorCreated {
			m.log.Info("tunnel terminator refused", "router", r.ID, "terminator", id, "reason", text)
		}
	}
	if err != nil || req.Address == "" {
		reply(wire.TerminatorFailed, fmt.Sprintf("the request could not be read: %v", err))
		return
	}
	tx := m.cfg.Store.Read()
	i, err := m.tunnelIdentity(tx, r)
	var s *store.Service
	if err == nil {
		if s, err = store.GetAs[*store.Service](tx, store.KindService, req.ServiceID); err != nil {
			err = refusedSession(wire.ErrInvalidService, "invalid service: no service with id %s", req.ServiceID)
		}
	}
	if err == nil {
		err = tunnelAccess(tx, i.ID, s, r.ID, policy.Bind)
	}
	if err == nil && req.Cost > math.MaxUint16 {
		err = fmt.Errorf("invalid cost %d: at most %d", req.Cost, math.MaxUint16)
	}
	if err != nil {
		reply(wire.TerminatorFailed, err.Error())
		return
	}
	now := m.cfg.Now().UTC()
	t := &store.Terminator{Base: store.Base{ID: req.Address, CreatedAt: now, UpdatedAt: now},
		ServiceID: s.ID, RouterID: r.ID, Binding: tunnelBinding, Address: req.Address,
		Identity: req.InstanceID, Cost: int(req.Cost), Precedence: precedenceName(req.Precedence), HostID: i.ID,
		PeerData: req.PeerData, IsSystem: true}
	if len(t.PeerData) == 0 {
		t.PeerData = nil
	}
	if len(req.InstanceSecret) > 0 {
		t.IdentitySecret = base64.StdEncoding.EncodeToString(req.InstanceSecret)
	}
	ctx, cancel := m.timeout(writeTimeout)
	defer cancel()
	if _, err := m.cfg.Writer.Do(ctx, fsm.CmdTerminatorCreateByRouter, fsm.RouterTerminator{Terminator: t, At: now}); err != nil {
		// A terminator of that id for another service, router, binding or
		// host is a conflict; the router's retry of its own takes it again.
		reply(wire.TerminatorFailed, err.Error())
		return
	}
	m.log.Debug("tunnel terminator created", "router", r.ID, "terminator", t.ID, "service", t.ServiceID)
	reply(wire.TerminatorCreated, "")
}

// updateTunnelTerminator handles UpdateTunnelTerminatorRequest: a
// terminator of this router's tunneler changes its cost or precedence.
func (m *Manager) updateTunnelTerminator(r *Router, msg *ctrlchan.Message) {
	req, err := wire.DecodeUpdateTunnelTerminator(msg.Body)
	if err != nil {
		m.edgeErrorReply(r, msg, fmt.Errorf("the request could not be read: %w", err))
		return
	}
	if _, err := m.tunnelTerminator(r, req.TerminatorID); err != nil {
		m.edgeErrorReply(r, msg, err)
		return
	}
	u, err := m.terminatorUpdate(r, req.TerminatorID, req.UpdateCost, req.Cost, req.UpdatePrecedence, req.Precedence)
	if err != nil {
		m.edgeErrorReply(r, msg, err)
		return
	}
	ctx, cancel := m.timeout(writeTimeout)
	defer cancel()
	if _, err := m.cfg.Writer.Do(ctx, fsm.CmdTerminatorUpdateByRouter, u); err != nil {
		m.edgeErrorReply(r, msg, err)
		return
	}
	_ = m.reply(r, msg, ctrlchan.NewMessage(wire.UpdateTunnelTerminatorResponseType, nil))
}

// tunnelHealthEvent counts a health check's result of a terminator of this
// router's tunneler; nothing is answered.
func (m *Manager) tunnelHealthEvent(r *Router, msg *ctrlchan.Message) {
	id, _ := msg.Headers.String(wire.TerminatorIDHeader)
	passed, _ := msg.Headers.Bool(wire.CheckPassedHeader)
	if _, err := m.tunnelTerminator(r, id); err != nil {
		m.log.Debug("a tunnel health event names no terminator of its router", "router", r.ID, "terminator", id, "error", err)
		return
	}
	m.metrics.healthEvents.WithLabelValues(fmt.Sprint(passed)).Inc()
}

// tunnelTerminator is terminator id, if it is a tunnel terminator of router
// r; else an edge error (invalid terminator).
func (m *Manager) tunnelTerminator(r *Router, id string) (*store.Terminator, error) {
	t, err := store.GetAs[*store.Terminator](m.cfg.Store.Read(), store.KindTerminator, id)
	if err != nil {
		return nil, refusedSession(wire.ErrInvalidTerminator, "invalid terminator: no terminator with id %s", id)
	}
	if t.RouterID != r.ID || t.Binding != tunnelBinding {
		return nil, refusedSession(wire.ErrInvalidTerminator, "invalid terminator: %s is not a tunnel terminator of router %s", id, r.ID)
	}
	return t, nil
}

// tunnelDial handles CreateTunnelCircuitV2Request: the router's tunneler
// dials a service it may Dial, by name. Steps 3 to 5 are the dial's
// (routeCircuit); the circuit's identity is the router's, and it has no
// session: it ends when its identity goes or is disabled.
func (m *Manager) tunnelDial(r *Router, msg *ctrlchan.Message) {
	m.dialing.Add(1) // until answered (Close waits for it)
	defer m.dialing.Add(-1)
	start := time.Now()
	events := m.dialEvents(r, start)
	var circuitID string
	fail := func(err error) {
		events.failed(err, circuitID)
		_ = m.reply(r, msg, edgeError(err))
		m.metrics.dials.WithLabelValues("refused").Inc()
		m.log.Info("tunnel dial refused", "router", r.ID, "reason", err.Error())
	}
	req, err := wire.DecodeCreateTunnelCircuitV2(msg.Body)
	if err != nil {
		fail(fmt.Errorf("the request could not be read: %w", err))
		return
	}
	tx := m.cfg.Store.Read()
	i, err := m.tunnelIdentity(tx, r)
	var s *store.Service
	if err == nil {
		events.identityID = i.ID
		if rec := tx.ByName(store.KindService, req.ServiceName); rec != nil {
			s = rec.(*store.Service)
			events.serviceID = s.ID
		} else {
			err = refusedSession(wire.ErrInvalidService, "invalid service: no service named %q", req.ServiceName)
		}
	}
	if err == nil {
		err = tunnelAccess(tx, i.ID, s, r.ID, policy.Dial)
	}
	if err == nil && s.EncryptionRequired && req.PeerData[wire.PublicKeyPeerData] == nil {
		err = refusedSession(wire.ErrEncryptionDataMissing, "encryption required on service, initiator did not send public header")
	}
	if err != nil {
		fail(err)
		return
	}
	ci := &Circuit{ID: auth.NewID(), IngressRouterID: r.ID, ServiceID: s.ID, IdentityID: i.ID, CreatedAt: m.cfg.Now().UTC()}
	circuitID = ci.ID
	result, again, err := m.routeCircuit(r, ci, req.TerminatorInstanceID, req.PeerData, events)
	if err != nil {
		fail(err)
		return
	}
	if again != "" {
		defer m.moveLater(ci.ID, again)
	}
	peer := m.peerData(ci.TerminatorID, result)
	tags := map[string]string{"serviceId": ci.ServiceID, "clientId": r.ID}
	if t, err := store.GetAs[*store.Terminator](m.cfg.Store.Read(), store.KindTerminator, ci.TerminatorID); err == nil && t.HostID != "" {
		tags["hostId"] = t.HostID
	}
	m.answerDial(r, msg, ctrlchan.NewMessage(wire.CreateTunnelCircuitV2ResponseType, wire.CreateTunnelCircuitV2Response(ci.ID, ci.IngressID, peer, tags)), ci, events, start)
}
