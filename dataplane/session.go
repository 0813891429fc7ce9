package dataplane

import (
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"edgectl/auth"
	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/pki"
	"edgectl/policy"
	"edgectl/store"
)

// Session checks, shared by the dial and the terminator requests: a router
// passes on its client's service session and API session tokens; the node
// resolves them (sessionOf), checks that the identity may use the router
// (mayUseRouter), and refuses with an edge error code the router passes on
// to its client (sessionError, edgeErrorReply).

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
	// verified are the claims of tokens these keys verified, by token: a
	// client dials a service many times with one session token, and
	// verifying its signature was an eighth of a dial's CPU. Emptied when
	// the keys change or it holds maxVerified tokens.
	verified map[string]*pki.ServiceAccess
}

// maxVerified bounds sessionVerifier.verified.
const maxVerified = 1 << 16

// verify returns the claims of service session token, verified with
// trusted (what trusted returned), or why it is not valid at now. A token
// verified before with the same keys is not verified again; its expiry is
// checked again.
func (v *sessionVerifier) verify(trusted map[string]crypto.PublicKey, token string, now time.Time) (*pki.ServiceAccess, error) {
	v.mu.Lock()
	c, ok := v.verified[token]
	v.mu.Unlock()
	if !ok {
		var err error
		if c, err = pki.ParseServiceAccess(token, trusted, now); err != nil {
			return nil, err
		}
		v.mu.Lock()
		// Kept only if the keys are still those it was verified with.
		if len(v.verified) > 0 && len(v.verified) >= maxVerified {
			clear(v.verified)
		}
		if len(v.keys) == len(trusted) && sameMap(v.keys, trusted) {
			if v.verified == nil {
				v.verified = map[string]*pki.ServiceAccess{}
			}
			v.verified[token] = c
		}
		v.mu.Unlock()
	}
	if !c.ExpiresAt.IsZero() && !now.Before(c.ExpiresAt) {
		return nil, errors.New("token has invalid claims: token is expired")
	}
	return c, nil
}

// sameMap says whether a and b are one map (trusted returns the one it keeps
// until the keys change).
func sameMap(a, b map[string]crypto.PublicKey) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
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
	keys, err := SessionKeys(k)
	if err != nil {
		return nil, err
	}
	v.pem, v.prevKID, v.keys = k.SigningKeyPEM, prevKID, keys
	clear(v.verified)
	return keys, nil
}

// SessionKeys are the public keys a service session token may be signed
// with, by kid: the current signing key's and the previous one's while a
// rotation keeps trusting it.
func SessionKeys(k *store.DataPlaneKeys) (map[string]crypto.PublicKey, error) {
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
	claims, err := m.verifier.verify(trusted, sessionToken, m.cfg.Now())
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
	if !reaches(tx, s.IdentityID, s.ServiceID, routerID) {
		return refusedSession(wire.ErrInvalidEdgeRouterForSession, "the identity may not use this edge router for this service")
	}
	return nil
}

// reaches tells whether identity may use router for service: an edge
// router policy gives the identity the router, and a service edge router
// policy gives the service the router (policy.SessionEdgeRouters holds the
// router, without listing the others).
func reaches(g policy.Graph, identityID, serviceID, routerID string) bool {
	linked := func(fromRel, id, toRel string) bool {
		found := false
		g.EntityPolicies(fromRel, id, func(p string) bool {
			found = g.Linked(toRel, p, routerID)
			return !found
		})
		return found
	}
	return linked(policy.RelEdgeRouterPolicyIdentity, identityID, policy.RelEdgeRouterPolicyEdgeRouter) &&
		linked(policy.RelSERPService, serviceID, policy.RelSERPEdgeRouter)
}

// edgeErrorReply answers a router's request req with an edge error
// (edgeError).
func (m *Manager) edgeErrorReply(r *Router, req *ctrlchan.Message, err error) {
	_ = m.reply(r, req, edgeError(err))
}

// edgeError is the edge error message of err: its text, and its code (a
// sessionError's, else ErrInternal) in the ErrorCode header.
func edgeError(err error) *ctrlchan.Message {
	code := uint32(wire.ErrInternal)
	var se *sessionError
	if errors.As(err, &se) {
		code = se.code
	}
	e := ctrlchan.NewMessage(wire.ErrorType, []byte(err.Error()))
	e.Headers.PutUint32(wire.ErrorCodeHeader, code)
	return e
}
