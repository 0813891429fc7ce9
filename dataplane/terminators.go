package dataplane

import (
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"edgectl/auth"
	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/policy"
	"edgectl/store"
)

// Terminators made by routers. When an SDK client (or a tunneler) binds a
// service through an edge router, the router asks this node for a
// terminator with the client's Bind session and API session; the node
// checks them and that the identity may use the service through this
// router, and writes the terminator through Raft (terminator.createByRouter:
// its id is the address the router chose, its host the identity). The
// router removes it when the host goes, and a deleted router takes its
// terminators with it.

// sessionError is a refused session check, with the edge error code the
// router passes on to its client.
type sessionError struct {
	code uint32
	msg  string
}

func (e *sessionError) Error() string { return e.msg }

func refusedSession(code uint32, format string, args ...any) error {
	return &sessionError{code: code, msg: fmt.Sprintf(format, args...)}
}

// sessionVerifier keeps the parsed public keys that verify service
// sessions: the current signing key's and the previous one's (a rotation
// keeps trusting it), by kid.
type sessionVerifier struct {
	mu      sync.Mutex
	pem     string
	prevKID string
	keys    map[string]crypto.PublicKey
}

func (v *sessionVerifier) trusted(k *store.DataPlaneKeys) (map[string]crypto.PublicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	prevKID := ""
	if k.Previous != nil {
		prevKID = k.Previous.KeyID
	}
	if v.keys != nil && v.pem == k.SigningKeyPEM && v.prevKID == prevKID {
		return v.keys, nil
	}
	signer, err := pki.ParseKeyPEM([]byte(k.SigningKeyPEM))
	if err != nil {
		return nil, err
	}
	keys := map[string]crypto.PublicKey{k.KeyID: signer.Public()}
	if p := k.Previous; p != nil {
		if pub, err := x509.ParsePKIXPublicKey(p.PublicKey); err == nil {
			keys[p.KeyID] = pub
		}
	}
	v.pem, v.prevKID, v.keys = k.SigningKeyPEM, prevKID, keys
	return keys, nil
}

// sessionOf resolves a router request's service session and API session
// tokens: the API session must exist (by its token's hash), the session
// token must be a service access JWT signed by the cluster's key for that
// API session, and the session it names must still exist (a session ends
// when its API session does, or when access is lost).
func (m *Manager) sessionOf(tx *store.Tx, sessionToken, apiSessionToken string) (*store.Session, *store.APISession, error) {
	as := tx.APISessionByTokenHash(auth.HashToken(apiSessionToken))
	if as == nil {
		return nil, nil, refusedSession(wire.ErrInvalidAPISession, "no API session has this token")
	}
	keys := tx.DataPlaneKeys()
	if keys == nil {
		return nil, nil, refusedSession(wire.ErrInvalidSession, "the cluster has no session signing key yet")
	}
	trusted, err := m.verifier.trusted(keys)
	if err != nil {
		return nil, nil, err
	}
	claims, err := pki.ParseServiceAccess(sessionToken, trusted, m.cfg.Now())
	if err != nil {
		return nil, nil, refusedSession(wire.ErrInvalidSession, "the session token is not valid: %v", err)
	}
	if claims.APISessionID != as.ID {
		return nil, nil, refusedSession(wire.ErrInvalidSession, "the session belongs to another API session")
	}
	s, err := store.GetAs[*store.Session](tx, store.KindSession, claims.SessionID)
	if err != nil || s.APISessionID != as.ID {
		return nil, nil, refusedSession(wire.ErrInvalidSession, "the session %s has ended", claims.SessionID)
	}
	return s, as, nil
}

// mayUseRouter checks that the session's identity may reach its service
// through router r: an edge router policy gives the identity the router and
// a service edge router policy gives the service the router.
func mayUseRouter(tx *store.Tx, s *store.Session, routerID string) error {
	if !slices.Contains(policy.SessionEdgeRouters(tx, s.IdentityID, s.ServiceID), routerID) {
		return refusedSession(wire.ErrInvalidEdgeRouterForSession, "the identity may not use this edge router for this service")
	}
	return nil
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
		_ = m.reply(r, msg, ctrlchan.NewMessage(wire.CreateTerminatorV2ResponseType, wire.CreateTerminatorV2Response(id, result, text)))
		if result != wire.TerminatorCreated {
			m.log.Info("terminator refused", "router", r.ID, "terminator", id, "reason", text)
		}
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
	if err := mayUseRouter(tx, s, r.ID); err != nil {
		reply(wire.TerminatorFailed, err.Error())
		return
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

// edgeErrorReply answers a router's request with an edge error: its text,
// and its code in the ErrorCode header.
func (m *Manager) edgeErrorReply(r *Router, req *ctrlchan.Message, err error) {
	code := uint32(wire.ErrInternal)
	var se *sessionError
	if errors.As(err, &se) {
		code = se.code
	}
	e := ctrlchan.NewMessage(wire.ErrorType, []byte(err.Error()))
	e.Headers.PutUint32(wire.ErrorCodeHeader, code)
	_ = m.reply(r, req, e)
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
		if err == nil && (t.RouterID != r.ID || t.ServiceID != s.ServiceID || t.HostID != s.IdentityID) {
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
		u := fsm.RouterTerminatorUpdate{RouterID: r.ID, ID: t.ID, At: m.cfg.Now().UTC()}
		if req.UpdateCost {
			if req.Cost > math.MaxUint16 {
				m.edgeErrorReply(r, msg, refusedSession(wire.ErrInvalidCost, "invalid cost %d: at most %d", req.Cost, math.MaxUint16))
				return
			}
			c := int(req.Cost)
			u.Cost = &c
		}
		if req.UpdatePrecedence {
			p := precedenceName(req.Precedence)
			u.Precedence = &p
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

// removeTerminators handles ctrl_pb.RemoveTerminatorsRequest: the router
// removes terminators of its own (its hosts went away); the answer is a
// channel result.
func (m *Manager) removeTerminators(r *Router, msg *ctrlchan.Message) {
	ids, err := wire.DecodeRemoveTerminators(msg.Body)
	if err != nil {
		_ = m.reply(r, msg, ctrlchan.NewResult(false, err.Error()))
		return
	}
	ctx, cancel := m.timeout(writeTimeout)
	defer cancel()
	if _, err := m.cfg.Writer.Do(ctx, fsm.CmdTerminatorsDeleteByRouter, fsm.RouterTerminatorsDelete{RouterID: r.ID, IDs: ids}); err != nil {
		_ = m.reply(r, msg, ctrlchan.NewResult(false, err.Error()))
		return
	}
	_ = m.reply(r, msg, ctrlchan.NewResult(true, ""))
}
