package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// JWTLeeway is the clock skew allowed on exp and nbf of external JWTs.
const JWTLeeway = 30 * time.Second

// ErrBadJWT: the token is not a JWT that any check could accept.
var ErrBadJWT = errors.New("auth: malformed JWT")

// JWTHeader is what a token says about itself before it is verified: enough
// to pick the signer (by issuer) and its key (by kid), nothing to trust.
type JWTHeader struct {
	Issuer string
	Kid    string
}

// PeekJWT reads the issuer and kid of a token without verifying it.
func PeekJWT(token string) (*JWTHeader, error) {
	claims := jwt.MapClaims{}
	t, _, err := jwt.NewParser().ParseUnverified(token, claims)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadJWT, err)
	}
	h := &JWTHeader{}
	h.Issuer, _ = claims["iss"].(string)
	h.Kid, _ = t.Header["kid"].(string)
	return h, nil
}

// JWTCheck is what verifying a token against one external JWT signer needs.
type JWTCheck struct {
	Issuer string
	// Audience, when not empty, must be in the token's aud.
	Audience string
	// Key is the signer's certificate key (certPem signers); JWKSURL is used otherwise.
	Key     crypto.PublicKey
	JWKSURL string
	// Kid, when set (the signer's kid), must equal the token's kid.
	Kid string
	// ClaimsProperty names the claim that identifies the identity ("sub" by default).
	ClaimsProperty string
}

// methodsFor lists the signature algorithms a key of that type can verify:
// never "none", never HMAC (where a public key would become a shared secret).
func methodsFor(key crypto.PublicKey) []string {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
	case *ecdsa.PublicKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return []string{"ES256"}
		case 384:
			return []string{"ES384"}
		case 521:
			return []string{"ES512"}
		}
	case ed25519.PublicKey:
		return []string{"EdDSA"}
	}
	return nil
}

// VerifyJWT checks a token's signature, issuer, audience, exp (required) and
// nbf (if present) at now, with JWTLeeway, and returns the value of the
// check's claims property, which must be a non-empty string.
func (j *JWKS) VerifyJWT(ctx context.Context, token string, c *JWTCheck, now time.Time) (string, error) {
	h, err := PeekJWT(token)
	if err != nil {
		return "", err
	}
	if c.Kid != "" && h.Kid != c.Kid {
		return "", fmt.Errorf("%w: kid %q, want %q", ErrUnknownKid, h.Kid, c.Kid)
	}
	key := c.Key
	switch {
	case key != nil:
	case c.JWKSURL != "":
		if h.Kid == "" {
			return "", fmt.Errorf("%w: the token has no kid", ErrUnknownKid)
		}
		if key, err = j.Key(ctx, c.JWKSURL, h.Kid, now); err != nil {
			return "", err
		}
	default:
		return "", errors.New("auth: the signer has no key")
	}
	methods := methodsFor(key)
	if methods == nil {
		return "", fmt.Errorf("auth: unsupported key type %T", key)
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithIssuer(c.Issuer), jwt.WithLeeway(JWTLeeway),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(func() time.Time { return now })}
	if c.Audience != "" {
		opts = append(opts, jwt.WithAudience(c.Audience))
	}
	claims := jwt.MapClaims{}
	if _, err := jwt.NewParser(opts...).ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
		return "", err
	}
	prop := c.ClaimsProperty
	if prop == "" {
		prop = "sub"
	}
	v, _ := claims[prop].(string)
	if v == "" {
		return "", fmt.Errorf("auth: the claim %q is missing or not a string", prop)
	}
	return v, nil
}
