package api_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// TestOpenZiti_EnrollmentJWTVerifiedAsTheSDKDoes reproduces what
// openziti/sdk-golang's enroller does with an enrollment JWT: it takes
// "iss", fetches the TLS certificate the server there presents (without
// trusting it yet), verifies the JWT with that certificate's key, then
// posts a CSR to iss + /edge/client/v1/enroll?method=ott&token=jti.
func TestOpenZiti_EnrollmentJWTVerifiedAsTheSDKDoes(t *testing.T) {
	t.Parallel()
	ts := newNodeServer(t)
	ident := ts.create("/identities", map[string]any{"name": "sdk-device", "type": "Default", "isAdmin": false,
		"enrollment": map[string]any{"ott": true}})
	tokenStr := dig(ts.get("/identities/"+ident), "enrollment", "ott", "jwt").(string)

	type sdkClaims struct {
		jwt.RegisteredClaims
		EnrollmentMethod string `json:"em"`
	}
	var claims sdkClaims
	var serverCert *x509.Certificate
	_, err := jwt.NewParser().ParseWithClaims(tokenStr, &claims, func(tok *jwt.Token) (any, error) {
		c := tok.Claims.(*sdkClaims)
		if _, err := url.Parse(c.Issuer); err != nil || c.Issuer == "" {
			t.Fatalf("iss %q is not a URL", c.Issuer)
		}
		insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // as the SDK does
		resp, err := insecure.Get(c.Issuer)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		serverCert = resp.TLS.PeerCertificates[0]
		return serverCert.PublicKey, nil
	})
	if err != nil {
		t.Fatalf("the JWT does not verify with the key of the certificate its issuer presents: %v", err)
	}
	if claims.Issuer != ts.base || claims.EnrollmentMethod != "ott" || claims.Subject != ident {
		t.Fatalf("claims: iss %q (want the bare %q), em %q, sub %q", claims.Issuer, ts.base, claims.EnrollmentMethod, claims.Subject)
	}

	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	csr, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: claims.Subject}}, key)
	csrPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr})
	u, _ := url.Parse(claims.Issuer)
	u = u.ResolveReference(&url.URL{Path: "/edge/client/v1/enroll"})
	u.RawQuery = url.Values{"method": {"ott"}, "token": {claims.ID}}.Encode()
	resp, err := ts.client.Post(u.String(), "application/x-pem-file", bytes.NewReader(csrPEM))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("enroll: %d %s", resp.StatusCode, body)
	}
	// The SDK takes data.cert of a JSON answer, or the body as PEM.
	certPEM := body
	if resp.Header.Get("Content-Type") == "application/json" {
		var out struct {
			Data struct {
				Cert string `json:"cert"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("enroll answer: %v: %s", err, body)
		}
		certPEM = []byte(out.Data.Cert)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("enroll answer holds no PEM certificate: %s", body)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !key.PublicKey.Equal(cert.PublicKey) {
		t.Fatalf("enrolled certificate: %v (for another key: %v)", err, err == nil)
	}
}
