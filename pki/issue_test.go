package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"slices"
	"testing"
	"time"
)

func TestIssueServerCertVerifiesWithSANsAndBothUsages(t *testing.T) {
	_, a := newTestAuthority(t)
	key, err := NewNodeKey()
	if err != nil {
		t.Fatal(err)
	}
	chainPEM, err := a.IssueServerCert(testNow, key.Public(), "node-1",
		[]string{"localhost", "127.0.0.1", "ctrl.example.com", "::1"}, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := ParseCertsPEM(chainPEM)
	if err != nil || len(certs) != 2 {
		t.Fatalf("chain: %d certs, err %v", len(certs), err)
	}
	leaf := certs[0]
	if !certs[1].Equal(a.Intermediates()[0]) {
		t.Fatal("second cert of chain is not the intermediate")
	}
	if leaf.Subject.CommonName != "node-1" {
		t.Errorf("CN = %q", leaf.Subject.CommonName)
	}
	if !slices.Equal(leaf.DNSNames, []string{"localhost", "ctrl.example.com"}) {
		t.Errorf("DNSNames = %v", leaf.DNSNames)
	}
	if len(leaf.IPAddresses) != 2 || !leaf.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) ||
		!leaf.IPAddresses[1].Equal(net.IPv6loopback) {
		t.Errorf("IPAddresses = %v", leaf.IPAddresses)
	}

	inters := x509.NewCertPool()
	inters.AddCert(certs[1])
	for _, host := range []string{"localhost", "127.0.0.1"} {
		for _, eku := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			_, err := leaf.Verify(x509.VerifyOptions{
				DNSName:       host,
				Roots:         a.Pool(),
				Intermediates: inters,
				CurrentTime:   testNow,
				KeyUsages:     []x509.ExtKeyUsage{eku},
			})
			if err != nil {
				t.Errorf("verify host %s eku %v: %v", host, eku, err)
			}
		}
	}
}

func TestIssueServerCertValidityCappedAtIntermediateExpiry(t *testing.T) {
	_, a := newTestAuthority(t)
	key, _ := NewNodeKey()
	p, err := a.IssueServerCert(testNow, key.Public(), "node-1", nil, 100*365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if leaf := mustParseOne(t, p); !leaf.NotAfter.Equal(a.Intermediates()[0].NotAfter) {
		t.Fatalf("NotAfter = %v, want intermediate's %v", leaf.NotAfter, a.Intermediates()[0].NotAfter)
	}
}

func TestIssueRejectsWhenIntermediateExpired(t *testing.T) {
	_, a := newTestAuthority(t)
	key, _ := NewNodeKey()
	_, err := a.IssueServerCert(testNow.AddDate(6, 0, 0), key.Public(), "node-1", nil, time.Hour)
	wantErr(t, err, ErrCANotValid)
}

func TestIssueRejectsBadArguments(t *testing.T) {
	_, a := newTestAuthority(t)
	key, _ := NewNodeKey()
	_, err := a.IssueServerCert(testNow, key.Public(), "", nil, time.Hour)
	wantErr(t, err, ErrBadRequest)
	_, err = a.IssueServerCert(testNow, key.Public(), "n", nil, 0)
	wantErr(t, err, ErrBadRequest)
	_, err = a.IssueServerCert(testNow, "not a key", "n", nil, time.Hour)
	wantErr(t, err, ErrUnsupportedKey)
	_, err = a.SignCSR(testNow, makeCSR(t, key, "x", nil, nil), "n", time.Hour, Usage(42))
	wantErr(t, err, ErrBadRequest)
}

func TestSignCSRAcceptsRSAECDSAEd25519AndForcesCN(t *testing.T) {
	_, a := newTestAuthority(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]crypto.Signer{"rsa2048": rsaKey, "ecdsa-p384": ecKey, "ed25519": edKey} {
		t.Run(name, func(t *testing.T) {
			csr := makeCSR(t, key, "admin", []string{"evil.example.com"}, nil)
			p, err := a.SignCSR(testNow, csr, "identity-123", time.Hour, UsageClient)
			if err != nil {
				t.Fatal(err)
			}
			certs, err := ParseCertsPEM(p)
			if err != nil || len(certs) != 1 {
				t.Fatalf("want leaf only, got %d certs, err %v", len(certs), err)
			}
			leaf := certs[0]
			if leaf.Subject.CommonName != "identity-123" || len(leaf.Subject.Organization) != 0 {
				t.Errorf("subject = %v, want only CN=identity-123", leaf.Subject)
			}
			if len(leaf.DNSNames) != 0 {
				t.Errorf("client cert copied SANs %v", leaf.DNSNames)
			}
			if !slices.Equal(leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
				t.Errorf("EKU = %v", leaf.ExtKeyUsage)
			}
			pub := leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
			if !pub.Equal(key.Public()) {
				t.Error("leaf key is not the CSR key")
			}
			chain := append([]*x509.Certificate{leaf}, a.Intermediates()...)
			if err := VerifyClientChain(chain, a.Pool(), testNow, false); err != nil {
				t.Errorf("client chain: %v", err)
			}
			if bytes.Contains(p, a.ChainPEM()) {
				t.Error("SignCSR returned the intermediate too")
			}
		})
	}
}

func TestSignCSRServerUsageCopiesSANs(t *testing.T) {
	_, a := newTestAuthority(t)
	key, _ := NewNodeKey()
	csr := makeCSR(t, key, "router", []string{"router.example.com"}, []net.IP{net.ParseIP("10.0.0.7")})
	p, err := a.SignCSR(testNow, csr, "router-1", time.Hour, UsageServer)
	if err != nil {
		t.Fatal(err)
	}
	leaf := mustParseOne(t, p)
	if !slices.Equal(leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("EKU = %v", leaf.ExtKeyUsage)
	}
	inters := x509.NewCertPool()
	inters.AddCert(a.Intermediates()[0])
	if _, err := leaf.Verify(x509.VerifyOptions{
		DNSName: "10.0.0.7", Roots: a.Pool(), Intermediates: inters, CurrentTime: testNow,
	}); err != nil {
		t.Fatalf("server verify: %v", err)
	}
}

func TestSignCSRRejectsTamperedSignature(t *testing.T) {
	_, a := newTestAuthority(t)
	key, _ := NewNodeKey()
	csrPEM := makeCSR(t, key, "victim", nil, nil)
	block, _ := pem.Decode(csrPEM)
	// Same-length edit inside the signed part keeps the DER parseable
	// while invalidating the signature.
	der := bytes.Replace(block.Bytes, []byte("victim"), []byte("victin"), 1)
	if bytes.Equal(der, block.Bytes) {
		t.Fatal("test setup: CN not found in CSR DER")
	}
	tampered := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	_, err := a.SignCSR(testNow, tampered, "id", time.Hour, UsageClient)
	wantErr(t, err, ErrBadCSR)
}

func TestSignCSRRejectsGarbage(t *testing.T) {
	_, a := newTestAuthority(t)
	_, err := a.SignCSR(testNow, []byte("nope"), "id", time.Hour, UsageClient)
	wantErr(t, err, ErrBadCSR)
	wantErr(t, err, ErrBadPEM)
	junk := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte{1, 2, 3}})
	_, err = a.SignCSR(testNow, junk, "id", time.Hour, UsageClient)
	wantErr(t, err, ErrBadCSR)
}
