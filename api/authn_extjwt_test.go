package api_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testIdP is an identity provider on loopback TLS serving a JWKS that tests change.
type testIdP struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys map[string]crypto.Signer
	hits int
}

func newTestIdP(t *testing.T) *testIdP {
	t.Helper()
	idp := &testIdP{keys: map[string]crypto.Signer{}}
	idp.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		idp.mu.Lock()
		defer idp.mu.Unlock()
		idp.hits++
		var keys []map[string]string
		for kid, k := range idp.keys {
			keys = append(keys, jwkOf(kid, k.Public()))
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	}))
	t.Cleanup(idp.srv.Close)
	return idp
}

func (idp *testIdP) add(kid string, k crypto.Signer) {
	idp.mu.Lock()
	idp.keys[kid] = k
	idp.mu.Unlock()
}

func (idp *testIdP) fetches() int {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	return idp.hits
}

// roots trusts the IdP's TLS certificate.
func (idp *testIdP) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(idp.srv.Certificate())
	return p
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func jwkOf(kid string, pub crypto.PublicKey) map[string]string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PublicKey:
		x, y := make([]byte, 32), make([]byte, 32)
		k.X.FillBytes(x)
		k.Y.FillBytes(y)
		return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(x), "y": b64(y)}
	}
	panic("key type")
}

// signJWT signs claims with method and key, with kid when not "".
func signJWT(t *testing.T, m jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (ts *testServer) jwtLogin(token string) (int, map[string]any, http.Header) {
	ts.t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return ts.send(req{method: http.MethodPost, path: clientPath("/authenticate?method=ext-jwt"), body: map[string]any{}, header: h})
}

func TestExtJWTAuth_OnlyAGoodTokenOfAJWKSSignerPasses(t *testing.T) {
	t.Parallel()
	idp := newTestIdP(t)
	rsaKey, ecKey := testKey(t, true), testKey(t, false)
	idp.add("rsa-1", rsaKey)
	idp.add("ec-1", ecKey)
	ts, clock := newAuthFlowServer(t, idp.roots())
	const iss = "https://idp.test"
	ts.create("/external-jwt-signers", map[string]any{"name": "idp", "enabled": true, "issuer": iss, "audience": "edgectl",
		"jwksEndpoint": idp.srv.URL + "/jwks"})
	id := ts.authnIdentity("jwt-user", nil)
	now := clock.Now()
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"iss": iss, "aud": "edgectl", "sub": id, "exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix()}
		if edit != nil {
			edit(c)
		}
		return c
	}
	for name, tok := range map[string]string{
		"RS256": signJWT(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(nil)),
		"PS384": signJWT(t, jwt.SigningMethodPS384, rsaKey, "rsa-1", claims(nil)),
		"ES256": signJWT(t, jwt.SigningMethodES256, ecKey, "ec-1", claims(nil)),
	} {
		_, sess := ts.okSession(ts.jwtLogin(tok))
		if sess["identityId"] != id || sess["authenticatorId"] == "" {
			t.Fatalf("%s: %v", name, sess)
		}
	}
	pubPEM, _ := x509.MarshalPKIXPublicKey(rsaKey.Public())
	hmacSecret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubPEM})
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	fetched := idp.fetches()
	for name, tok := range map[string]string{
		"no token":                  "",
		"not a JWT":                 "not.a.jwt",
		"expired":                   signJWT(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-5 * time.Minute).Unix() })),
		"no exp":                    signJWT(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		"not yet valid":             signJWT(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(5 * time.Minute).Unix() })),
		"wrong audience":            signJWT(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { c["aud"] = "someone-else" })),
		"wrong issuer":              signJWT(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.test" })),
		"unknown kid":               signJWT(t, jwt.SigningMethodRS256, rsaKey, "rsa-9", claims(nil)),
		"no kid":                    signJWT(t, jwt.SigningMethodRS256, rsaKey, "", claims(nil)),
		"alg none":                  none,
		"HS256 with the public key": signJWT(t, jwt.SigningMethodHS256, hmacSecret, "rsa-1", claims(nil)),
		"EC alg on RSA key":         signJWT(t, jwt.SigningMethodES256, ecKey, "rsa-1", claims(nil)),
		"other key, same kid":       signJWT(t, jwt.SigningMethodRS256, testKey(t, true), "rsa-1", claims(nil)),
		"unknown identity":          signJWT(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { c["sub"] = "nobody" })),
		"sub not a string":          signJWT(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", claims(func(c jwt.MapClaims) { c["sub"] = 42 })),
	} {
		t.Run(name, func(t *testing.T) {
			st, out, _ := ts.jwtLogin(tok)
			wantError(t, st, out, 401, "INVALID_AUTH", "")
		})
	}
	// Unknown kids fetched the set again at most once within the minimum refresh interval.
	if n := idp.fetches() - fetched; n > 1 {
		t.Fatalf("unknown kids made %d fetches", n)
	}
	// A rotated key is picked up once the interval has passed.
	newKey := testKey(t, true)
	idp.add("rsa-2", newKey)
	clock.Advance(31 * time.Second)
	now = clock.Now()
	ts.okSession(ts.jwtLogin(signJWT(t, jwt.SigningMethodRS256, newKey, "rsa-2", claims(nil))))
}

func TestExtJWTAuth_CertSignerExternalIdDisabledSignersAndPolicies(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowServer(t, nil)
	root := newRootIssuer(t, "IdP Signing")
	key := testKey(t, false)
	now := clock.Now()
	signingCert := root.sign(t, "idp-signing", key.Public(), false, now.Add(-time.Hour), now.Add(time.Hour))
	const iss = "https://cert-idp.test"
	signer := ts.create("/external-jwt-signers", map[string]any{"name": "cert-idp", "enabled": true, "issuer": iss, "audience": nil,
		"certPem": authnPEM(signingCert.Raw), "kid": "k1", "claimsProperty": "email", "useExternalId": true})
	id := ts.authnIdentity("carol", map[string]any{"externalId": "carol@example.com"})
	tok := func(email, kid string, k crypto.Signer) string {
		return signJWT(t, jwt.SigningMethodES256, k, kid, jwt.MapClaims{"iss": iss, "email": email, "exp": now.Add(time.Minute).Unix()})
	}
	_, sess := ts.okSession(ts.jwtLogin(tok("carol@example.com", "k1", key)))
	if sess["identityId"] != id {
		t.Fatalf("externalId mapping: %v", sess)
	}
	for name, token := range map[string]string{
		"other key":          tok("carol@example.com", "k1", testKey(t, false)),
		"other kid":          tok("carol@example.com", "k2", key),
		"unknown externalId": tok("dave@example.com", "k1", key),
	} {
		st, out, _ := ts.jwtLogin(token)
		t.Run(name, func(t *testing.T) { wantError(t, st, out, 401, "INVALID_AUTH", "") })
	}

	// The identity's policy decides: extJwt not allowed, or only other signers.
	noJWT := ts.policyWith("no-jwt", func(p, _ map[string]any) { p["extJwt"].(map[string]any)["allowed"] = false })
	ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"authPolicyId": noJWT})
	st, out, _ := ts.jwtLogin(tok("carol@example.com", "k1", key))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	other := ts.create("/external-jwt-signers", map[string]any{"name": "other", "enabled": true, "issuer": "https://other.test",
		"audience": nil, "jwksEndpoint": "https://other.test/jwks"})
	onlyOther := ts.policyWith("only-other", func(p, _ map[string]any) {
		p["extJwt"] = map[string]any{"allowed": true, "allowedSigners": []string{other}}
	})
	ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"authPolicyId": onlyOther})
	st, out, _ = ts.jwtLogin(tok("carol@example.com", "k1", key))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	ts.do(http.MethodPatch, mgmt("/auth-policies/"+onlyOther), map[string]any{"primary": map[string]any{"extJwt": map[string]any{"allowedSigners": []string{other, signer}}}})
	ts.okSession(ts.jwtLogin(tok("carol@example.com", "k1", key)))

	// A disabled identity cannot log in with a JWT either.
	ts.do(http.MethodPost, mgmt("/identities/"+id+"/disable"), map[string]any{"durationMinutes": 5})
	st, out, _ = ts.jwtLogin(tok("carol@example.com", "k1", key))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	ts.do(http.MethodPost, mgmt("/identities/"+id+"/enable"), nil)
	ts.okSession(ts.jwtLogin(tok("carol@example.com", "k1", key)))

	// A disabled signer signs nothing.
	ts.do(http.MethodPatch, mgmt("/external-jwt-signers/"+signer), map[string]any{"enabled": false})
	st, out, _ = ts.jwtLogin(tok("carol@example.com", "k1", key))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
}

// secondaryJWTServer starts a server whose user "two-factor-"+name, password
// "right-password", has an auth policy that requires a JWT of the external
// signer name with issuer iss (more fields of its body in extra), whose
// JWKS (kid "k", key) a test IdP serves. It returns the user's id.
func secondaryJWTServer(t *testing.T, name, iss string, extra map[string]any) (*testServer, *testClock, crypto.Signer, string) {
	t.Helper()
	idp := newTestIdP(t)
	key := testKey(t, false)
	idp.add("k", key)
	ts, clock := newAuthFlowServer(t, idp.roots())
	body := map[string]any{"name": name, "enabled": true, "issuer": iss, "audience": nil, "jwksEndpoint": idp.srv.URL + "/jwks"}
	maps.Copy(body, extra)
	signer := ts.create("/external-jwt-signers", body)
	pol := ts.policyWith("needs-"+name, func(_, s map[string]any) { s["requireExtJwtSigner"] = signer })
	id := ts.userWithPassword("two-factor-"+name, "right-password", map[string]any{"authPolicyId": pol})
	return ts, clock, key, id
}

func TestExtJWTAuth_SecondarySignerIsRequiredOnEveryRequest(t *testing.T) {
	t.Parallel()
	const iss = "https://second.test"
	ts, clock, key, id := secondaryJWTServer(t, "second", iss, nil)
	other := ts.authnIdentity("someone-else", nil)
	token, _ := ts.okSession(ts.passwordLogin("two-factor-second", "right-password"))
	bearer := func(sub string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + signJWT(t, jwt.SigningMethodES256, key, "k",
			jwt.MapClaims{"iss": iss, "sub": sub, "exp": clock.Now().Add(time.Minute).Unix()})}
	}
	get := func(h map[string]string) (int, map[string]any) {
		st, out, _ := ts.send(req{method: http.MethodGet, path: clientPath("/current-identity"), token: token, header: h})
		return st, out
	}
	st, out := get(nil)
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	st, out = get(bearer(other))
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	if st, out := get(bearer(id)); st != 200 {
		t.Fatalf("with the signer's JWT: %d %v", st, out)
	}
}
