package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"
	"time"

	"edgectl/pki"
)

// A client certificate of the internal PKI passes alone (the node knows the
// intermediate) or with its chain; an expired one passes only when the auth
// policy allows expired certificates; one of a foreign CA never does. The
// cache parses a PEM once.
func TestVerifyClientCertAndTheCache(t *testing.T) {
	now := time.Now()
	st, err := pki.NewState(now, "test")
	if err != nil {
		t.Fatal(err)
	}
	a, err := pki.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(a *pki.Authority, at time.Time, validity time.Duration) *x509.Certificate {
		t.Helper()
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		der, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x"}}, key)
		out, err := a.SignCSR(at, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), "client", validity, pki.UsageClient)
		if err != nil {
			t.Fatal(err)
		}
		certs, _ := pki.ParseCertsPEM(out)
		return certs[0]
	}
	roots := x509.NewCertPool()
	roots.AddCert(a.Root())
	good, expired := leaf(a, now, time.Hour), leaf(a, now.Add(-50*time.Minute), 10*time.Minute)
	if err := VerifyClientCert([]*x509.Certificate{good}, roots, a.Intermediates(), now, false); err != nil {
		t.Fatalf("the leaf alone: %v", err)
	}
	if err := VerifyClientCert(append([]*x509.Certificate{good}, a.Intermediates()...), roots, nil, now, false); err != nil {
		t.Fatalf("the leaf with its chain: %v", err)
	}
	if err := VerifyClientCert([]*x509.Certificate{expired}, roots, a.Intermediates(), now, false); err == nil {
		t.Fatal("an expired leaf passed")
	}
	if err := VerifyClientCert([]*x509.Certificate{expired}, roots, a.Intermediates(), now, true); err != nil {
		t.Fatalf("an expired leaf, expired certificates allowed: %v", err)
	}
	otherState, _ := pki.NewState(now, "other")
	other, _ := pki.Load(otherState)
	if err := VerifyClientCert(append([]*x509.Certificate{leaf(other, now, time.Hour)}, other.Intermediates()...), roots, a.Intermediates(), now, true); err == nil {
		t.Fatal("a leaf of a foreign CA passed")
	}
	if err := VerifyClientCert(nil, roots, nil, now, false); err == nil {
		t.Fatal("no certificate passed")
	}

	var cache CertCache
	p := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: good.Raw}))
	c1, err := cache.Parse(p)
	if err != nil || !c1.Equal(good) {
		t.Fatalf("Parse: %v", err)
	}
	if c2, _ := cache.Parse(p); c2 != c1 {
		t.Fatal("the same PEM was parsed again")
	}
	if _, err := cache.Parse("not a certificate"); err == nil {
		t.Fatal("garbage parsed")
	}
}
