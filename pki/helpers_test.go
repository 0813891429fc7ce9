package pki

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"net"
	"testing"
	"time"
)

// testNow is fixed so tests never depend on the wall clock.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func newTestAuthority(t *testing.T) (*State, *Authority) {
	t.Helper()
	s, err := NewState(testNow, "test-cluster")
	if err != nil {
		t.Fatalf("NewState: %v", err)
	}
	a, err := Load(s)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s, a
}

func makeCSR(t *testing.T, key crypto.Signer, cn string, dns []string, ips []net.IP) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: cn, Organization: []string{"requester"}},
		DNSNames:    dns,
		IPAddresses: ips,
	}, key)
	if err != nil {
		t.Fatalf("CreateCertificateRequest: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func mustParseOne(t *testing.T, pemData []byte) *x509.Certificate {
	t.Helper()
	certs, err := ParseCertsPEM(pemData)
	if err != nil {
		t.Fatalf("ParseCertsPEM: %v", err)
	}
	return certs[0]
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want errors.Is %v", err, target)
	}
}
