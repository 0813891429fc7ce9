package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// IssueServerCert signs pub into a certificate for a controller node and
// returns the leaf followed by the intermediate as PEM, ready to serve in
// TLS. The certificate carries both server-auth and client-auth usages
// because nodes use the same certificate on both ends of mutual TLS. Each
// entry of hosts becomes an IP SAN if it parses as an IP, a DNS SAN
// otherwise. The validity is capped at the intermediate's expiry.
func (a *Authority) IssueServerCert(now time.Time, pub crypto.PublicKey, commonName string, hosts []string, validity time.Duration) ([]byte, error) {
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: commonName}}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := a.issue(now, tmpl, pub, commonName, validity, UsageClientServer)
	if err != nil {
		return nil, err
	}
	return append(encodeCertPEM(der), a.interPEM...), nil
}

// SignCSR verifies the self-signature of a PEM certificate request and
// issues a leaf for its public key (RSA, ECDSA or Ed25519). The subject is
// replaced by CN=commonName, because the identity id decides who the
// certificate names, never the requester. For UsageServer and
// UsageClientServer the CSR's DNS and IP SANs are copied, so callers issuing
// router server certificates must vet those SANs first; client certificates
// get no SANs from the CSR, only the URIs given (the caller's, such as a
// SPIFFE ID). Only the leaf PEM is returned; append ChainPEM for a chain.
func (a *Authority) SignCSR(now time.Time, csrPEM []byte, commonName string, validity time.Duration, usage Usage, uris ...*url.URL) ([]byte, error) {
	csr, err := parseCSR(csrPEM)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: commonName}, URIs: uris}
	if usage == UsageServer || usage == UsageClientServer {
		tmpl.DNSNames = csr.DNSNames
		tmpl.IPAddresses = csr.IPAddresses
	}
	der, err := a.issue(now, tmpl, csr.PublicKey, commonName, validity, usage)
	if err != nil {
		return nil, err
	}
	return encodeCertPEM(der), nil
}

func parseCSR(csrPEM []byte) (*x509.CertificateRequest, error) {
	rest := csrPEM
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("%w: %w: no CERTIFICATE REQUEST block", ErrBadCSR, ErrBadPEM)
		}
		// "NEW CERTIFICATE REQUEST" is the legacy label some tools still emit.
		if block.Type != "CERTIFICATE REQUEST" && block.Type != "NEW CERTIFICATE REQUEST" {
			continue
		}
		csr, err := x509.ParseCertificateRequest(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadCSR, err)
		}
		if err := csr.CheckSignature(); err != nil {
			return nil, fmt.Errorf("%w: signature: %w", ErrBadCSR, err)
		}
		return csr, nil
	}
}

// issue fills in the fields every leaf shares and signs with the
// intermediate.
func (a *Authority) issue(now time.Time, tmpl *x509.Certificate, pub crypto.PublicKey, commonName string, validity time.Duration, usage Usage) ([]byte, error) {
	if strings.TrimSpace(commonName) == "" {
		return nil, fmt.Errorf("%w: empty common name", ErrBadRequest)
	}
	if validity <= 0 {
		return nil, fmt.Errorf("%w: validity must be positive, got %s", ErrBadRequest, validity)
	}
	keyUsage := x509.KeyUsageDigitalSignature
	switch pub.(type) {
	case *rsa.PublicKey:
		// RSA key transport (pre-TLS 1.3 cipher suites) needs this bit.
		keyUsage |= x509.KeyUsageKeyEncipherment
	case *ecdsa.PublicKey, ed25519.PublicKey:
	default:
		return nil, fmt.Errorf("%w: %T", ErrUnsupportedKey, pub)
	}
	switch usage {
	case UsageClient:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	case UsageServer:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	case UsageClientServer:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	default:
		return nil, fmt.Errorf("%w: unknown usage %d", ErrBadRequest, int(usage))
	}
	if now.Before(a.inter.NotBefore) || now.After(a.inter.NotAfter) {
		return nil, fmt.Errorf("%w: intermediate valid %s to %s, now %s", ErrCANotValid,
			a.inter.NotBefore.UTC().Format(time.RFC3339), a.inter.NotAfter.UTC().Format(time.RFC3339),
			now.UTC().Format(time.RFC3339))
	}

	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-backdate)
	tmpl.NotAfter = now.Add(validity)
	// A leaf outliving its issuer would fail path validation anyway; capping
	// keeps NotAfter honest about when the certificate stops working.
	if tmpl.NotAfter.After(a.inter.NotAfter) {
		tmpl.NotAfter = a.inter.NotAfter
	}
	tmpl.KeyUsage = keyUsage
	tmpl.BasicConstraintsValid = true
	tmpl.IsCA = false

	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.inter, pub, a.interKey)
	if err != nil {
		return nil, fmt.Errorf("pki: sign certificate: %w", err)
	}
	return der, nil
}
