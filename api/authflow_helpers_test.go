package api_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"edgectl/controller"
)

// testClock is the API's clock in the authentication tests: lockouts, TOTP
// windows and validity checks move with Advance, never with sleeps.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newAuthFlowServer is newTestServer with the API on a test clock and the
// JWKS client trusting jwksRoots (nil: the system pool).
func newAuthFlowServer(t *testing.T, jwksRoots *x509.CertPool) (*testServer, *testClock) {
	t.Helper()
	clock := &testClock{t: time.Now().UTC()}
	ts := newTestServerWith(t, func(c *controller.Config) { c.Now, c.JWKSRootCAs = clock.Now, jwksRoots })
	return ts, clock
}

// newAuthFlowNode is newAuthFlowServer on a whole node, for the tests that
// present client certificates.
func newAuthFlowNode(t *testing.T, jwksRoots *x509.CertPool) (*testServer, *testClock) {
	t.Helper()
	clock := &testClock{t: time.Now().UTC()}
	ts := newNodeServerWith(t, func(c *controller.Config) { c.Now, c.JWKSRootCAs = clock.Now, jwksRoots })
	return ts, clock
}

// req is one request of the authentication tests.
type req struct {
	method, path string
	token        string
	body         any
	header       map[string]string
	client       *http.Client // nil: the server's client (no client certificate)
}

// send sends r and returns the status, the decoded body and the headers. A
// string body is sent as is, anything else as JSON.
func (ts *testServer) send(r req) (int, map[string]any, http.Header) {
	ts.t.Helper()
	var rd io.Reader
	switch b := r.body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(r.method, ts.base+r.path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if r.token != "" {
		hr.Header.Set("svc-session", r.token)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	cl := r.client
	if cl == nil {
		cl = ts.client
	}
	resp, err := cl.Do(hr)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		out["raw"] = string(raw)
	}
	return resp.StatusCode, out, resp.Header
}

// passwordLogin authenticates with a password on the Client API.
func (ts *testServer) passwordLogin(user, pass string) (int, map[string]any, http.Header) {
	ts.t.Helper()
	return ts.send(req{method: http.MethodPost, path: clientPath("/authenticate?method=password"),
		body: map[string]any{"username": user, "password": pass}})
}

// okSession is the token and data of a successful authenticate answer.
func (ts *testServer) okSession(st int, out map[string]any, _ http.Header) (string, map[string]any) {
	ts.t.Helper()
	if st != http.StatusOK {
		ts.t.Fatalf("authenticate: %d %v", st, out)
	}
	data := out["data"].(map[string]any)
	return data["token"].(string), data
}

// withClientCert is an HTTPS client of ts that presents chain (leaf first) with key.
func (ts *testServer) withClientCert(key crypto.Signer, chain ...*x509.Certificate) *http.Client {
	tr := ts.nodeTransport()
	cert := tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: tr.TLSClientConfig.RootCAs, Certificates: []tls.Certificate{cert}}}}
}

// testKey makes an RSA (2048) or EC (P-256) key.
func testKey(t testing.TB, rsaKey bool) crypto.Signer {
	t.Helper()
	if rsaKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// issuer is a CA of the certificate tests that can sign CAs and leaves.
type issuer struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// sign issues a certificate for pub: a CA when ca, else a client leaf valid from notBefore to notAfter.
func (is *issuer) sign(t testing.TB, cn string, pub crypto.PublicKey, ca bool, notBefore, notAfter time.Time) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: authnNextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature}
	if ca {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, is.cert, pub, is.key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newRootIssuer makes a self-signed root CA.
func newRootIssuer(t testing.TB, cn string) *issuer {
	t.Helper()
	key := testKey(t, false)
	self := &issuer{key: key}
	tmpl := &x509.Certificate{SerialNumber: authnNextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	if self.cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	return self
}

// intermediate issues a CA certificate under is with a fresh key.
func (is *issuer) intermediate(t *testing.T, cn string) *issuer {
	t.Helper()
	key := testKey(t, false)
	return &issuer{cert: is.sign(t, cn, key.Public(), true, time.Now().Add(-47*time.Hour), time.Now().Add(23*time.Hour)), key: key}
}

// registerVerifiedCA registers root as a CA with isAuthEnabled and verifies it.
func (ts *testServer) registerVerifiedCA(name string, root *issuer, authEnabled bool) string {
	ts.t.Helper()
	id := ts.create("/cas", map[string]any{"name": name, "certPem": authnPEM(root.cert.Raw), "identityRoles": []string{},
		"isAuthEnabled": authEnabled, "isAutoCaEnrollmentEnabled": false, "isOttCaEnrollmentEnabled": false})
	token := ts.get("/cas/" + id)["verificationToken"].(string)
	proofKey := testKey(ts.t, false)
	proof := root.sign(ts.t, token, proofKey.Public(), false, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if st, out := ts.authnPostPEM(mgmt("/cas/"+id+"/verify"), authnPEM(proof.Raw)); st != http.StatusOK {
		ts.t.Fatalf("verify CA: %d %v", st, out)
	}
	return id
}

// policyWith creates an auth policy from authPolicyBody changed by edit.
func (ts *testServer) policyWith(name string, edit func(primary, secondary map[string]any)) string {
	ts.t.Helper()
	body := authPolicyBody(name)
	u := dig(body, "primary", "updb").(map[string]any)
	u["minPasswordLength"], u["requireMixedCase"], u["requireNumberChar"] = 5, false, false
	edit(body["primary"].(map[string]any), body["secondary"].(map[string]any))
	return ts.create("/auth-policies", body)
}

// userWithPassword creates an identity (extra fields merged) with an updb authenticator.
func (ts *testServer) userWithPassword(name, password string, extra map[string]any) string {
	ts.t.Helper()
	id := ts.authnIdentity(name, extra)
	ts.create("/authenticators", map[string]any{"identityId": id, "method": "updb", "username": name, "password": password})
	return id
}
