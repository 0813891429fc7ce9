package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

func TestEnrollOtt_EndToEndIssuesTheIdentitysCertificateOnce(t *testing.T) {
	t.Parallel()
	ts := newNodeServer(t)
	ident := ts.authnIdentity("ott-user", map[string]any{"enrollment": map[string]any{"ott": true}})
	token := ts.enrollTokenOf(ident, "ott")
	key := enrollKey(t)
	csr := enrollCSR(t, key, "whatever-the-client-asks", []string{"not.copied"}, nil)
	path := clientPath("/enroll/ott?token=" + token)

	// Bad inputs: 400 naming the field, and the enrollment is still there.
	st, out := ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: path, body: "not a csr", contentType: "text/plain"}, nil)
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "csr")
	st, out = ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: path, contentType: "text/plain"}, nil)
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "csr")
	st, out = ts.enrollPost("/enroll/ott", nil, map[string]any{"csr": csr})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "token")
	st, out = ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: clientPath("/enroll/ott?token=abc"), body: csr, contentType: "text/plain"}, nil)
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "token")
	st, out = ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: clientPath("/enroll/ott?token=00000000-0000-4000-8000-000000000000"),
		body: csr, contentType: "text/plain"}, nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
	if ts.enrollTokenOf(ident, "ott") != token {
		t.Fatal("a refused request changed the enrollment")
	}

	st, ctype, raw := ts.enrollSend(enrollReq{method: http.MethodPost, path: path, body: csr, contentType: "application/x-pem-file"})
	if st != 200 || ctype != "application/x-pem-file" {
		t.Fatalf("enroll: %d %s %s", st, ctype, raw)
	}
	chain := enrollChain(t, string(raw))
	leaf := chain[0]
	if leaf.Subject.CommonName != ident || len(leaf.DNSNames) != 0 {
		t.Fatalf("certificate subject %v SANs %v, want CN %s and no SANs", leaf.Subject, leaf.DNSNames, ident)
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	roots := ts.nodeTransport().TLSClientConfig.RootCAs
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("the certificate does not chain to the CA bundle: %v", err)
	}
	if fp, _ := ts.enrollCertAuthenticator(ident); fp != enrollFP(leaf) {
		t.Fatalf("cert authenticator fingerprint %q, want %q", fp, enrollFP(leaf))
	}
	if e := dig(ts.get("/identities/"+ident), "enrollment"); len(e.(map[string]any)) != 0 {
		t.Fatalf("the enrollment is still outstanding: %v", e)
	}
	// One-time: the second use finds nothing.
	st, out = ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: path, body: csr, contentType: "text/plain"}, nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestEnrollOtt_JSONBodyAndAnswerAndTheGenericEnrollPath(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a := ts.authnIdentity("json-user", map[string]any{"enrollment": map[string]any{"ott": true}})
	csr := enrollCSR(t, enrollKey(t), "x", nil, nil)
	// The token may travel in the JSON body; application/json gets an envelope.
	st, out := ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: clientPath("/enroll/ott"), accept: "application/json"},
		map[string]any{"csr": csr, "token": ts.enrollTokenOf(a, "ott")})
	if st != 200 {
		t.Fatalf("enroll: %d %v", st, out)
	}
	if leaf := enrollChain(t, dig(out, "data", "cert").(string))[0]; leaf.Subject.CommonName != a {
		t.Fatalf("CN %q", leaf.Subject.CommonName)
	}

	// POST /enroll finds the method from the token.
	b := ts.authnIdentity("generic-user", map[string]any{"enrollment": map[string]any{"ott": true, "updb": "generic-login"}})
	st, _, raw := ts.enrollSend(enrollReq{method: http.MethodPost, path: clientPath("/enroll?token=" + ts.enrollTokenOf(b, "ott")),
		body: csr, contentType: "text/plain"})
	if st != 200 || enrollChain(t, string(raw))[0].Subject.CommonName != b {
		t.Fatalf("generic ott: %d %s", st, raw)
	}
	// A token of another method is a 400 naming the right path.
	st, out = ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: clientPath("/enroll/ott?token=" + ts.enrollTokenOf(b, "updb")),
		body: csr, contentType: "text/plain"}, nil)
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "token")
	st, out = ts.enrollPost("/enroll?method=nope", nil, map[string]any{})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "method")
	st, out = ts.enrollPost("/enroll?token=00000000-0000-4000-8000-000000000000", nil, map[string]any{})
	wantError(t, st, out, 404, "NOT_FOUND", "")
	st, out = ts.enrollPost("/enroll?method=updb&token="+ts.enrollTokenOf(b, "updb"), nil, map[string]any{"password": "Generic-pass-1"})
	if st != 200 {
		t.Fatalf("generic updb: %d %v", st, out)
	}
}

func TestEnrollUpdb_SetsThePasswordUnderThePolicyAndLoginWorks(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	pol := ts.create("/auth-policies", authPolicyBody("strict")) // min 8, mixed case, a digit
	ident := ts.authnIdentity("updb-user", map[string]any{"authPolicyId": pol, "enrollment": map[string]any{"updb": "updb-login"}})
	token := ts.enrollTokenOf(ident, "updb")
	path := "/enroll/updb?token=" + token
	for _, bad := range []map[string]any{{}, {"password": 5}, {"password": "abc"}, {"password": "alllowercase1"}, {"password": "NoDigitsHere"}} {
		st, out := ts.enrollPost(path, nil, bad)
		wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "password")
	}
	if n := ts.authnCount("/authenticators?filter=identityId%3D%22" + ident + "%22"); n != 0 {
		t.Fatalf("a refused enrollment stored %d authenticators", n)
	}
	if st, out := ts.enrollPost(path, nil, map[string]any{"password": "Good-pass-123"}); st != 200 {
		t.Fatalf("enroll: %d %v", st, out)
	}
	st, out := ts.doAs("", http.MethodPost, clientPath("/authenticate?method=password"), map[string]any{"username": "updb-login", "password": "Good-pass-123"})
	if st != 200 || dig(out, "data", "identityId") != ident {
		t.Fatalf("login after updb enrollment: %d %v", st, out)
	}
	st, out = ts.enrollPost(path, nil, map[string]any{"password": "Good-pass-123"})
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestEnrollOttCA_BindsTheClientCertificateOfTheEnrollmentsCA(t *testing.T) {
	t.Parallel()
	ts := newNodeServer(t)
	caID, ca := ts.authnVerifiedCA("ottca-ca", true)
	_, other := ts.authnVerifiedCA("other-ca", true)
	ident := ts.authnIdentity("ottca-user", map[string]any{"enrollment": map[string]any{"ottca": caID}})
	path := "/enroll/ottca?token=" + ts.enrollTokenOf(ident, "ottca")

	st, out := ts.enrollPost(path, nil, nil)
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	wrong, _ := other.leafTLS(t, "device")
	st, out = ts.enrollPost(path, wrong, nil)
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	if fp, _ := ts.enrollCertAuthenticator(ident); fp != "" {
		t.Fatal("a refused enrollment bound a certificate")
	}

	good, leaf := ca.leafTLS(t, "device")
	if st, out := ts.enrollPost(path, good, nil); st != 200 {
		t.Fatalf("enroll: %d %v", st, out)
	}
	if fp, _ := ts.enrollCertAuthenticator(ident); fp != enrollFP(leaf) {
		t.Fatalf("fingerprint %q, want %q", fp, enrollFP(leaf))
	}
	st, out = ts.enrollPost(path, good, nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestEnrollJWKS_VerifiesEnrollmentAndNetworkJWTs(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, ctype, raw := ts.enrollSend(enrollReq{method: http.MethodGet, path: clientPath("/enroll/jwks")})
	if st != 200 || ctype != "application/json" {
		t.Fatalf("jwks: %d %s %s", st, ctype, raw)
	}
	var set struct {
		Keys []struct{ Kty, Crv, X, Y, Kid, Alg string }
	}
	// The authority's key (JWTs made before nodes signed with their API
	// server keys) and this node's.
	if err := json.Unmarshal(raw, &set); err != nil || len(set.Keys) != 2 || set.Keys[0].Alg != "ES256" || set.Keys[1].Alg != "ES256" {
		t.Fatalf("jwks: %v %s", err, raw)
	}
	verify := func(tok string) jwt.MapClaims {
		claims := jwt.MapClaims{}
		parsed, err := jwt.ParseWithClaims(tok, claims, func(t *jwt.Token) (any, error) {
			for _, k := range set.Keys {
				if t.Header["kid"] == k.Kid {
					xb, _ := base64.RawURLEncoding.DecodeString(k.X)
					yb, _ := base64.RawURLEncoding.DecodeString(k.Y)
					return &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(xb), Y: new(big.Int).SetBytes(yb)}, nil
				}
			}
			return nil, jwt.ErrTokenUnverifiable
		}, jwt.WithValidMethods([]string{"ES256"}))
		if err != nil || !parsed.Valid {
			t.Fatalf("JWT does not verify with the JWKS: %v", err)
		}
		return claims
	}

	ident := ts.authnIdentity("jwks-user", map[string]any{"enrollment": map[string]any{"ott": true}})
	if c := verify(dig(ts.get("/identities/"+ident), "enrollment", "ott", "jwt").(string)); c["sub"] != ident {
		t.Fatalf("enrollment JWT claims %v", c)
	}
	for _, p := range []string{clientPath("/network-jwts"), mgmt("/network-jwts")} {
		st, out := ts.doAs("", http.MethodGet, p, nil)
		data, _ := out["data"].([]any)
		if st != 200 || len(data) != 1 || dig(data[0], "name") != "default" {
			t.Fatalf("%s: %d %v", p, st, out)
		}
		c := verify(dig(data[0], "token").(string))
		ctrls, _ := c["ctrls"].([]any)
		if c["em"] != "network" || c["iss"] != ts.base || len(ctrls) == 0 || c["exp"] == nil {
			t.Fatalf("network JWT claims %v", c)
		}
	}
}
