package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func testClaims() EnrollmentClaims {
	return EnrollmentClaims{
		Issuer:      "https://ctrl.example.com",
		Subject:     "identity-1",
		JTI:         "enroll-1",
		Method:      "ott",
		ExpiresAt:   testNow.Add(time.Hour),
		Controllers: []string{"tls:ctrl1:1280", "tls:ctrl2:1280"},
	}
}

func TestEnrollmentJWTSignParseRoundTrip(t *testing.T) {
	_, a := newTestAuthority(t)
	want := testClaims()
	tok, err := a.SignEnrollmentJWT(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.ParseEnrollmentJWT(tok, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if got.Issuer != want.Issuer || got.Subject != want.Subject || got.JTI != want.JTI ||
		got.Method != want.Method || !got.ExpiresAt.Equal(want.ExpiresAt) ||
		!slices.Equal(got.Controllers, want.Controllers) {
		t.Fatalf("claims = %+v, want %+v", got, want)
	}

	// The wire names are a contract with enrolling clients.
	var raw map[string]any
	payload, _ := base64.RawURLEncoding.DecodeString(splitJWT(t, tok)[1])
	if err := json.Unmarshal(payload, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"iss", "sub", "jti", "em", "exp", "ctrls"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("claim %q missing from %v", k, raw)
		}
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(splitJWT(t, tok)[0])
	var h map[string]any
	_ = json.Unmarshal(hdr, &h)
	if h["alg"] != "ES256" || h["kid"] != a.KeyID() {
		t.Errorf("header = %v", h)
	}
}

func splitJWT(t *testing.T, tok string) []string {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	return parts
}

func TestEnrollmentJWTExpiredRejected(t *testing.T) {
	_, a := newTestAuthority(t)
	tok, err := a.SignEnrollmentJWT(testClaims())
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.ParseEnrollmentJWT(tok, testNow.Add(2*time.Hour))
	wantErr(t, err, ErrTokenExpired)
}

func TestEnrollmentJWTWithoutExpiryNotSigned(t *testing.T) {
	_, a := newTestAuthority(t)
	c := testClaims()
	c.ExpiresAt = time.Time{}
	_, err := a.SignEnrollmentJWT(c)
	wantErr(t, err, ErrBadRequest)
}

func wireFor(c EnrollmentClaims) wireClaims {
	return wireClaims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: c.Subject, ExpiresAt: jwt.NewNumericDate(c.ExpiresAt)},
		Method:           c.Method,
	}
}

func TestEnrollmentJWTAlgNoneRejected(t *testing.T) {
	_, a := newTestAuthority(t)
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, wireFor(testClaims()))
	tok.Header["kid"] = a.KeyID()
	s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.ParseEnrollmentJWT(s, testNow)
	wantErr(t, err, ErrInvalidToken)
}

func TestEnrollmentJWTHS256WithPublicKeyAsSecretRejected(t *testing.T) {
	_, a := newTestAuthority(t)
	// The classic confusion attack: HMAC keyed with the (public) key bytes.
	pubDER, _ := x509.MarshalPKIXPublicKey(&a.signKey.PublicKey)
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, wireFor(testClaims()))
	tok.Header["kid"] = a.KeyID()
	s, err := tok.SignedString(pubDER)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.ParseEnrollmentJWT(s, testNow)
	wantErr(t, err, ErrInvalidToken)
}

func TestEnrollmentJWTWrongKidRejected(t *testing.T) {
	_, a := newTestAuthority(t)
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, wireFor(testClaims()))
	tok.Header["kid"] = "some-other-kid"
	s, err := tok.SignedString(a.signKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.ParseEnrollmentJWT(s, testNow)
	wantErr(t, err, ErrInvalidToken)
}

func TestEnrollmentJWTFromAnotherAuthorityRejected(t *testing.T) {
	_, a := newTestAuthority(t)
	_, other := newTestAuthority(t)
	s, err := other.SignEnrollmentJWT(testClaims())
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.ParseEnrollmentJWT(s, testNow)
	wantErr(t, err, ErrInvalidToken)

	// Right kid, wrong key: the signature check must catch it.
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, wireFor(testClaims()))
	tok.Header["kid"] = a.KeyID()
	s, err = tok.SignedString(other.signKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.ParseEnrollmentJWT(s, testNow)
	wantErr(t, err, ErrInvalidToken)
}

func TestJWKSVerifiesIssuedToken(t *testing.T) {
	_, a := newTestAuthority(t)
	var set struct {
		Keys []struct{ Kty, Crv, X, Y, Kid, Alg string }
	}
	if err := json.Unmarshal(a.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 {
		t.Fatalf("want 1 key, got %d", len(set.Keys))
	}
	k := set.Keys[0]
	if k.Kty != "EC" || k.Crv != "P-256" || k.Alg != "ES256" || k.Kid != a.KeyID() {
		t.Fatalf("jwk = %+v", k)
	}
	x, _ := base64.RawURLEncoding.DecodeString(k.X)
	y, _ := base64.RawURLEncoding.DecodeString(k.Y)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := a.SignEnrollmentJWT(testClaims())
	_, err = jwt.Parse(tok, func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithTimeFunc(func() time.Time { return testNow }))
	if err != nil {
		t.Fatalf("token does not verify with JWKS key: %v", err)
	}
}
