package pki

import (
	"crypto/sha1"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"time"
)

// Fingerprint returns the lowercase hex SHA-1 of the certificate's DER, the
// conventional certificate fingerprint in this system. SHA-1 is used as an
// identifier here, not for signatures.
func Fingerprint(cert *x509.Certificate) string {
	sum := sha1.Sum(cert.Raw)
	return hex.EncodeToString(sum[:])
}

// ParseCertsPEM parses every CERTIFICATE block in pemData, in order, and
// ignores blocks of other types (a bundle may carry a key alongside). It
// fails with ErrBadPEM when there is no certificate or any block does not
// parse, naming the block's position.
func ParseCertsPEM(pemData []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := pemData
	for i := 0; ; i++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: PEM block %d: %w", ErrBadPEM, i, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%w: no CERTIFICATE block found", ErrBadPEM)
	}
	return certs, nil
}

// VerifyCAProof checks an admin's proof of possession of a CA's key: the
// proof certificate (first in proofPEM) must be signed by the first
// certificate in caPEM and its subject CN must equal token. The error wraps
// ErrBadPEM, ErrProofNotSigned or ErrProofWrongCN to say which check failed.
func VerifyCAProof(caPEM []byte, proofPEM []byte, token string) error {
	cas, err := ParseCertsPEM(caPEM)
	if err != nil {
		return fmt.Errorf("CA certificate: %w", err)
	}
	proofs, err := ParseCertsPEM(proofPEM)
	if err != nil {
		return fmt.Errorf("proof certificate: %w", err)
	}
	ca, proof := cas[0], proofs[0]
	if err := proof.CheckSignatureFrom(ca); err != nil {
		return fmt.Errorf("%w: %w", ErrProofNotSigned, err)
	}
	// Constant time because the token is the secret proving possession.
	if token == "" || subtle.ConstantTimeCompare([]byte(proof.Subject.CommonName), []byte(token)) != 1 {
		return fmt.Errorf("%w: got %q", ErrProofWrongCN, proof.Subject.CommonName)
	}
	return nil
}

// ValidateCACertPEM parses the first certificate in pemData and checks it
// can act as a CA: basic constraints with CA=true and the cert-sign key
// usage. Errors wrap ErrBadPEM, ErrNotCA or ErrNoCertSign.
func ValidateCACertPEM(pemData []byte) (*x509.Certificate, error) {
	certs, err := ParseCertsPEM(pemData)
	if err != nil {
		return nil, err
	}
	c := certs[0]
	if !c.BasicConstraintsValid || !c.IsCA {
		return nil, fmt.Errorf("%w: %q has no CA basic constraint", ErrNotCA, c.Subject)
	}
	if c.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("%w: %q", ErrNoCertSign, c.Subject)
	}
	return c, nil
}

// VerifyClientChain verifies a presented client chain: chain[0] is the
// leaf, the rest are intermediates in any order, and the path must reach
// roots with client-auth (or any) extended key usage.
//
// With allowExpired, an already expired leaf is checked as of its own
// NotAfter instead of now, so identities can still authenticate to renew an
// expired certificate; the CA certificates must be valid at that moment.
// A leaf that is not yet valid is never accepted.
func VerifyClientChain(chain []*x509.Certificate, roots *x509.CertPool, now time.Time, allowExpired bool) error {
	if len(chain) == 0 || chain[0] == nil {
		return fmt.Errorf("%w: empty chain", ErrUntrustedChain)
	}
	if roots == nil {
		return fmt.Errorf("%w: no roots", ErrUntrustedChain)
	}
	leaf := chain[0]
	if IsCACert(leaf) {
		return fmt.Errorf("%w: the certificate is a CA certificate (basicConstraints CA:TRUE), not a client certificate", ErrUntrustedChain)
	}
	inters := x509.NewCertPool()
	for _, c := range chain[1:] {
		if c != nil {
			inters.AddCert(c)
		}
	}
	at := now
	if allowExpired && now.After(leaf.NotAfter) {
		// NotAfter is inclusive in x509 validity, so it is the latest
		// instant at which the leaf still counts as valid.
		at = leaf.NotAfter
	}
	_, err := leaf.Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inters,
		CurrentTime:   at,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUntrustedChain, err)
	}
	return nil
}

// IsCACert reports whether c says it is a CA (basicConstraints CA:TRUE). Such
// a certificate is never taken as a client's own: whoever holds its key can
// issue any certificate below it.
func IsCACert(c *x509.Certificate) bool { return c.BasicConstraintsValid && c.IsCA }
