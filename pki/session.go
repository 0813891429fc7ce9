package pki

import (
	"crypto"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ServiceAccess are the claims of a service session token: the JWT that
// OpenZiti routers from v1.7 verify, with a key they get in the router data
// model (by its kid), before they let a client dial or bind a service.
type ServiceAccess struct {
	Issuer       string
	ServiceID    string // "sub"
	SessionID    string // "jti"
	APISessionID string // "z_asid": the router checks it against the API session the client presented
	IdentityID   string // "z_iid"
	Type         string // "z_st": Dial or Bind
	IssuedAt     time.Time
	ExpiresAt    time.Time
}

// serviceAccessClaims is the wire form, named as OpenZiti's routers read it.
type serviceAccessClaims struct {
	jwt.RegisteredClaims
	APISessionID string `json:"z_asid"`
	IdentityID   string `json:"z_iid"`
	TokenType    string `json:"z_t"`  // "s": service access
	Type         string `json:"z_st"` // Dial or Bind
	IsLegacy     bool   `json:"z_leg"`
}

// SignServiceAccess signs a service session token with key (ES256 for
// edgectl's P-256 keys), the "kid" header set to kid. The token is legacy
// in OpenZiti's terms (z_leg): its API session is a stored one, not an
// OIDC token.
func SignServiceAccess(key crypto.Signer, kid string, c ServiceAccess) (string, error) {
	method, err := signingMethod(key)
	if err != nil {
		return "", err
	}
	tok := jwt.NewWithClaims(method, serviceAccessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    c.Issuer,
			Subject:   c.ServiceID,
			Audience:  jwt.ClaimStrings{"openziti"},
			ID:        c.SessionID,
			IssuedAt:  jwt.NewNumericDate(c.IssuedAt),
			ExpiresAt: jwt.NewNumericDate(c.ExpiresAt),
		},
		APISessionID: c.APISessionID, IdentityID: c.IdentityID, TokenType: "s", Type: c.Type, IsLegacy: true,
	})
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		return "", fmt.Errorf("pki: sign a service session token: %w", err)
	}
	return s, nil
}

// ParseServiceAccess verifies a service session token with the key its
// kid names in keys and returns its claims, as a router does.
func ParseServiceAccess(token string, keys map[string]crypto.PublicKey, now time.Time) (*ServiceAccess, error) {
	var c serviceAccessClaims
	if err := parseSigned(token, &c, keys, now); err != nil {
		return nil, err
	}
	if c.TokenType != "s" {
		return nil, fmt.Errorf("pki: token type %q is not a service session's", c.TokenType)
	}
	out := &ServiceAccess{Issuer: c.Issuer, ServiceID: c.Subject, SessionID: c.ID, APISessionID: c.APISessionID,
		IdentityID: c.IdentityID, Type: c.Type}
	if c.IssuedAt != nil {
		out.IssuedAt = c.IssuedAt.Time
	}
	if c.ExpiresAt != nil {
		out.ExpiresAt = c.ExpiresAt.Time
	}
	return out, nil
}

// APIAccess are the claims of an API session token signed as a JWT: the
// access token OpenZiti routers from v1.7 verify themselves (with the keys of
// the router data model) when a client connects, instead of looking the
// token up among the sessions one controller sent them. Such a session is
// bound to no node: the router asks any node for its circuits.
type APIAccess struct {
	Issuer       string
	IdentityID   string // "sub"
	APISessionID string // "z_asid" (and "jti")
	// CertFingerprints are the certificates (SHA-1, hex) the client may
	// present to a router ("z_cfs").
	CertFingerprints []string
	IsAdmin          bool // "z_ia"
	IssuedAt         time.Time
	ExpiresAt        time.Time
}

// apiAccessClaims is the wire form, named as OpenZiti's routers read it
// (their AccessClaims: OIDC access token claims and OpenZiti's own).
type apiAccessClaims struct {
	jwt.RegisteredClaims
	APISessionID     string   `json:"z_asid"`
	IsAdmin          bool     `json:"z_ia,omitempty"`
	TokenType        string   `json:"z_t"` // "a": access
	CertFingerprints []string `json:"z_cfs"`
}

// SignAPIAccess signs an API session token with key, the "kid" header set
// to kid.
func SignAPIAccess(key crypto.Signer, kid string, c APIAccess) (string, error) {
	method, err := signingMethod(key)
	if err != nil {
		return "", err
	}
	fps := c.CertFingerprints
	if fps == nil {
		fps = []string{}
	}
	tok := jwt.NewWithClaims(method, apiAccessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    c.Issuer,
			Subject:   c.IdentityID,
			Audience:  jwt.ClaimStrings{"openziti"},
			ID:        c.APISessionID,
			IssuedAt:  jwt.NewNumericDate(c.IssuedAt),
			ExpiresAt: jwt.NewNumericDate(c.ExpiresAt),
		},
		APISessionID: c.APISessionID, IsAdmin: c.IsAdmin, TokenType: "a", CertFingerprints: fps,
	})
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		return "", fmt.Errorf("pki: sign an API session token: %w", err)
	}
	return s, nil
}

// ParseAPIAccess verifies an API session token with the key its kid names
// in keys and returns its claims, as a router does.
func ParseAPIAccess(token string, keys map[string]crypto.PublicKey, now time.Time) (*APIAccess, error) {
	var c apiAccessClaims
	if err := parseSigned(token, &c, keys, now); err != nil {
		return nil, err
	}
	if c.TokenType != "a" {
		return nil, fmt.Errorf("pki: token type %q is not an API session's", c.TokenType)
	}
	out := &APIAccess{Issuer: c.Issuer, IdentityID: c.Subject, APISessionID: c.APISessionID,
		CertFingerprints: c.CertFingerprints, IsAdmin: c.IsAdmin}
	if c.IssuedAt != nil {
		out.IssuedAt = c.IssuedAt.Time
	}
	if c.ExpiresAt != nil {
		out.ExpiresAt = c.ExpiresAt.Time
	}
	return out, nil
}

// parseSigned verifies a token signed by one of keys (by its kid) for the
// audience "openziti", as routers do, into claims.
func parseSigned(token string, claims jwt.Claims, keys map[string]crypto.PublicKey, now time.Time) error {
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		k, _ := t.Header["kid"].(string)
		pub, ok := keys[k]
		if !ok {
			return nil, fmt.Errorf("unknown kid %q", k)
		}
		return pub, nil
	}, jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithAudience("openziti"), jwt.WithValidMethods([]string{"ES256", "ES384", "ES512", "RS256", "EdDSA"}))
	return err
}

// IsAPIAccessToken reports whether token has the shape and the claims of an
// API session token (SignAPIAccess), without verifying it: the caller looks
// it up by its hash.
func IsAPIAccessToken(token string) bool {
	if strings.Count(token, ".") != 2 {
		return false
	}
	var c apiAccessClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err != nil {
		return false
	}
	return c.TokenType == "a" && slices.Contains(c.Audience, "openziti")
}
