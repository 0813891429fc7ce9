package api

import (
	"net/http"

	"edgectl/auth"
	"edgectl/fsm"
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

// authenticate issues an API session for a valid primary credential.
func (s *Server) authenticate(c *call) error {
	method := c.r.URL.Query().Get("method")
	var b authenticateBody
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	switch method {
	case "password":
		return s.authenticatePassword(c, &b)
	case "":
		return invalidField("method", "the query parameter method is required: password, cert or ext-jwt", nil)
	case "cert", "ext-jwt":
		return invalidField("method", "this controller does not support the "+method+" method yet", method)
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
	if err := checkLen("password", *b.Password, 5, 100); err != nil {
		return err
	}
	tx := c.tx
	var authr *store.Authenticator
	if r := tx.First(store.KindAuthenticator, "username", *b.Username); r != nil {
		authr = r.(*store.Authenticator)
	}
	hash := ""
	if authr != nil {
		hash = authr.PasswordHash
	}
	// The hash is checked even for an unknown username, so the time taken does not tell which one was wrong.
	good, err := s.Hasher.Verify(c.r.Context(), hash, *b.Password)
	if err != nil || !good || authr == nil {
		return invalidAuth()
	}
	ident, err := store.GetAs[*store.Identity](tx, store.KindIdentity, authr.IdentityID)
	if err != nil || identityDisabled(ident, s.now()) {
		return invalidAuth()
	}
	policy := s.authPolicyOf(tx, ident)
	if policy != nil && !policy.Primary.Updb.Allowed {
		return invalidAuth()
	}
	return s.issueSession(c, ident, authr.ID, b)
}

// authPolicyOf returns the identity's auth policy, or the default one.
func (s *Server) authPolicyOf(tx *store.Tx, i *store.Identity) *store.AuthPolicy {
	id := i.AuthPolicyID
	if id == "" {
		id = "default"
	}
	p, err := store.GetAs[*store.AuthPolicy](tx, store.KindAuthPolicy, id)
	if err != nil {
		return nil
	}
	return p
}

// issueSession creates the API session through Raft and answers with it.
func (s *Server) issueSession(c *call, ident *store.Identity, authenticatorID string, b *authenticateBody) error {
	now := s.now()
	token := auth.NewToken()
	sess := &store.APISession{
		Base:                 store.Base{ID: auth.NewID(), CreatedAt: now, UpdatedAt: now},
		TokenHash:            auth.HashToken(token),
		IdentityID:           ident.ID,
		AuthenticatorID:      authenticatorID,
		IPAddress:            clientIP(c.r),
		ConfigTypes:          b.ConfigTypes,
		CachedLastActivityAt: now,
		IsMfaComplete:        false,
		EnvInfo:              b.EnvInfo,
		SdkInfo:              b.SdkInfo,
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdAPISessionCreate, sess); err != nil {
		return err
	}
	c.w.Header().Set("svc-session", token)
	c.w.Header().Set("zt-session", token)
	tx := s.Store.Read()
	stored := tx.APISessionByTokenHash(sess.TokenHash)
	if stored == nil {
		stored = sess
	}
	c.write(http.StatusOK, map[string]any{"data": s.apiSessionView(tx, stored, token), "meta": meta(nil)})
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
