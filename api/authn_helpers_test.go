package api_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"
)

// authnCA is a certificate authority made in a test with crypto/x509.
type authnCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

// authnNextSerial is a random positive serial, so concurrent tests never share one.
func authnNextSerial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n.Add(n, big.NewInt(1))
}

func authnPEM(der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// newAuthnCA makes a self-signed CA certificate with the cert-sign usage.
func newAuthnCA(t *testing.T, cn string) *authnCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: authnNextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &authnCA{cert: cert, key: key, pem: authnPEM(der)}
}

// leaf issues a client certificate with common name cn, signed by the CA.
func (ca *authnCA) leaf(t *testing.T, cn string) string {
	t.Helper()
	return authnPEM(ca.issue(t, cn, enrollKey(t)))
}

// issue signs a client certificate with common name cn for key and returns
// its DER.
func (ca *authnCA) issue(t *testing.T, cn string, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: authnNextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(12 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// authnRaw sends a request with a raw body and content type as the admin and
// returns the status, content type and body.
func (ts *testServer) authnRaw(method, path, contentType, body string) (int, string, []byte) {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.base+path, strings.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("svc-session", ts.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), raw
}

// authnPostPEM posts a PEM text/plain body and decodes the JSON answer.
func (ts *testServer) authnPostPEM(path, body string) (int, map[string]any) {
	ts.t.Helper()
	st, _, raw := ts.authnRaw(http.MethodPost, path, "text/plain", body)
	out := map[string]any{}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&out); err != nil {
		ts.t.Fatalf("answer is not JSON: %d %s", st, raw)
	}
	return st, out
}

// authnClaims decodes the claims of a JWT without verifying it.
func authnClaims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// authnIdentity creates a User identity and returns its id.
func (ts *testServer) authnIdentity(name string, extra map[string]any) string {
	ts.t.Helper()
	body := map[string]any{"name": name, "type": "User", "isAdmin": false}
	for k, v := range extra {
		body[k] = v
	}
	return ts.create("/identities", body)
}

// authnCount is the totalCount of a Management list.
func (ts *testServer) authnCount(path string) int {
	ts.t.Helper()
	_, n := ts.list(path)
	return n
}

// authnVerifiedCA registers a CA made in the test and verifies it.
func (ts *testServer) authnVerifiedCA(name string, ottca bool) (string, *authnCA) {
	ts.t.Helper()
	ca := newAuthnCA(ts.t, name)
	id := ts.create("/cas", map[string]any{"name": name, "certPem": ca.pem, "identityRoles": []string{"r"},
		"isAuthEnabled": true, "isAutoCaEnrollmentEnabled": true, "isOttCaEnrollmentEnabled": ottca})
	token := ts.get("/cas/" + id)["verificationToken"].(string)
	if st, out := ts.authnPostPEM(mgmt("/cas/"+id+"/verify"), ca.leaf(ts.t, token)); st != http.StatusOK {
		ts.t.Fatalf("verify: %d %v", st, out)
	}
	return id, ca
}

// authnFuture is an expiresAt an hour from now.
func authnFuture() string { return time.Now().Add(time.Hour).UTC().Format(time.RFC3339) }

// absent, as a value given to withFields, removes the field.
const absent = "<absent>"

// withFields returns base with each field of kv (name, value, name,
// value...) set to its value, or removed when the value is absent: the bad
// variants of a valid body in validation tables.
func withFields(base map[string]any, kv ...any) map[string]any {
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == absent {
			delete(base, kv[i].(string))
		} else {
			base[kv[i].(string)] = kv[i+1]
		}
	}
	return base
}
