package api

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"edgectl/auth"
	"edgectl/store"
)

// certRoots are the trust anchors of certificate authentication: the
// internal PKI's root, and every registered CA that is verified and has
// isAuthEnabled; known are the internal intermediates, so internal clients
// may send their leaf alone.
func (s *Server) certRoots(tx *store.Tx) (*x509.CertPool, []*x509.Certificate, error) {
	a, err := s.authority(tx)
	if err != nil {
		return nil, nil, err
	}
	pool := a.Pool()
	cache := &s.authn().certs
	tx.Each(store.KindCA, "id", func(r store.Record) bool {
		ca := r.(*store.CA)
		if !ca.IsVerified || !ca.IsAuthEnabled {
			return true
		}
		if cert, err := cache.Parse(ca.CertPem); err == nil {
			pool.AddCert(cert)
		}
		return true
	})
	return pool, a.Intermediates(), nil
}

// bearerToken is the token of an "Authorization: Bearer <jwt>" header.
func bearerToken(h string) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// jwtIdentity verifies the request's bearer JWT with the signer its issuer
// names and returns the identity its claims property maps to.
func (s *Server) jwtIdentity(c *call, now time.Time) (*store.Identity, *store.ExternalJWTSigner, error) {
	token := bearerToken(c.r.Header.Get("Authorization"))
	if token == "" {
		return nil, nil, errors.New("no bearer token in the Authorization header")
	}
	h, err := auth.PeekJWT(token)
	if err != nil {
		return nil, nil, err
	}
	r := c.tx.First(store.KindExternalJWTSigner, "issuer", h.Issuer)
	if r == nil {
		return nil, nil, fmt.Errorf("no external JWT signer has the issuer %q", h.Issuer)
	}
	signer := r.(*store.ExternalJWTSigner)
	ident, err := s.signerIdentity(c, signer, token, now)
	return ident, signer, err
}

// signerIdentity verifies token against one signer and maps its claims
// property to an identity: its externalId with useExternalId, else its id.
func (s *Server) signerIdentity(c *call, signer *store.ExternalJWTSigner, token string, now time.Time) (*store.Identity, error) {
	if !signer.Enabled {
		return nil, fmt.Errorf("the external JWT signer %q is disabled", signer.Name)
	}
	check := &auth.JWTCheck{Issuer: signer.Issuer, ClaimsProperty: signer.ClaimsProperty}
	if signer.Audience != nil {
		check.Audience = *signer.Audience
	}
	switch {
	case signer.CertPem != nil && *signer.CertPem != "":
		cert, err := s.authn().certs.Parse(*signer.CertPem)
		if err != nil {
			return nil, err
		}
		// A signer's certificate outside its validity signs nothing.
		if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
			return nil, fmt.Errorf("the certificate of signer %q is not valid now", signer.Name)
		}
		check.Key = cert.PublicKey
	case signer.JwksEndpoint != nil:
		check.JWKSURL = *signer.JwksEndpoint
	}
	if signer.Kid != nil {
		check.Kid = *signer.Kid
	}
	value, err := s.authn().jwks.VerifyJWT(c.r.Context(), token, check, now)
	if err != nil {
		return nil, err
	}
	return identityForClaim(c.tx, signer, value)
}

// identityForClaim finds the identity a claim names. An externalId shared by
// several identities names none of them.
func identityForClaim(tx *store.Tx, signer *store.ExternalJWTSigner, value string) (*store.Identity, error) {
	if !signer.UseExternalID {
		return store.GetAs[*store.Identity](tx, store.KindIdentity, value)
	}
	var found *store.Identity
	n := 0
	tx.Each(store.KindIdentity, "externalId", func(r store.Record) bool {
		found, n = r.(*store.Identity), n+1
		return n < 2
	}, value)
	if n != 1 {
		return nil, fmt.Errorf("%d identities have the externalId %q", n, value)
	}
	return found, nil
}

// checkSecondaryJWT enforces secondary.requireExtJwtSigner: every request of
// a session whose identity's policy names a signer carries a valid bearer
// JWT of that signer, for that same identity.
func (s *Server) checkSecondaryJWT(c *call) error {
	if _, err := s.secondaryJWTProblem(c, c.identity); err != nil {
		s.Log.Debug("secondary JWT refused", "identity", c.identity.ID, "reason", err)
		return unauthorized("the auth policy requires a valid JWT of its external JWT signer in the Authorization header (Bearer) on every request")
	}
	return nil
}

// secondaryJWTProblem says why the request does not carry the secondary JWT
// that ident's auth policy requires (nil when it does, or none is required),
// with the required signer when it exists.
func (s *Server) secondaryJWTProblem(c *call, ident *store.Identity) (*store.ExternalJWTSigner, error) {
	p := s.authPolicyOf(c.tx, ident)
	if p == nil || p.Secondary.RequireExtJwtSigner == nil {
		return nil, nil
	}
	signer, err := store.GetAs[*store.ExternalJWTSigner](c.tx, store.KindExternalJWTSigner, *p.Secondary.RequireExtJwtSigner)
	if err != nil {
		return nil, err
	}
	token := bearerToken(c.r.Header.Get("Authorization"))
	if token == "" {
		return signer, errors.New("no bearer token")
	}
	named, err := s.signerIdentity(c, signer, token, s.now())
	if err == nil && named.ID != ident.ID {
		err = errors.New("the JWT names another identity")
	}
	return signer, err
}

// extJWTAuthQuery is the auth query of a session whose auth policy requires
// a secondary JWT the request did not carry (spec: when secondary factors are
// required, authQueries lists them): typeId EXT-JWT, provider url, httpUrl the
// signer's externalAuthUrl. The JWT is checked on every request, so the query
// is shown, not stored.
func (s *Server) extJWTAuthQuery(c *call, ident *store.Identity) *store.AuthQuery {
	signer, err := s.secondaryJWTProblem(c, ident)
	if err == nil {
		return nil
	}
	q := &store.AuthQuery{Provider: "url", TypeID: "EXT-JWT"}
	if signer != nil && signer.ExternalAuthURL != nil {
		q.HTTPURL = *signer.ExternalAuthURL
	}
	return q
}
