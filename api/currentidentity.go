package api

import (
	"bytes"
	"encoding/json"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/store"
)

// ownAuthenticatorView is the caller's authenticator, linked under
// /current-identity; like the admin view it shows whether an extension of
// the certificate was requested, which the holder acts on.
func (s *Server) ownAuthenticatorView(tx *store.Tx, a *store.Authenticator) map[string]any {
	v := s.authenticatorMgmtView(tx, a)
	v["_links"] = selfLinks("current-identity/authenticators", a.ID)
	return v
}

// ownAuthenticator is the caller's authenticator id, or 404 (also for the
// authenticators of others, which the caller may not see).
func ownAuthenticator(c *call) (*store.Authenticator, error) {
	id := c.param("id")
	a, err := store.GetAs[*store.Authenticator](c.tx, store.KindAuthenticator, id)
	if err != nil || a.IdentityID != c.identity.ID {
		return nil, notFound("authenticator", id)
	}
	return a, nil
}

func (s *Server) listOwnAuthenticators(c *call) error {
	lr, err := c.parseList(store.KindAuthenticator.Fields, false)
	if err != nil {
		return err
	}
	recs := ownedRecords(c.tx, store.KindAuthenticator, "identity", c.identity.ID)
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return s.ownAuthenticatorView(c.tx, r.(*store.Authenticator)) })
}

func (s *Server) getOwnAuthenticator(c *call) error {
	a, err := ownAuthenticator(c)
	if err != nil {
		return err
	}
	c.ok(s.ownAuthenticatorView(c.tx, a))
	return nil
}

// updateOwnAuthenticator changes the caller's own username and password
// (updb only). currentPassword (5 to 100) must be the password now: a wrong
// one is 400 COULD_NOT_VALIDATE on currentPassword, as OpenZiti answers, and
// takes a token of the username's throttle bucket like a failed login. The
// new password follows the rules of the identity's auth policy.
func (s *Server) updateOwnAuthenticator(m mode) func(c *call) error {
	return func(c *call) error {
		a, err := ownAuthenticator(c)
		if err != nil {
			return err
		}
		raw, err := decodeObject(c.r)
		if err != nil {
			return err
		}
		if a.Method != "updb" {
			return invalidField("method", "only a password (updb) authenticator is changed by its identity", a.Method)
		}
		var current string
		cp, ok := raw["currentPassword"]
		if !ok || bytes.Equal(bytes.TrimSpace(cp), []byte("null")) {
			return invalidField("currentPassword", "is required", nil)
		}
		if err := unmarshalField("currentPassword", cp, &current); err != nil {
			return err
		}
		if err := checkSecretLen("currentPassword", current); err != nil {
			return err
		}
		delete(raw, "currentPassword")
		if m == modePatch {
			// In a PATCH, a null username or password means "unchanged".
			for _, name := range []string{"username", "password"} {
				if v, ok := raw[name]; ok && bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
					delete(raw, name)
				}
			}
		}
		p, err := parseFields(raw, updbUpdateFields, m)
		if err != nil {
			return err
		}
		pw, newPassword := p.values["password"].(string)
		if newPassword {
			if err := checkPassword("password", pw, s.authPolicyOf(c.tx, c.identity)); err != nil {
				return err
			}
		}
		now := s.now()
		keys := map[string]auth.Limit{"user:" + a.Username: limitCredential, addrKey(c.r): limitAddress}
		if err := s.throttled(c, now, keys); err != nil {
			return err
		}
		good, err := s.Hasher.Verify(c.r.Context(), a.PasswordHash, current)
		if err != nil && c.r.Context().Err() != nil {
			return err
		}
		if !good {
			s.failed(now, keys)
			return invalidField("currentPassword", "is not the current password", nil)
		}
		if newPassword {
			hash, err := s.Hasher.Hash(c.r.Context(), pw)
			if err != nil {
				return err
			}
			if p.patch["passwordHash"], err = json.Marshal(hash); err != nil {
				return err
			}
		}
		_, err = s.Writer.Do(c.r.Context(), fsm.CmdAuthenticatorUpdate, fsm.Update{ID: a.ID, Patch: p.patch, At: now})
		return err
	}
}

// currentIdentityRoutes are the caller's own identity and authenticators.
func (s *Server) currentIdentityRoutes() []route {
	return []route{
		{bothAPIs, get, "/current-identity", "getCurrentIdentity", "Current Identity", full, s.getCurrentIdentity},
		{bothAPIs, get, "/current-identity/authenticators", "listCurrentIdentityAuthenticators", "Current API Session", full, s.listOwnAuthenticators},
		{bothAPIs, get, "/current-identity/authenticators/:id", "detailCurrentIdentityAuthenticator", "Current API Session", full, s.getOwnAuthenticator},
		{bothAPIs, put, "/current-identity/authenticators/:id", "updateCurrentIdentityAuthenticator", "Current API Session", full, s.updateOwnAuthenticator(modePut)},
		{bothAPIs, patch, "/current-identity/authenticators/:id", "patchCurrentIdentityAuthenticator", "Current API Session", full, s.updateOwnAuthenticator(modePatch)},
	}
}

func (s *Server) getCurrentIdentity(c *call) error {
	c.ok(s.identityView(c.tx, c.identity))
	return nil
}
