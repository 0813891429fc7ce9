package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf8"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// authenticatorCreateFields are the fields of an authenticator create body;
// which of username, password and certPem are required depends on method.
var authenticatorCreateFields = []field{
	{name: "identityId", kind: fString, required: true, min: 1, ref: "identities"},
	{name: "method", kind: fString, required: true, enum: []string{"updb", "cert"}},
	{name: "username", kind: fString, nullable: true, min: 4, max: 100},
	// password is checked by checkPassword, which never echoes the value.
	{name: "password", kind: fString, nullable: true},
	{name: "certPem", kind: fString, nullable: true},
	tagsField,
}

// updbUpdateFields are the PUT / PATCH fields of an updb authenticator; the
// password travels to the store only as its hash, under passwordHash.
var updbUpdateFields = []field{
	{name: "username", kind: fString, required: true, min: 4, max: 100},
	{name: "password", to: "passwordHash", kind: fString, required: true},
	tagsField,
}

// certUpdateFields are the PUT / PATCH fields of a cert authenticator: it
// has no username or password, so only its tags change.
var certUpdateFields = []field{tagsField}

// checkPassword applies the length limits and the password rules of the
// identity's auth policy. The password is never part of the error.
func checkPassword(name, pw string, pol *store.AuthPolicy) error {
	n := utf8.RuneCountInString(pw)
	if n < 5 || n > 100 {
		return invalidField(name, "must be 5 to 100 characters", nil)
	}
	if pol == nil {
		return nil
	}
	u := pol.Primary.Updb
	if n < u.MinPasswordLength {
		return invalidField(name, fmt.Sprintf("the auth policy %q requires at least %d characters", pol.Name, u.MinPasswordLength), nil)
	}
	var upper, lower, digit, special bool
	for _, r := range pw {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
		case !unicode.IsLetter(r):
			special = true
		}
	}
	switch {
	case u.RequireMixedCase && !(upper && lower):
		return invalidField(name, fmt.Sprintf("the auth policy %q requires upper and lower case letters", pol.Name), nil)
	case u.RequireNumberChar && !digit:
		return invalidField(name, fmt.Sprintf("the auth policy %q requires a digit", pol.Name), nil)
	case u.RequireSpecialChar && !special:
		return invalidField(name, fmt.Sprintf("the auth policy %q requires a character that is not a letter or digit", pol.Name), nil)
	}
	return nil
}

// parseCertField parses a PEM certificate of a body field.
func parseCertField(name, certPem string) (fingerprint string, err error) {
	certs, err := pki.ParseCertsPEM([]byte(certPem))
	if err != nil {
		return "", invalidField(name, "must be a PEM certificate: "+err.Error(), nil)
	}
	return pki.Fingerprint(certs[0]), nil
}

// parseClientCertField parses the PEM certificate a client will
// authenticate with: a CA certificate is refused.
func parseClientCertField(name, certPem string) (fingerprint string, err error) {
	certs, err := pki.ParseCertsPEM([]byte(certPem))
	if err != nil {
		return "", invalidField(name, "must be a PEM certificate: "+err.Error(), nil)
	}
	if pki.IsCACert(certs[0]) {
		return "", invalidField(name, "is a CA certificate (basicConstraints CA:TRUE): a client authenticates with a leaf certificate", nil)
	}
	return pki.Fingerprint(certs[0]), nil
}

func (s *Server) createAuthenticator(c *call) error {
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(raw, authenticatorCreateFields, modeCreate)
	if err != nil {
		return err
	}
	str := func(name string) *string {
		if v, ok := p.values[name].(string); ok {
			return &v
		}
		return nil
	}
	identityID, method := *str("identityId"), *str("method")
	ident, err := store.GetAs[*store.Identity](c.tx, store.KindIdentity, identityID)
	if err != nil {
		return invalidField("identityId", "no identity with this id", identityID)
	}
	now := s.now()
	a := &store.Authenticator{Base: store.Base{ID: auth.NewID(), CreatedAt: now, UpdatedAt: now},
		IdentityID: identityID, Method: method}
	if tags, ok := p.values["tags"].(map[string]any); ok {
		a.Tags = tags
	}
	// The fields of the other method are refused rather than ignored, so a
	// mistaken method does not silently drop a credential.
	other := map[string][]string{"updb": {"certPem"}, "cert": {"username", "password"}}[method]
	for _, name := range other {
		if str(name) != nil {
			return invalidField(name, "is not used by method "+method, nil)
		}
	}
	switch method {
	case "updb":
		user, pw := str("username"), str("password")
		if user == nil {
			return invalidField("username", "is required for method updb", nil)
		}
		if pw == nil {
			return invalidField("password", "is required for method updb", nil)
		}
		if err := checkPassword("password", *pw, s.authPolicyOf(c.tx, ident)); err != nil {
			return err
		}
		if a.PasswordHash, err = s.Hasher.Hash(c.r.Context(), *pw); err != nil {
			return err
		}
		a.Username = *user
	case "cert":
		pem := str("certPem")
		if pem == nil {
			return invalidField("certPem", "is required for method cert", nil)
		}
		if a.Fingerprint, err = parseClientCertField("certPem", *pem); err != nil {
			return err
		}
		a.CertPem = *pem
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdAuthenticatorCreate, a); err != nil {
		return err
	}
	c.created("authenticators", a.ID)
	return nil
}

func (s *Server) updateAuthenticator(m mode) func(c *call) error {
	return func(c *call) error {
		id := c.param("id")
		a, err := store.GetAs[*store.Authenticator](c.tx, store.KindAuthenticator, id)
		if err != nil {
			return err
		}
		raw, err := decodeObject(c.r)
		if err != nil {
			return err
		}
		fields := updbUpdateFields
		if a.Method != "updb" {
			for _, name := range []string{"username", "password"} {
				if v, ok := raw[name]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
					return invalidField(name, "a "+a.Method+" authenticator has no "+name, nil)
				}
			}
			fields = certUpdateFields
		}
		if m == modePatch {
			// In a PATCH, a null username or password means "unchanged".
			for _, name := range []string{"username", "password"} {
				if v, ok := raw[name]; ok && bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
					delete(raw, name)
				}
			}
		}
		p, err := parseFields(raw, fields, m)
		if err != nil {
			return err
		}
		if pw, ok := p.values["password"].(string); ok {
			ident, err := store.GetAs[*store.Identity](c.tx, store.KindIdentity, a.IdentityID)
			if err != nil {
				return err
			}
			if err := checkPassword("password", pw, s.authPolicyOf(c.tx, ident)); err != nil {
				return err
			}
			hash, err := s.Hasher.Hash(c.r.Context(), pw)
			if err != nil {
				return err
			}
			if p.patch["passwordHash"], err = json.Marshal(hash); err != nil {
				return err
			}
		}
		_, err = s.Writer.Do(c.r.Context(), fsm.CmdAuthenticatorUpdate, fsm.Update{ID: id, Patch: p.patch, At: s.now()})
		return err
	}
}

func (s *Server) deleteAuthenticator(c *call) error {
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdAuthenticatorDelete, fsm.Delete{ID: c.param("id")})
	return err
}

func (s *Server) getAuthenticator(c *call) error {
	a, err := store.GetAs[*store.Authenticator](c.tx, store.KindAuthenticator, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(s.authenticatorMgmtView(c.tx, a))
	return nil
}

func (s *Server) listAuthenticators(c *call) error {
	return c.listKind(store.KindAuthenticator, false, func(r store.Record) any {
		return s.authenticatorMgmtView(c.tx, r.(*store.Authenticator))
	})
}

// authenticatorMgmtView is the authenticator view with the extension request state.
func (s *Server) authenticatorMgmtView(tx *store.Tx, a *store.Authenticator) map[string]any {
	v := s.authenticatorView(tx, a)
	v["isExtendRequested"] = a.IsExtendRequested
	v["isKeyRollRequested"] = a.IsKeyRollRequested
	v["extendRequestedAt"] = a.ExtendRequestedAt
	return v
}

// authenticatorRoutes are the authenticator operations.
func (s *Server) authenticatorRoutes() []route {
	return append(crudRoutes("/authenticators", "Authenticator", "Authenticators", "Authenticator", crudOps{list: s.listAuthenticators, create: s.createAuthenticator, detail: s.getAuthenticator, update: s.updateAuthenticator, del: s.deleteAuthenticator}),
		route{managementAPI, post, "/authenticators/:id/re-enroll", "reEnrollAuthenticator", "Authenticator", admin, s.reEnrollAuthenticator},
		route{managementAPI, post, "/authenticators/:id/request-extend", "requestExtendAuthenticator", "Authenticator", admin, s.requestExtendAuthenticator},
	)
}

// authenticatorView is an authenticator without its secret.
func (s *Server) authenticatorView(tx *store.Tx, a *store.Authenticator) map[string]any {
	return map[string]any{
		"_links":      selfLinks("authenticators", a.ID),
		"id":          a.ID,
		"createdAt":   a.CreatedAt,
		"updatedAt":   a.UpdatedAt,
		"tags":        tagsOrEmpty(a.Tags),
		"method":      a.Method,
		"identityId":  a.IdentityID,
		"identity":    s.entityRef(tx, store.KindIdentity, "identities", a.IdentityID),
		"username":    a.Username,
		"certPem":     a.CertPem,
		"fingerprint": a.Fingerprint,
	}
}
