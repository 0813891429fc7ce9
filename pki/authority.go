package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"fmt"
)

// Authority is a loaded, validated CA. It is immutable after Load, so one
// value can be shared by concurrent goroutines.
type Authority struct {
	root      *x509.Certificate
	inter     *x509.Certificate
	interKey  crypto.Signer
	signKey   *ecdsa.PrivateKey
	kid       string
	pool      *x509.CertPool
	bundlePEM []byte
	interPEM  []byte
	jwks      []byte
}

// Load parses s and checks it is internally consistent: every key matches
// its certificate, the root is a self-signed CA, the intermediate is a CA
// signed by the root, and the JWT key is P-256 with a kid. Validity periods
// are not checked here (no clock); issuing checks them against `now`.
func Load(s *State) (*Authority, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil state", ErrInvalidState)
	}
	root, err := loadCert("root", s.RootCertPEM)
	if err != nil {
		return nil, err
	}
	inter, err := loadCert("intermediate", s.IntermediateCertPEM)
	if err != nil {
		return nil, err
	}
	if _, err := loadKeyFor("root", s.RootKeyPEM, root); err != nil {
		return nil, err
	}
	interKey, err := loadKeyFor("intermediate", s.IntermediateKeyPEM, inter)
	if err != nil {
		return nil, err
	}

	if !root.IsCA || !inter.IsCA {
		return nil, fmt.Errorf("%w: %w", ErrInvalidState, ErrNotCA)
	}
	// CheckSignatureFrom also enforces the parent's CA constraint and
	// cert-sign key usage, which is exactly what a chain verifier will want.
	if err := root.CheckSignatureFrom(root); err != nil {
		return nil, fmt.Errorf("%w: root is not self-signed: %w", ErrInvalidState, err)
	}
	if !bytes.Equal(inter.RawIssuer, root.RawSubject) {
		return nil, fmt.Errorf("%w: intermediate issuer %q is not root subject %q",
			ErrInvalidState, inter.Issuer, root.Subject)
	}
	if err := inter.CheckSignatureFrom(root); err != nil {
		return nil, fmt.Errorf("%w: intermediate not signed by root: %w", ErrInvalidState, err)
	}

	sk, err := ParseKeyPEM([]byte(s.SigningKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("%w: signing key: %w", ErrInvalidState, err)
	}
	signKey, ok := sk.(*ecdsa.PrivateKey)
	if !ok || signKey.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: signing key must be ECDSA P-256 for ES256", ErrInvalidState)
	}
	if s.KeyID == "" {
		return nil, fmt.Errorf("%w: empty signing key id", ErrInvalidState)
	}

	jwks, err := buildJWKS(&signKey.PublicKey, s.KeyID)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidState, err)
	}

	pool := x509.NewCertPool()
	pool.AddCert(root)
	interPEM := encodeCertPEM(inter.Raw)
	bundle := append(encodeCertPEM(root.Raw), interPEM...)

	return &Authority{
		root:      root,
		inter:     inter,
		interKey:  interKey,
		signKey:   signKey,
		kid:       s.KeyID,
		pool:      pool,
		bundlePEM: bundle,
		interPEM:  interPEM,
		jwks:      jwks,
	}, nil
}

func loadCert(what, pemData string) (*x509.Certificate, error) {
	certs, err := ParseCertsPEM([]byte(pemData))
	if err != nil {
		return nil, fmt.Errorf("%w: %s certificate: %w", ErrInvalidState, what, err)
	}
	if len(certs) != 1 {
		return nil, fmt.Errorf("%w: %s certificate: want 1 certificate, got %d", ErrInvalidState, what, len(certs))
	}
	return certs[0], nil
}

func loadKeyFor(what, pemData string, cert *x509.Certificate) (crypto.Signer, error) {
	key, err := ParseKeyPEM([]byte(pemData))
	if err != nil {
		return nil, fmt.Errorf("%w: %s key: %w", ErrInvalidState, what, err)
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidState, what, ErrKeyMismatch)
	}
	return key, nil
}

// BundlePEM returns the root then the intermediate certificate as PEM: the
// bundle clients are told to trust. The returned slice is a copy.
func (a *Authority) BundlePEM() []byte { return bytes.Clone(a.bundlePEM) }

// ChainPEM returns the intermediate certificate as PEM, to append after a
// leaf from SignCSR so peers can build the path to the root.
func (a *Authority) ChainPEM() []byte { return bytes.Clone(a.interPEM) }

// Pool returns a fresh pool holding only the root, for verifying peers.
// A fresh pool per call keeps callers from mutating shared trust.
func (a *Authority) Pool() *x509.CertPool { return a.pool.Clone() }

// Intermediates returns the intermediate CA certificates (currently one),
// to pass as x509.VerifyOptions.Intermediates or append to TLS chains.
func (a *Authority) Intermediates() []*x509.Certificate {
	return []*x509.Certificate{a.inter}
}

// Root returns the root CA certificate.
func (a *Authority) Root() *x509.Certificate { return a.root }

// KeyID returns the kid of the enrollment JWT signing key.
func (a *Authority) KeyID() string { return a.kid }
