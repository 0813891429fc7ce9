package pki

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"testing"
	"time"
)

// testCA is a standalone CA such as an admin would register.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, notAfter time.Time, isCA bool, usage x509.KeyUsage) *testCA {
	t.Helper()
	key, _ := NewNodeKey()
	serial, _ := newSerial()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "third-party CA"},
		NotBefore:             testNow.Add(-time.Hour),
		NotAfter:              notAfter,
		BasicConstraintsValid: true,
		IsCA:                  isCA,
		KeyUsage:              usage,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: encodeCertPEM(der)}
}

// sign issues a leaf without the Authority's clamping, so tests can build
// chains the Authority would never produce.
func (c *testCA) sign(t *testing.T, cn string, notAfter time.Time, eku ...x509.ExtKeyUsage) *x509.Certificate {
	t.Helper()
	key, _ := NewNodeKey()
	serial, _ := newSerial()
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    testNow.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  eku,
	}, c.cert, key.Public(), c.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

func TestFingerprintIsLowercaseHexSHA1OfDER(t *testing.T) {
	ca := newTestCA(t, testNow.Add(time.Hour), true, x509.KeyUsageCertSign)
	sum := sha1.Sum(ca.cert.Raw)
	if got, want := Fingerprint(ca.cert), hex.EncodeToString(sum[:]); got != want || len(got) != 40 {
		t.Fatalf("Fingerprint = %q, want %q", got, want)
	}
}

func TestParseCertsPEMReadsAllCertsAndSkipsOtherBlocks(t *testing.T) {
	s, a := newTestAuthority(t)
	mixed := append([]byte(s.SigningKeyPEM), a.BundlePEM()...)
	certs, err := ParseCertsPEM(mixed)
	if err != nil || len(certs) != 2 {
		t.Fatalf("got %d certs, err %v", len(certs), err)
	}
}

func TestParseCertsPEMRejectsEmptyAndCorruptBlocks(t *testing.T) {
	_, err := ParseCertsPEM(nil)
	wantErr(t, err, ErrBadPEM)
	_, err = ParseCertsPEM([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	wantErr(t, err, ErrBadPEM)
	bad := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")})
	_, err = ParseCertsPEM(bad)
	wantErr(t, err, ErrBadPEM)
}

func TestVerifyCAProofAcceptsProofSignedByCAWithTokenCN(t *testing.T) {
	ca := newTestCA(t, testNow.AddDate(1, 0, 0), true, x509.KeyUsageCertSign)
	proof := encodeCertPEM(ca.sign(t, "token-abc", testNow.Add(time.Hour)).Raw)
	if err := VerifyCAProof(ca.pem, proof, "token-abc"); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyCAProofRejectsWrongCN(t *testing.T) {
	ca := newTestCA(t, testNow.AddDate(1, 0, 0), true, x509.KeyUsageCertSign)
	proof := encodeCertPEM(ca.sign(t, "token-abc", testNow.Add(time.Hour)).Raw)
	err := VerifyCAProof(ca.pem, proof, "token-xyz")
	wantErr(t, err, ErrProofWrongCN)
	wantErr(t, VerifyCAProof(ca.pem, proof, ""), ErrProofWrongCN)
}

func TestVerifyCAProofRejectsProofSignedByAnotherCA(t *testing.T) {
	ca := newTestCA(t, testNow.AddDate(1, 0, 0), true, x509.KeyUsageCertSign)
	other := newTestCA(t, testNow.AddDate(1, 0, 0), true, x509.KeyUsageCertSign)
	proof := encodeCertPEM(other.sign(t, "token-abc", testNow.Add(time.Hour)).Raw)
	err := VerifyCAProof(ca.pem, proof, "token-abc")
	wantErr(t, err, ErrProofNotSigned)
	if errors.Is(err, ErrProofWrongCN) {
		t.Fatal("signature failure reported as CN failure")
	}
}

func TestVerifyCAProofRejectsBadPEM(t *testing.T) {
	ca := newTestCA(t, testNow.AddDate(1, 0, 0), true, x509.KeyUsageCertSign)
	wantErr(t, VerifyCAProof(ca.pem, []byte("nope"), "t"), ErrBadPEM)
	wantErr(t, VerifyCAProof(nil, ca.pem, "t"), ErrBadPEM)
}

func TestValidateCACertPEMAcceptsCARejectsNonCAAndNoCertSign(t *testing.T) {
	good := newTestCA(t, testNow.AddDate(1, 0, 0), true, x509.KeyUsageCertSign)
	if c, err := ValidateCACertPEM(good.pem); err != nil || !c.Equal(good.cert) {
		t.Fatalf("good CA: cert %v err %v", c, err)
	}
	notCA := newTestCA(t, testNow.AddDate(1, 0, 0), false, x509.KeyUsageDigitalSignature)
	_, err := ValidateCACertPEM(notCA.pem)
	wantErr(t, err, ErrNotCA)
	noSign := newTestCA(t, testNow.AddDate(1, 0, 0), true, x509.KeyUsageDigitalSignature)
	_, err = ValidateCACertPEM(noSign.pem)
	wantErr(t, err, ErrNoCertSign)
	_, err = ValidateCACertPEM([]byte("nope"))
	wantErr(t, err, ErrBadPEM)
}

func issueClientLeaf(t *testing.T, a *Authority, validity time.Duration) *x509.Certificate {
	t.Helper()
	key, _ := NewNodeKey()
	p, err := a.SignCSR(testNow, makeCSR(t, key, "x", nil, nil), "identity-1", validity, UsageClient)
	if err != nil {
		t.Fatal(err)
	}
	return mustParseOne(t, p)
}

func TestVerifyClientChainIntermediateAndRootInEitherOrder(t *testing.T) {
	_, a := newTestAuthority(t)
	leaf := issueClientLeaf(t, a, time.Hour)
	inter := a.Intermediates()[0]
	root := mustParseOne(t, a.BundlePEM())
	for name, chain := range map[string][]*x509.Certificate{
		"leaf+inter":      {leaf, inter},
		"leaf+inter+root": {leaf, inter, root},
		"leaf+root+inter": {leaf, root, inter},
	} {
		if err := VerifyClientChain(chain, a.Pool(), testNow, false); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestVerifyClientChainWithoutIntermediateRejected(t *testing.T) {
	_, a := newTestAuthority(t)
	leaf := issueClientLeaf(t, a, time.Hour)
	wantErr(t, VerifyClientChain([]*x509.Certificate{leaf}, a.Pool(), testNow, false), ErrUntrustedChain)
}

func TestVerifyClientChainExpiredLeafRejectedUnlessAllowExpired(t *testing.T) {
	_, a := newTestAuthority(t)
	chain := append([]*x509.Certificate{issueClientLeaf(t, a, time.Hour)}, a.Intermediates()...)
	later := testNow.Add(48 * time.Hour)

	err := VerifyClientChain(chain, a.Pool(), later, false)
	wantErr(t, err, ErrUntrustedChain)
	var invalid x509.CertificateInvalidError
	if !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
		t.Fatalf("want x509 Expired, got %v", err)
	}
	if err := VerifyClientChain(chain, a.Pool(), later, true); err != nil {
		t.Fatalf("allowExpired: %v", err)
	}
}

func TestVerifyClientChainAllowExpiredStillNeedsValidCA(t *testing.T) {
	ca := newTestCA(t, testNow.Add(time.Hour), true, x509.KeyUsageCertSign)
	// The leaf outlives its CA, so at the leaf's NotAfter the CA is expired.
	leaf := ca.sign(t, "id", testNow.Add(2*time.Hour), x509.ExtKeyUsageClientAuth)
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	err := VerifyClientChain([]*x509.Certificate{leaf}, roots, testNow.Add(3*time.Hour), true)
	wantErr(t, err, ErrUntrustedChain)
}

func TestVerifyClientChainAcceptsAnyEKURejectsServerOnly(t *testing.T) {
	ca := newTestCA(t, testNow.AddDate(1, 0, 0), true, x509.KeyUsageCertSign)
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	anyLeaf := ca.sign(t, "id", testNow.Add(time.Hour), x509.ExtKeyUsageAny)
	if err := VerifyClientChain([]*x509.Certificate{anyLeaf}, roots, testNow, false); err != nil {
		t.Fatalf("EKU any: %v", err)
	}
	serverLeaf := ca.sign(t, "id", testNow.Add(time.Hour), x509.ExtKeyUsageServerAuth)
	wantErr(t, VerifyClientChain([]*x509.Certificate{serverLeaf}, roots, testNow, false), ErrUntrustedChain)
}

func TestVerifyClientChainUnrelatedChainRejected(t *testing.T) {
	_, a := newTestAuthority(t)
	_, other := newTestAuthority(t)
	chain := append([]*x509.Certificate{issueClientLeaf(t, other, time.Hour)}, other.Intermediates()...)
	wantErr(t, VerifyClientChain(chain, a.Pool(), testNow, false), ErrUntrustedChain)
	wantErr(t, VerifyClientChain(nil, a.Pool(), testNow, false), ErrUntrustedChain)
	wantErr(t, VerifyClientChain(chain, nil, testNow, false), ErrUntrustedChain)
}

// A CA certificate (basicConstraints CA:TRUE) is never a client's leaf,
// even one that chains to the roots.
func TestVerifyClientChainCALeafRejected(t *testing.T) {
	_, a := newTestAuthority(t)
	inter := a.Intermediates()[0]
	root := mustParseOne(t, a.BundlePEM())
	wantErr(t, VerifyClientChain([]*x509.Certificate{inter, root}, a.Pool(), testNow, false), ErrUntrustedChain)
}
