package auth

import (
	"crypto/x509"
	"sync"
	"time"

	"edgectl/pki"
)

// certCacheMax bounds a CertCache: CAs and signers are made by admins, so a
// few hundred entries are plenty; beyond that the cache starts over.
const certCacheMax = 1024

// CertCache parses PEM certificates once (CA and signer certificates are read
// on every certificate or JWT login), keyed by the PEM text.
type CertCache struct {
	mu sync.Mutex
	m  map[string]*x509.Certificate
}

// Parse returns the first certificate of pemText.
func (c *CertCache) Parse(pemText string) (*x509.Certificate, error) {
	c.mu.Lock()
	if cert, ok := c.m[pemText]; ok {
		c.mu.Unlock()
		return cert, nil
	}
	c.mu.Unlock()
	certs, err := pki.ParseCertsPEM([]byte(pemText))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= certCacheMax {
		c.m = map[string]*x509.Certificate{}
	}
	c.m[pemText] = certs[0]
	return certs[0], nil
}

// VerifyClientCert verifies a presented chain (leaf first, intermediates in
// any order) to roots for client authentication. known are intermediates the
// server has itself (the internal PKI's), so a client of the internal PKI may
// send its leaf alone. allowExpired accepts a leaf past its NotAfter (the
// auth policy's allowExpiredCerts); a leaf not yet valid never passes.
func VerifyClientCert(chain []*x509.Certificate, roots *x509.CertPool, known []*x509.Certificate, now time.Time, allowExpired bool) error {
	if len(chain) == 0 {
		return pki.VerifyClientChain(nil, roots, now, allowExpired)
	}
	full := make([]*x509.Certificate, 0, len(chain)+len(known))
	full = append(full, chain...)
	full = append(full, known...)
	return pki.VerifyClientChain(full, roots, now, allowExpired)
}
