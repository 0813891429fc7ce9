package api

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"time"

	"edgectl/auth"
	"edgectl/pki"
	"edgectl/store"
)

// sessionToken returns the API session token of a request: the svc-session
// header, or its alias zt-session, or else a bearer token that is one of
// this cluster's API session tokens (they are JWTs, and clients that see a
// JWT, OpenZiti's ZAC among them, send it as Authorization: Bearer).
func sessionToken(r *http.Request) string {
	if t := r.Header.Get("svc-session"); t != "" {
		return t
	}
	if t := r.Header.Get("zt-session"); t != "" {
		return t
	}
	if t := bearerToken(r.Header.Get("Authorization")); pki.IsAPIAccessToken(t) {
		return t
	}
	return ""
}

// authenticateCall resolves the caller's API session and enforces the
// route's access level, and the secondary JWT its auth policy may require.
func (s *Server) authenticateCall(c *call, need access) error {
	if c.r.Context().Value(localAdminKey{}) != nil {
		return s.localAdmin(c)
	}
	tok := sessionToken(c.r)
	if tok == "" {
		if need == public {
			return nil
		}
		return unauthorized("no API session: authenticate and send the token in the svc-session header")
	}
	sess, ident := s.resolveSession(c.tx, tok)
	if sess == nil && c.rejudge() {
		// A session made through another node a moment ago.
		sess, ident = s.resolveSession(c.tx, tok)
	}
	if sess == nil {
		if need == public {
			return nil
		}
		return unauthorized("the API session is unknown or expired: authenticate again")
	}
	c.session, c.identity = sess, ident
	if need > public {
		if err := s.checkSecondaryJWT(c); err != nil {
			return err
		}
	}
	s.Activity.Touch(sess.ID, s.now())
	if need >= full && len(sess.AuthQueries) > 0 {
		return unauthorized("the API session is only partially authenticated: answer its authQueries first")
	}
	if need == admin && !ident.IsAdmin {
		return forbidden("this operation needs an admin identity")
	}
	return nil
}

// resolveSession finds the live API session of token and its identity.
func (s *Server) resolveSession(tx *store.Tx, token string) (*store.APISession, *store.Identity) {
	h := auth.HashToken(token)
	sess := tx.APISessionByTokenHash(h)
	if sess == nil || subtle.ConstantTimeCompare([]byte(sess.TokenHash), []byte(h)) != 1 {
		return nil, nil
	}
	if s.Activity.Expired(sess, s.now(), s.cfg.SessionTimeout) ||
		!s.now().Before(sess.CreatedAt.Add(apiSessionMaxAge)) {
		return nil, nil
	}
	ident, err := store.GetAs[*store.Identity](tx, store.KindIdentity, sess.IdentityID)
	if err != nil || identityDisabled(ident, s.now()) {
		return nil, nil
	}
	return sess, ident
}

// identityDisabled reports whether the identity is disabled at now.
func identityDisabled(i *store.Identity, now time.Time) bool {
	return i.Disabled && (i.DisabledUntil == nil || i.DisabledUntil.After(now))
}

// clientIP is the remote address of the request without its port.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// localAdminKey marks requests that came through the node's local admin
// socket: the operator on the machine, trusted by file permissions like a
// database's local socket.
type localAdminKey struct{}

// LocalAdminHandler serves the APIs to the local admin socket: every request
// acts as the default admin, with no session.
func (s *Server) LocalAdminHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cleanPaths(s.router).ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), localAdminKey{}, true)))
	})
}

func (s *Server) localAdmin(c *call) error {
	id := string(c.tx.Setting(store.SettingDefaultAdmin))
	ident, err := store.GetAs[*store.Identity](c.tx, store.KindIdentity, id)
	if err != nil {
		return unauthorized("the default admin is not in the model yet")
	}
	c.identity = ident
	c.session = &store.APISession{Base: store.Base{ID: "local-admin-socket"}, IdentityID: ident.ID}
	return nil
}
