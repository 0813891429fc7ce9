package dataplane

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/policy"
	"edgectl/store"

	"github.com/hashicorp/go-hclog"
)

// Terminators made by routers. When an SDK client (or a tunneler) binds a
// service through an edge router, the router asks this node for a
// terminator with the client's Bind session and API session; the node
// checks them and that the identity may use the service through this
// router, and writes the terminator through Raft (terminator.createByRouter:
// its id is the address the router chose, its host the identity). The
// router removes it when the host goes, and a deleted router takes its
// terminators with it.

// A terminator storm (thousands of hosts binding at once, or routers
// reconnecting after a restart) is met as OpenZiti's command rate limiter
// meets it: at most Config.MaxTerminatorCreates creates are queued or in
// flight on the node; one more is answered at once with the busy result
// (CreateTerminatorResult FailedBusy), which OpenZiti's routers take as
// "retry later" (they back off and send the create again), so no
// terminator is lost and no queue grows without bound.

// defaultTerminatorCreates is Config.MaxTerminatorCreates's default: ten
// times OpenZiti's command queue (100), as a create here costs less (its
// writes are batched with others into few Raft entries).
const defaultTerminatorCreates = 1000

// busyText is the text of a busy answer.
const busyText = "the controller is busy creating terminators: retry later"

// admitCreate takes one more terminator create under way, if the node's
// bound allows; the caller gives it back (creates.Add(-1)) when done.
func (m *Manager) admitCreate() bool {
	if m.creates.Add(1) > int64(m.cfg.MaxTerminatorCreates) {
		m.creates.Add(-1)
		return false
	}
	return true
}

// createTerminatorBusy answers a CreateTerminatorV2Request the node does
// not take now: busy, for the router to retry.
func (m *Manager) createTerminatorBusy(r *Router, msg *ctrlchan.Message) {
	id := ""
	if req, err := wire.DecodeCreateTerminatorV2(msg.Body); err == nil {
		id = req.Address
	}
	m.refuseRequest(r, reqCreateTerminator, whyBusy, "terminator "+id, false)
	_ = m.reply(r, msg, ctrlchan.NewMessage(wire.CreateTerminatorV2ResponseType, wire.CreateTerminatorV2Response(id, wire.TerminatorBusy, busyText)))
}

// createTunnelTerminatorBusy answers a router tunneler's
// CreateTunnelTerminatorRequestV2 the node does not take now: busy.
func (m *Manager) createTunnelTerminatorBusy(r *Router, msg *ctrlchan.Message) {
	var id string
	var start int64
	if req, err := wire.DecodeCreateTunnelTerminatorV2(msg.Body); err == nil {
		id, start = req.Address, req.StartTime
	}
	m.refuseRequest(r, reqCreateTerminator, whyBusy, "tunnel terminator "+id, false)
	_ = m.reply(r, msg, ctrlchan.NewMessage(wire.CreateTunnelTerminatorResponseV2Type, wire.CreateTunnelTerminatorV2Response(id, start, wire.TerminatorBusy, busyText)))
}

// precedenceName is a terminator precedence as the model names it.
func precedenceName(p wire.Precedence) string {
	switch p {
	case wire.PrecedenceRequired:
		return "required"
	case wire.PrecedenceFailed:
		return "failed"
	}
	return "default"
}

// createTerminator handles CreateTerminatorV2Request.
func (m *Manager) createTerminator(r *Router, msg *ctrlchan.Message) {
	req, err := wire.DecodeCreateTerminatorV2(msg.Body)
	reply := func(result uint64, text string) {
		id := ""
		if req != nil {
			id = req.Address
		}
		if result != wire.TerminatorCreated { // logged before the router hears it
			m.sampler.at(hclog.Info, fmt.Sprintf("create_terminator/%d", result), r.ID, "terminator refused", "router", r.ID, "terminator", id, "reason", text)
		}
		_ = m.reply(r, msg, ctrlchan.NewMessage(wire.CreateTerminatorV2ResponseType, wire.CreateTerminatorV2Response(id, result, text)))
	}
	if err != nil || req.Address == "" {
		reply(wire.TerminatorFailed, fmt.Sprintf("the request could not be read: %v", err))
		return
	}
	tx := m.cfg.Store.Read()
	s, _, err := m.sessionOf(tx, req.SessionToken, req.APISessionToken)
	if err != nil {
		reply(wire.TerminatorInvalidSession, err.Error())
		return
	}
	switch {
	case s.Type != policy.Bind:
		reply(wire.TerminatorFailed, "the session is a "+s.Type+" session, not Bind")
		return
	case req.Cost > math.MaxUint16:
		reply(wire.TerminatorFailed, fmt.Sprintf("invalid cost %d: at most %d", req.Cost, math.MaxUint16))
		return
	}
	if !mayBind(tx, s.IdentityID, s.ServiceID) {
		// The session is Bind, but no policy gives its identity Bind now.
		m.refuseRequest(r, reqCreateTerminator, whyMayNotBind, "identity "+s.IdentityID+" may not Bind service "+s.ServiceID, false)
		reply(wire.TerminatorFailed, "the identity may not Bind this service")
		return
	}
	if err := mayUseRouter(tx, s, r.ID); err != nil {
		m.refuseRequest(r, reqCreateTerminator, whyRouterNotAllowed, "identity "+s.IdentityID+" may not use this router for service "+s.ServiceID, false)
		reply(wire.TerminatorFailed, err.Error())
		return
	}
	// An address in use is answered as OpenZiti does, before any write: the
	// same terminator again is created already; another router's, host's,
	// service's or binding's is an id conflict.
	if old, err := store.GetAs[*store.Terminator](tx, store.KindTerminator, req.Address); err == nil {
		switch {
		case old.RouterID != r.ID:
			m.refuseRequest(r, reqCreateTerminator, whyAnotherRouter, "terminator "+old.ID+" is router "+old.RouterID+"'s", true)
			reply(wire.TerminatorIDConflict, "selected id conflicts with terminator for different router")
			return
		case old.Binding != "edge" || old.ServiceID != s.ServiceID || old.HostID != s.IdentityID:
			m.refuseRequest(r, reqCreateTerminator, whyAnotherHost, "terminator "+old.ID+" is another host's, service's or binding's", false)
			reply(wire.TerminatorIDConflict, "selected id conflicts with terminator for different service, identity or binding")
			return
		case old.Cost == int(req.Cost) && old.Precedence == precedenceName(req.Precedence):
			reply(wire.TerminatorCreated, "")
			return
		}
	}
	now := m.cfg.Now().UTC()
	t := &store.Terminator{Base: store.Base{ID: req.Address, CreatedAt: now, UpdatedAt: now},
		ServiceID: s.ServiceID, RouterID: r.ID, Binding: "edge", Address: req.Address,
		Identity: req.InstanceID, Cost: int(req.Cost), Precedence: precedenceName(req.Precedence), HostID: s.IdentityID,
		PeerData: req.PeerData, IsSystem: true}
	if len(req.InstanceSecret) > 0 {
		t.IdentitySecret = base64.StdEncoding.EncodeToString(req.InstanceSecret)
	}
	if len(t.PeerData) == 0 {
		t.PeerData = nil
	}
	ctx, cancel := m.timeout(writeTimeout)
	defer cancel()
	if _, err := m.cfg.Writer.Do(ctx, fsm.CmdTerminatorCreateByRouter, fsm.RouterTerminator{Terminator: t, At: now}); err != nil {
		if errors.Is(err, store.ErrConflict) {
			reply(wire.TerminatorIDConflict, err.Error())
		} else {
			reply(wire.TerminatorFailed, err.Error())
		}
		return
	}
	m.log.Debug("terminator created", "router", r.ID, "terminator", t.ID, "service", t.ServiceID, "host", t.HostID)
	reply(wire.TerminatorCreated, "")
}

// terminatorRequest handles the edge update, remove and health requests,
// each naming a terminator of this router's host by its Bind session.
func (m *Manager) terminatorRequest(r *Router, msg *ctrlchan.Message) {
	req, err := wire.DecodeTerminatorRequest(msg.ContentType, msg.Body)
	if err != nil {
		m.edgeErrorReply(r, msg, fmt.Errorf("the request could not be read: %w", err))
		return
	}
	tx := m.cfg.Store.Read()
	s, _, err := m.sessionOf(tx, req.SessionToken, req.APISessionToken)
	if err == nil && s.Type != policy.Bind {
		err = refusedSession(wire.ErrWrongSessionType, "the session is a %s session, not Bind", s.Type)
	}
	var t *store.Terminator
	if err == nil {
		t, err = store.GetAs[*store.Terminator](tx, store.KindTerminator, req.TerminatorID)
		switch {
		case err != nil:
		case t.RouterID != r.ID:
			// As OpenZiti words it; a security event here.
			m.refuseRequest(r, terminatorRequestName(msg.ContentType), whyAnotherRouter, "terminator "+t.ID+" is router "+t.RouterID+"'s", true)
			err = refusedSession(wire.ErrInvalidTerminator, "%s request for terminator %s on router %s came from router %s",
				terminatorRequestName(msg.ContentType), t.ID, t.RouterID, r.ID)
		case t.ServiceID != s.ServiceID || t.HostID != s.IdentityID:
			m.refuseRequest(r, terminatorRequestName(msg.ContentType), whyAnotherHost, "terminator "+t.ID+" is another host's or service's", false)
			err = refusedSession(wire.ErrInvalidTerminator, "terminator %s is not this host's on this router", req.TerminatorID)
		}
		if errors.Is(err, store.ErrNotFound) && msg.ContentType == wire.RemoveTerminatorRequestType {
			err, t = nil, nil // gone already: removed
		}
	}
	if err != nil {
		if msg.ContentType != wire.HealthEventType {
			m.edgeErrorReply(r, msg, err)
		}
		return
	}
	ctx, cancel := m.timeout(writeTimeout)
	defer cancel()
	switch msg.ContentType {
	case wire.HealthEventType:
		m.metrics.healthEvents.WithLabelValues(fmt.Sprint(req.CheckPassed)).Inc()
		return
	case wire.RemoveTerminatorRequestType:
		if t != nil {
			_, err = m.cfg.Writer.Do(ctx, fsm.CmdTerminatorsDeleteByRouter, fsm.RouterTerminatorsDelete{RouterID: r.ID, IDs: []string{t.ID}})
		}
		if err == nil {
			_ = m.reply(r, msg, ctrlchan.NewMessage(wire.RemoveTerminatorResponseType, nil))
		}
	case wire.UpdateTerminatorRequestType:
		u, uerr := m.terminatorUpdate(r, t.ID, req.UpdateCost, req.Cost, req.UpdatePrecedence, req.Precedence)
		if uerr != nil {
			m.edgeErrorReply(r, msg, uerr)
			return
		}
		_, err = m.cfg.Writer.Do(ctx, fsm.CmdTerminatorUpdateByRouter, u)
		if err == nil {
			_ = m.reply(r, msg, ctrlchan.NewMessage(wire.UpdateTerminatorResponseType, nil))
		}
	}
	if err != nil {
		m.edgeErrorReply(r, msg, err)
	}
}

// terminatorRequestName names an edge terminator request (the request
// label of the refused-requests metric).
func terminatorRequestName(ct int32) string {
	switch ct {
	case wire.UpdateTerminatorRequestType:
		return reqUpdateTerminator
	case wire.RemoveTerminatorRequestType:
		return reqRemoveTerminator
	}
	return reqHealthEvent
}

// removeTerminators handles ctrl_pb.RemoveTerminatorsRequest: the router
// removes terminators of its own (its hosts went away); the answer is a
// channel result. A request naming another router's terminator is refused
// whole, with nothing written: a router never holds another's.
func (m *Manager) removeTerminators(r *Router, msg *ctrlchan.Message) {
	ids, err := wire.DecodeRemoveTerminators(msg.Body)
	if err != nil {
		_ = m.reply(r, msg, ctrlchan.NewResult(false, err.Error()))
		return
	}
	tx := m.cfg.Store.Read()
	own := ids[:0:0]
	for _, id := range ids {
		t, err := store.GetAs[*store.Terminator](tx, store.KindTerminator, id)
		switch {
		case err != nil: // gone already
		case t.RouterID != r.ID:
			m.refuseRequest(r, reqRemoveTerminators, whyAnotherRouter, "terminator "+id+" is router "+t.RouterID+"'s", true)
			_ = m.reply(r, msg, ctrlchan.NewResult(false, fmt.Sprintf("terminator %s is not on router %s", id, r.ID)))
			return
		default:
			own = append(own, id)
		}
	}
	if len(own) == 0 {
		_ = m.reply(r, msg, ctrlchan.NewResult(true, ""))
		return
	}
	ids = own
	ctx, cancel := m.timeout(writeTimeout)
	defer cancel()
	if _, err := m.cfg.Writer.Do(ctx, fsm.CmdTerminatorsDeleteByRouter, fsm.RouterTerminatorsDelete{RouterID: r.ID, IDs: ids}); err != nil {
		_ = m.reply(r, msg, ctrlchan.NewResult(false, err.Error()))
		return
	}
	_ = m.reply(r, msg, ctrlchan.NewResult(true, ""))
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

// terminatorUpdate is router r's change to its terminator id: the cost (at
// most 65535) and the precedence, each when the request asks for it.
func (m *Manager) terminatorUpdate(r *Router, id string, updateCost bool, cost uint32, updatePrecedence bool, precedence wire.Precedence) (fsm.RouterTerminatorUpdate, error) {
	u := fsm.RouterTerminatorUpdate{RouterID: r.ID, ID: id, At: m.cfg.Now().UTC()}
	if updateCost {
		if cost > math.MaxUint16 {
			return u, refusedSession(wire.ErrInvalidCost, "invalid cost %d: at most %d", cost, math.MaxUint16)
		}
		c := int(cost)
		u.Cost = &c
	}
	if updatePrecedence {
		p := precedenceName(precedence)
		u.Precedence = &p
	}
	return u, nil
}
