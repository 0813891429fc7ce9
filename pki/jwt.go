package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// EnrollmentClaims are the claims of an enrollment JWT. ExpiresAt has
// one-second precision on the wire, so a parsed value is truncated.
type EnrollmentClaims struct {
	Issuer      string    // "iss"
	Subject     string    // "sub": the identity or router id being enrolled
	JTI         string    // "jti": the enrollment id, for one-time use
	Method      string    // "em": the enrollment method
	ExpiresAt   time.Time // "exp"; required
	Controllers []string  // "ctrls": controller addresses to enroll against
}

// wireClaims is the JSON form; RegisteredClaims supplies iss/sub/jti/exp
// and the validation of exp/nbf/iat.
type wireClaims struct {
	jwt.RegisteredClaims
	Method      string   `json:"em,omitempty"`
	Controllers []string `json:"ctrls,omitempty"`
}

// SignEnrollmentJWT signs claims with ES256 and sets the "kid" header to
// the authority's key id.
func (a *Authority) SignEnrollmentJWT(claims EnrollmentClaims) (string, error) {
	return SignEnrollmentJWTWith(a.signKey, a.kid, claims)
}

// signingMethod is the JWT algorithm of a key.
func signingMethod(key crypto.Signer) (jwt.SigningMethod, error) {
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return jwt.SigningMethodES256, nil
		case 384:
			return jwt.SigningMethodES384, nil
		case 521:
			return jwt.SigningMethodES512, nil
		}
	case *rsa.PublicKey:
		return jwt.SigningMethodRS256, nil
	case ed25519.PublicKey:
		return jwt.SigningMethodEdDSA, nil
	}
	return nil, fmt.Errorf("pki: no JWT algorithm for a %T key", key.Public())
}

// KeyID is the "kid" of a public key: the base64url SHA-256 of its
// SubjectPublicKeyInfo (RFC 7638 in spirit, over the DER form).
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("pki: key id: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// SignEnrollmentJWTWith signs claims with key (ES256/384/512, RS256 or
// EdDSA, by the key) and sets the "kid" header to kid. OpenZiti's enrollers
// verify the signature with the key of the TLS certificate the server at
// "iss" presents, so a node signs with its API server certificate's key.
func SignEnrollmentJWTWith(key crypto.Signer, kid string, claims EnrollmentClaims) (string, error) {
	if claims.ExpiresAt.IsZero() {
		return "", fmt.Errorf("%w: enrollment token needs an expiry", ErrBadRequest)
	}
	wc := wireClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    claims.Issuer,
			Subject:   claims.Subject,
			ID:        claims.JTI,
			ExpiresAt: jwt.NewNumericDate(claims.ExpiresAt),
		},
		Method:      claims.Method,
		Controllers: claims.Controllers,
	}
	method, err := signingMethod(key)
	if err != nil {
		return "", err
	}
	tok := jwt.NewWithClaims(method, wc)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		return "", fmt.Errorf("pki: sign enrollment token: %w", err)
	}
	return s, nil
}

// ParseEnrollmentJWT verifies token (algorithm ES256 only, kid equal to
// this authority's, valid signature, exp present and after now) and
// returns its claims. Expiry yields ErrTokenExpired; every other failure
// yields ErrInvalidToken.
func (a *Authority) ParseEnrollmentJWT(token string, now time.Time) (*EnrollmentClaims, error) {
	var wc wireClaims
	parser := jwt.NewParser(
		// Pinning the algorithm list defeats alg=none and the HS256-with-
		// public-key confusion attack.
		jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}),
		jwt.WithTimeFunc(func() time.Time { return now }),
		jwt.WithExpirationRequired(),
	)
	_, err := parser.ParseWithClaims(token, &wc, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid != a.kid {
			return nil, fmt.Errorf("unknown kid %q", kid)
		}
		return &a.signKey.PublicKey, nil
	})
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return nil, fmt.Errorf("%w: %w", ErrTokenExpired, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	return &EnrollmentClaims{
		Issuer:      wc.Issuer,
		Subject:     wc.Subject,
		JTI:         wc.ID,
		Method:      wc.Method,
		ExpiresAt:   wc.ExpiresAt.Time,
		Controllers: wc.Controllers,
	}, nil
}

type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// PublicJWK is the JSON Web Key of an EC (P-256/384/521), RSA or Ed25519
// public key, for a key set that verifies enrollment JWTs.
func PublicJWK(pub crypto.PublicKey, kid string) (json.RawMessage, error) {
	m := map[string]string{"kid": kid, "use": "sig"}
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		pt, err := k.Bytes()
		if err != nil {
			return nil, fmt.Errorf("pki: JWK: %w", err)
		}
		n := (len(pt) - 1) / 2
		m["kty"], m["crv"] = "EC", k.Curve.Params().Name
		m["x"], m["y"] = base64.RawURLEncoding.EncodeToString(pt[1:1+n]), base64.RawURLEncoding.EncodeToString(pt[1+n:])
		m["alg"] = map[int]string{256: "ES256", 384: "ES384", 521: "ES512"}[k.Curve.Params().BitSize]
	case *rsa.PublicKey:
		m["kty"], m["alg"] = "RSA", "RS256"
		m["n"] = base64.RawURLEncoding.EncodeToString(k.N.Bytes())
		m["e"] = base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())
	case ed25519.PublicKey:
		m["kty"], m["crv"], m["alg"] = "OKP", "Ed25519", "EdDSA"
		m["x"] = base64.RawURLEncoding.EncodeToString(k)
	default:
		return nil, fmt.Errorf("pki: no JWK for a %T key", pub)
	}
	return json.Marshal(m)
}

// AuthorityJWK is the authority's own signing key as a JWK.
func (a *Authority) AuthorityJWK() (json.RawMessage, error) {
	return PublicJWK(&a.signKey.PublicKey, a.kid)
}

// JWKS returns the enrollment signing public key as a JSON Web Key Set
// (RFC 7517), so clients can verify enrollment tokens offline. The
// returned slice is a copy.
func (a *Authority) JWKS() []byte { return bytes.Clone(a.jwks) }

// buildJWKS runs once in Load so encoding problems surface there rather
// than in an accessor that cannot return an error.
func buildJWKS(key *ecdsa.PublicKey, kid string) ([]byte, error) {
	// Bytes is 0x04 || X || Y with fixed-width coordinates, which is what
	// RFC 7518 requires for "x" and "y".
	pt, err := key.Bytes()
	if err != nil {
		return nil, fmt.Errorf("pki: JWKS: %w", err)
	}
	n := (len(pt) - 1) / 2
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{{
		Kty: "EC",
		Crv: "P-256",
		X:   base64.RawURLEncoding.EncodeToString(pt[1 : 1+n]),
		Y:   base64.RawURLEncoding.EncodeToString(pt[1+n:]),
		Kid: kid,
		Use: "sig",
		Alg: jwt.SigningMethodES256.Alg(),
	}}}
	return json.Marshal(set)
}
