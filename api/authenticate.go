package api

import (
	"crypto/x509"
	"errors"
	"net/http"
	"time"
	"unicode/utf8"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// authenticateBody is the authenticate request (all fields optional).
type authenticateBody struct {
	Username    *string        `json:"username"`
	Password    *string        `json:"password"`
	ConfigTypes []string       `json:"configTypes"`
	EnvInfo     *store.EnvInfo `json:"envInfo"`
	SdkInfo     *store.SdkInfo `json:"sdkInfo"`
}

// mfaAuthQuery is the auth query of a session that still owes a TOTP code.
var mfaAuthQuery = store.AuthQuery{Provider: "svc", TypeID: store.AuthQueryMFA, Format: "numeric",
	HTTPMethod: http.MethodPost, HTTPURL: "./authenticate/mfa", MinLength: 4, MaxLength: 6}

// authenticate issues an API session for a valid primary credential. Every
// failure answers 401 INVALID_AUTH alike, whatever failed.
func (s *Server) authenticate(c *call) error {
	method := c.r.URL.Query().Get("method")
	var b authenticateBody
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	switch method {
	case "password":
		return s.authenticatePassword(c, &b)
	case "cert":
		return s.authenticateCert(c, &b)
	case "ext-jwt":
		return s.authenticateExtJWT(c, &b)
	case "":
		return invalidField("method", "the query parameter method is required: password, cert or ext-jwt", nil)
	default:
		return invalidField("method", "must be one of password, cert, ext-jwt", method)
	}
}

func (s *Server) authenticatePassword(c *call, b *authenticateBody) error {
	if b.Username == nil {
		return invalidField("username", "is required for method password", nil)
	}
	if b.Password == nil {
		return invalidField("password", "is required for method password", nil)
	}
	if err := checkLen("username", *b.Username, 4, 100); err != nil {
		return err
	}
	if err := checkSecretLen("password", *b.Password); err != nil {
		return err
	}
	now := s.now()
	// The bucket is the username as sent, not the identity: unknown names are throttled alike.
	keys := map[string]auth.Limit{"user:" + *b.Username: limitCredential, addrKey(c.r): limitAddress}
	if err := s.throttled(c, now, keys); err != nil {
		return err
	}
	tx := c.tx
	var authr *store.Authenticator
	if r := tx.First(store.KindAuthenticator, "username", *b.Username); r != nil && r.(*store.Authenticator).Method == "updb" {
		authr = r.(*store.Authenticator)
	}
	hash := ""
	if authr != nil {
		hash = authr.PasswordHash
	}
	// The hash is checked even for an unknown username or a locked identity,
	// so the time taken does not tell which one was wrong.
	good, err := s.Hasher.Verify(c.r.Context(), hash, *b.Password)
	if err != nil && c.r.Context().Err() != nil {
		return err
	}
	var ident *store.Identity
	if authr != nil {
		ident, _ = store.GetAs[*store.Identity](tx, store.KindIdentity, authr.IdentityID)
	}
	live := ident != nil && !identityDisabled(ident, now)
	var policy *store.AuthPolicy
	if live {
		policy = s.authPolicyOf(tx, ident)
	}
	if good && err == nil && live && policy != nil && policy.Primary.Updb.Allowed {
		return s.issueSession(c, ident, authr.ID, b, now)
	}
	if c.rejudge() {
		return s.authenticatePassword(c, b)
	}
	s.failed(now, keys)
	switch {
	case !good && live && policy != nil && policy.Primary.Updb.MaxAttempts > 0 && !ident.IsDefaultAdmin:
		s.recordFailure(c.r.Context(), ident.ID, "password", "the password does not match", now)
	case ident != nil:
		reason := "the password does not match"
		switch {
		case !live:
			reason = "the identity is disabled"
		case good:
			reason = "its auth policy does not allow passwords"
		}
		s.auditFailure(c.r.Context(), ident.ID, "password", reason, now)
	default:
		s.metrics.loginFailures.WithLabelValues("unknown_username").Inc()
		s.padFailure(c.r.Context())
	}
	return invalidAuth()
}

// authenticateCert authenticates with the TLS client certificate: the leaf
// must be bound to a cert authenticator and chain to the internal PKI or to a
// verified, auth-enabled CA.
func (s *Server) authenticateCert(c *call, b *authenticateBody) error {
	now := s.now()
	chain := peerCerts(c.r)
	keys := map[string]auth.Limit{addrKey(c.r): limitAddress}
	if len(chain) > 0 {
		keys["cert:"+pki.Fingerprint(chain[0])] = limitCredential
	}
	if err := s.throttled(c, now, keys); err != nil {
		return err
	}
	ident, authr, err := s.certIdentity(c.tx, chain, now)
	if err != nil && c.rejudge() {
		ident, authr, err = s.certIdentity(c.tx, chain, now)
	}
	if err != nil {
		s.failed(now, keys)
		s.Log.Debug("certificate authentication failed", "reason", err, "address", clientIP(c.r))
		return invalidAuth()
	}
	return s.issueSession(c, ident, authr.ID, b, now)
}

func (s *Server) certIdentity(tx *store.Tx, chain []*x509.Certificate, now time.Time) (*store.Identity, *store.Authenticator, error) {
	if len(chain) == 0 {
		return nil, nil, errors.New("no client certificate")
	}
	r := tx.First(store.KindAuthenticator, "fingerprint", pki.Fingerprint(chain[0]))
	if r == nil || r.(*store.Authenticator).Method != "cert" {
		return nil, nil, errors.New("no cert authenticator has this certificate")
	}
	authr := r.(*store.Authenticator)
	ident, err := store.GetAs[*store.Identity](tx, store.KindIdentity, authr.IdentityID)
	if err != nil || identityDisabled(ident, now) {
		return nil, nil, errors.New("the identity is missing or disabled")
	}
	policy := s.authPolicyOf(tx, ident)
	if policy == nil || !policy.Primary.Cert.Allowed {
		return nil, nil, errors.New("the auth policy does not allow certificates")
	}
	roots, known, err := s.certRoots(tx)
	if err != nil {
		return nil, nil, err
	}
	if err := auth.VerifyClientCert(chain, roots, known, now, policy.Primary.Cert.AllowExpiredCerts); err != nil {
		return nil, nil, err
	}
	return ident, authr, nil
}

// authenticateExtJWT authenticates with a bearer JWT of an external signer.
func (s *Server) authenticateExtJWT(c *call, b *authenticateBody) error {
	now := s.now()
	keys := map[string]auth.Limit{addrKey(c.r): limitAddress}
	if err := s.throttled(c, now, keys); err != nil {
		return err
	}
	ident, signer, err := s.jwtIdentity(c, now)
	if err == nil {
		policy := s.authPolicyOf(c.tx, ident)
		switch {
		case identityDisabled(ident, now):
			err = errors.New("the identity is disabled")
		case policy == nil || !policy.Primary.ExtJwt.Allowed:
			err = errors.New("the auth policy does not allow external JWTs")
		case len(policy.Primary.ExtJwt.AllowedSigners) > 0 && !contains(policy.Primary.ExtJwt.AllowedSigners, signer.ID):
			err = errors.New("the auth policy does not allow this signer")
		}
	}
	if err != nil && c.rejudge() {
		return s.authenticateExtJWT(c, b)
	}
	if err != nil {
		s.failed(now, keys)
		s.Log.Debug("external JWT authentication failed", "reason", err, "address", clientIP(c.r))
		return invalidAuth()
	}
	return s.issueSession(c, ident, extJWTAuthenticatorID(signer.ID), b, now)
}

// extJWTAuthenticatorID is the authenticatorId of a session made with an
// external JWT: the signer, marked so it is never taken for an authenticator.
func extJWTAuthenticatorID(signerID string) string { return "ext-jwt:" + signerID }

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// authPolicyOf returns the identity's auth policy, or the default one.
func (s *Server) authPolicyOf(tx *store.Tx, i *store.Identity) *store.AuthPolicy {
	id := i.AuthPolicyID
	if id == "" {
		id = store.DefaultAuthPolicyID
	}
	p, err := store.GetAs[*store.AuthPolicy](tx, store.KindAuthPolicy, id)
	if err != nil {
		return nil
	}
	return p
}

// issueSession creates the API session through Raft and answers with it. A
// session of an identity whose policy requires TOTP, or that enrolled TOTP
// itself, starts partially authenticated with the MFA auth query.
func (s *Server) issueSession(c *call, ident *store.Identity, authenticatorID string, b *authenticateBody, now time.Time) error {
	id := auth.NewID()
	token, err := s.apiSessionToken(c.tx, id, ident, now)
	if err != nil {
		return err
	}
	sess := &store.APISession{
		Base:                 store.Base{ID: id, CreatedAt: now, UpdatedAt: now},
		TokenHash:            auth.HashToken(token),
		IdentityID:           ident.ID,
		AuthenticatorID:      authenticatorID,
		IPAddress:            clientIP(c.r),
		ConfigTypes:          b.ConfigTypes,
		CachedLastActivityAt: now,
		EnvInfo:              b.EnvInfo,
		SdkInfo:              b.SdkInfo,
	}
	if s.totpRequired(c.tx, ident) {
		sess.IsMfaRequired = true
		sess.AuthQueries = []store.AuthQuery{mfaAuthQuery}
	}
	// The run of failed attempts ends only with a complete authentication.
	login := fsm.Login{Session: sess, ResetFailures: !sess.IsMfaRequired}
	start := time.Now()
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdLogin, login); err != nil {
		if errors.Is(err, store.ErrInvalid) {
			// Locked, disabled or deleted between the check and the write.
			return invalidAuth()
		}
		return err
	}
	s.noteWrite(time.Since(start))
	c.w.Header().Set("svc-session", token)
	c.w.Header().Set("zt-session", token)
	tx := s.Store.Read()
	stored := tx.APISessionByTokenHash(sess.TokenHash)
	if stored == nil {
		stored = sess
	}
	view := s.apiSessionView(tx, stored, token)
	if q := s.extJWTAuthQuery(c, ident); q != nil {
		view["authQueries"] = append(append([]store.AuthQuery{}, nonNilQueries(stored.AuthQueries)...), *q)
	}
	c.write(http.StatusOK, map[string]any{"data": view, "meta": meta(nil)})
	return nil
}

// apiSessionMaxAge is how long an API session lasts at most, however
// active: its token's expiry, which routers check when a client connects (a
// year, as OpenZiti's service sessions).
const apiSessionMaxAge = 365 * 24 * time.Hour

// apiSessionToken is the token of new API session id. With the cluster's
// data-plane keys it is a JWT that OpenZiti's routers verify themselves
// (pki.SignAPIAccess, with the key of auth.APISessionSigningKey): a client's
// connection to a router is then bound to no node, and dials go to any node,
// so that a node that fails stops no client (docs/architecture.md). Before
// a cluster has its keys, a random token.
func (s *Server) apiSessionToken(tx *store.Tx, id string, ident *store.Identity, now time.Time) (string, error) {
	k := tx.DataPlaneKeys()
	if k == nil {
		return auth.NewToken(), nil
	}
	key := auth.APISessionSigningKey(k.TokenKey)
	kid, err := pki.KeyID(key.Public())
	if err != nil {
		return "", err
	}
	return pki.SignAPIAccess(key, kid, pki.APIAccess{Issuer: s.cfg.AdvertiseURL, IdentityID: ident.ID, APISessionID: id,
		CertFingerprints: tx.CertFingerprints(ident.ID), IsAdmin: ident.IsAdmin, IssuedAt: now, ExpiresAt: now.Add(apiSessionMaxAge)})
}

// totpRequired: the auth policy requires TOTP, or the identity enrolled it.
func (s *Server) totpRequired(tx *store.Tx, ident *store.Identity) bool {
	if p := s.authPolicyOf(tx, ident); p != nil && p.Secondary.RequireTotp {
		return true
	}
	m := tx.MFAOf(ident.ID)
	return m != nil && m.IsVerified
}

// checkSecretLen checks a password is 5 to 100 characters without echoing it.
func checkSecretLen(name, v string) error {
	if n := utf8.RuneCountInString(v); n < 5 || n > 100 {
		return invalidField(name, "must be 5 to 100 characters", nil)
	}
	return nil
}

func checkLen(name, v string, min, max int) error {
	f := field{name: name, min: min, max: max}
	return checkString(name, v, &f)
}

// currentAPISession shows the caller's own API session, with its token.
func (s *Server) currentAPISession(c *call) error {
	c.ok(s.apiSessionView(c.tx, c.session, sessionToken(c.r)))
	return nil
}

// logout ends the caller's API session on every node.
func (s *Server) logout(c *call) error {
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdAPISessionsDelete, fsm.DeleteMany{IDs: []string{c.session.ID}}); err != nil {
		return err
	}
	s.Activity.Forget([]string{c.session.ID})
	return nil
}

// authenticateRoutes are authentication and the caller's own API session.
func (s *Server) authenticateRoutes() []route {
	return []route{
		// Authentication and the caller's own session
		{bothAPIs, post, "/authenticate", "authenticate", "Authentication", public, s.authenticate},
		{bothAPIs, get, "/current-api-session", "getCurrentAPISession", "Current API Session", partial, s.currentAPISession},
		{bothAPIs, del, "/current-api-session", "logout", "Current API Session", partial, s.logout},
	}
}
