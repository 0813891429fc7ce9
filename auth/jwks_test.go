package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func ecJWK(kid string, k *ecdsa.PrivateKey) map[string]string {
	x, y := make([]byte, 32), make([]byte, 32)
	k.X.FillBytes(x)
	k.Y.FillBytes(y)
	e := base64.RawURLEncoding.EncodeToString
	return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": e(x), "y": e(y)}
}

// jwksServer serves body() and counts requests.
func jwksServer(t *testing.T, body func() []byte) (*httptest.Server, *atomic.Int32, *JWKS) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write(body())
	}))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, &hits, NewJWKS(pool)
}

func TestJWKS_CachesRefreshesOnUnknownKidAtMostOncePerInterval(t *testing.T) {
	k1, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var keys atomic.Value
	keys.Store([]map[string]string{ecJWK("k1", k1)})
	srv, hits, j := jwksServer(t, func() []byte {
		b, _ := json.Marshal(map[string]any{"keys": keys.Load()})
		return b
	})
	ctx, now := context.Background(), time.Unix(1_700_000_000, 0)
	for i := 0; i < 5; i++ {
		if _, err := j.Key(ctx, srv.URL, "k1", now); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		if _, err := j.Key(ctx, srv.URL, "forged-kid", now.Add(time.Second)); !errors.Is(err, ErrUnknownKid) {
			t.Fatalf("unknown kid: %v", err)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1: unknown kids within the interval must not refetch", n)
	}
	keys.Store([]map[string]string{ecJWK("k1", k1), ecJWK("k2", k2)})
	if _, err := j.Key(ctx, srv.URL, "k2", now.Add(DefaultJWKSMinRefresh+time.Second)); err != nil || hits.Load() != 2 {
		t.Fatalf("rotated key: %v after %d fetches", err, hits.Load())
	}
}

func TestJWKS_RefusesOversizedAndUntrustedEndpoints(t *testing.T) {
	srv, _, j := jwksServer(t, func() []byte { return []byte(`{"keys":[` + strings.Repeat(" ", 2<<20) + `]}`) })
	if _, err := j.Key(context.Background(), srv.URL, "k", time.Now()); err == nil || errors.Is(err, ErrUnknownKid) {
		t.Fatalf("oversized set: %v", err)
	}
	if _, err := NewJWKS(nil).Key(context.Background(), srv.URL, "k", time.Now()); err == nil {
		t.Fatal("a server the system pool does not trust was used")
	}
}

func TestVerifyJWT_RefusesNoneHMACAndAlgorithmsOfAnotherKeyType(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Unix(1_700_000_000, 0)
	check := &JWTCheck{Issuer: "https://idp", Audience: "edge", Key: &key.PublicKey}
	claims := jwt.MapClaims{"iss": "https://idp", "aud": "edge", "sub": "id-1", "exp": now.Add(time.Minute).Unix()}
	j := NewJWKS(nil)
	good, _ := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(key)
	if sub, err := j.VerifyJWT(context.Background(), good, check, now); err != nil || sub != "id-1" {
		t.Fatalf("good token: %q %v", sub, err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	hs, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(der)
	for name, tok := range map[string]string{"none": none, "HS256": hs} {
		if _, err := j.VerifyJWT(context.Background(), tok, check, now); !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
			t.Fatalf("%s: %v, want an invalid signing method", name, err)
		}
	}
	if _, err := j.VerifyJWT(context.Background(), good, check, now.Add(time.Minute+JWTLeeway+time.Second)); !errors.Is(err, jwt.ErrTokenExpired) {
		t.Fatalf("expired: %v", err)
	}
	if _, err := j.VerifyJWT(context.Background(), good, check, now.Add(time.Minute+JWTLeeway-time.Second)); err != nil {
		t.Fatalf("within the leeway: %v", err)
	}
}
