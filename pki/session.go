package pki

import (
	"crypto"
	"fmt"
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
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		k, _ := t.Header["kid"].(string)
		pub, ok := keys[k]
		if !ok {
			return nil, fmt.Errorf("unknown kid %q", k)
		}
		return pub, nil
	}, jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithAudience("openziti"), jwt.WithValidMethods([]string{"ES256", "ES384", "ES512", "RS256", "EdDSA"}))
	if err != nil {
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
