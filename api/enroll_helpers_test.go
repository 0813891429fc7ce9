package api_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// enrollKey is a fresh P-256 key.
func enrollKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// enrollCSR is a PEM certificate request for key with the given subject CN and SANs.
func enrollCSR(t *testing.T, key *ecdsa.PrivateKey, cn string, dns []string, ips []net.IP) string {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn}, DNSNames: dns, IPAddresses: ips}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// enrollChain parses every certificate of a PEM text (at least one).
func enrollChain(t *testing.T, text string) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	rest := []byte(text)
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatalf("no certificate in %q", text)
	}
	return out
}

// enrollFP is the SHA-1 fingerprint of a certificate, as the API shows it.
func enrollFP(c *x509.Certificate) string {
	sum := sha1.Sum(c.Raw)
	return hex.EncodeToString(sum[:])
}

// enrollTLS makes a TLS client certificate of a PEM chain and its key.
func enrollTLS(t *testing.T, chainPEM string, key *ecdsa.PrivateKey) *tls.Certificate {
	t.Helper()
	c := &tls.Certificate{PrivateKey: key}
	for _, x := range enrollChain(t, chainPEM) {
		c.Certificate = append(c.Certificate, x.Raw)
	}
	return c
}

// leafTLS issues a client certificate with common name cn from the test CA
// and returns it as a TLS client certificate, with the parsed leaf.
func (ca *authnCA) leafTLS(t *testing.T, cn string) (*tls.Certificate, *x509.Certificate) {
	t.Helper()
	key := enrollKey(t)
	der := ca.issue(t, cn, key)
	leaf, _ := x509.ParseCertificate(der)
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, leaf
}

// enrollReq is a request of the enrollment tests: any body, content type,
// Accept header, session token and TLS client certificate.
type enrollReq struct {
	method, path, body  string
	contentType, accept string
	token               string
	cert                *tls.Certificate
}

// enrollSend performs r with a client that presents r.cert (when set) and returns
// the status, content type and body.
func (ts *testServer) enrollSend(r enrollReq) (int, string, []byte) {
	ts.t.Helper()
	client := ts.client
	if r.cert != nil {
		pool := ts.nodeTransport().TLSClientConfig.RootCAs
		client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{*r.cert}}}}
		defer client.CloseIdleConnections()
	}
	req, err := http.NewRequest(r.method, ts.base+r.path, strings.NewReader(r.body))
	if err != nil {
		ts.t.Fatal(err)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	if r.token != "" {
		req.Header.Set("svc-session", r.token)
	}
	resp, err := client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), raw
}

// enrollSendJSON performs r with body marshalled as JSON and decodes the answer.
func (ts *testServer) enrollSendJSON(r enrollReq, body any) (int, map[string]any) {
	ts.t.Helper()
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			ts.t.Fatal(err)
		}
		r.body, r.contentType = string(raw), "application/json"
	}
	st, _, raw := ts.enrollSend(r)
	out := map[string]any{}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&out); err != nil {
		ts.t.Fatalf("answer is not JSON: %d %s", st, raw)
	}
	return st, out
}

// enrollPost sends a JSON body to a Client API path without a session, presenting cert when set.
func (ts *testServer) enrollPost(path string, cert *tls.Certificate, body any) (int, map[string]any) {
	ts.t.Helper()
	return ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: clientPath(path), cert: cert}, body)
}

// enrollTokenOf reads the token of an identity's outstanding enrollment of method.
func (ts *testServer) enrollTokenOf(identityID, method string) string {
	ts.t.Helper()
	tok, _ := dig(ts.get("/identities/"+identityID), "enrollment", method, "token").(string)
	if tok == "" {
		ts.t.Fatalf("identity %s has no %s enrollment", identityID, method)
	}
	return tok
}

// enrollCertAuthenticator returns the fingerprint and id of an identity's cert authenticator ("" if none).
func (ts *testServer) enrollCertAuthenticator(identityID string) (fp, id string) {
	ts.t.Helper()
	data, _ := ts.list("/identities/" + identityID + "/authenticators")
	for _, d := range data {
		if m := d.(map[string]any); m["method"] == "cert" {
			return m["fingerprint"].(string), m["id"].(string)
		}
	}
	return "", ""
}

// enrollOttTLS enrolls an identity's ott enrollment with a fresh key and
// returns the TLS client certificate it got.
func (ts *testServer) enrollOttTLS(identityID string) *tls.Certificate {
	ts.t.Helper()
	key := enrollKey(ts.t)
	st, _, raw := ts.enrollSend(enrollReq{method: http.MethodPost, path: clientPath("/enroll/ott?token=" + ts.enrollTokenOf(identityID, "ott")),
		body: enrollCSR(ts.t, key, "ignored", nil, nil), contentType: "application/x-pem-file"})
	if st != http.StatusOK {
		ts.t.Fatalf("enroll ott: %d %s", st, raw)
	}
	return enrollTLS(ts.t, string(raw), key)
}
