package api

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"regexp"
	"time"

	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// routerCSRFields are the body of router enrollment and extension.
var routerCSRFields = []field{
	{name: "certCsr", kind: fString, required: true, min: 1},
	{name: "serverCertCsr", kind: fString, required: true, min: 1},
}

// maxServerSANs bounds the names a router server certificate may carry.
const maxServerSANs = 100

// sanHostnamePattern is a DNS host name: dot-separated labels of letters,
// digits and inner hyphens, each 1 to 63 characters. Wildcards are refused:
// a router serves its own names, not a domain's.
var sanHostnamePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// checkServerCSR vets the SANs of a router's server certificate request
// before the controller signs them (pki.SignCSR copies its DNS and IP
// SANs): at least one and at most 100, DNS names that are host names (at
// most 253 characters), IP addresses that are neither unspecified nor
// multicast, and no URI or email SANs (they would be dropped silently).
func checkServerCSR(field, csrPEM string) error {
	var csr *x509.CertificateRequest
	for rest := []byte(csrPEM); csr == nil; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return invalidField(field, "must be a PEM certificate request", nil)
		}
		if b.Type == "CERTIFICATE REQUEST" || b.Type == "NEW CERTIFICATE REQUEST" {
			var err error
			if csr, err = x509.ParseCertificateRequest(b.Bytes); err != nil {
				return invalidField(field, "must be a PEM certificate request: "+err.Error(), nil)
			}
		}
	}
	switch n := len(csr.DNSNames) + len(csr.IPAddresses); {
	case n == 0:
		return invalidField(field, "must request at least one DNS or IP subject alternative name", nil)
	case n > maxServerSANs:
		return invalidField(field, fmt.Sprintf("requests %d subject alternative names, at most %d are allowed", n, maxServerSANs), nil)
	case len(csr.URIs) > 0 || len(csr.EmailAddresses) > 0:
		return invalidField(field, "may request DNS and IP subject alternative names only", nil)
	}
	for _, d := range csr.DNSNames {
		if len(d) > 253 || !sanHostnamePattern.MatchString(d) {
			return invalidField(field, "requests a DNS name that is not a host name", d)
		}
	}
	for _, ip := range csr.IPAddresses {
		if ip.IsUnspecified() || ip.IsMulticast() {
			return invalidField(field, "requests an unspecified or multicast IP address", ip.String())
		}
	}
	return nil
}

// routerState returns the enrollment part and the kind of an edge router or router.
func routerState(r store.Record) (*store.RouterEnrollment, *store.Kind) {
	switch v := r.(type) {
	case *store.EdgeRouter:
		return &v.RouterEnrollment, store.KindEdgeRouter
	case *store.Router:
		return &v.RouterEnrollment, store.KindRouter
	}
	return nil, nil
}

// routerCerts issues a router's client certificate (CN = router id) and its
// server certificate (CN = router id, the vetted SANs of its request).
func routerCerts(a *pki.Authority, now time.Time, p *parsed, routerID string) (client, server *issuedCert, err error) {
	if client, err = issueFromCSR(a, now, "certCsr", p.values["certCsr"].(string), routerID, routerCertValidity, pki.UsageClient); err != nil {
		return nil, nil, err
	}
	serverCSR := p.values["serverCertCsr"].(string)
	if err := checkServerCSR("serverCertCsr", serverCSR); err != nil {
		return nil, nil, err
	}
	if server, err = issueFromCSR(a, now, "serverCertCsr", serverCSR, routerID, routerCertValidity, pki.UsageServer); err != nil {
		return nil, nil, err
	}
	return client, server, nil
}

// routerCertsView is the answer of router enrollment and extension.
func routerCertsView(a *pki.Authority, client, server *issuedCert) map[string]any {
	return map[string]any{"ca": string(a.BundlePEM()), "cert": client.chainPEM, "serverCert": server.chainPEM}
}

// RouterCertsFromCSRs issues router routerID's client and server
// certificates from PEM requests, vetted as enrollment vets them (the
// control channel's extension). It returns the client certificate's chain,
// leaf and fingerprint, and the server certificate's chain.
func (s *Server) RouterCertsFromCSRs(tx *store.Tx, routerID, clientCSR, serverCSR string) (clientChain, clientLeaf, fingerprint, serverChain string, err error) {
	a, err := s.authority(tx)
	if err != nil {
		return "", "", "", "", err
	}
	p := &parsed{values: map[string]any{"certCsr": clientCSR, "serverCertCsr": serverCSR}}
	client, server, err := routerCerts(a, s.now(), p, routerID)
	if err != nil {
		return "", "", "", "", err
	}
	return client.chainPEM, client.leafPEM, client.fingerprint, server.chainPEM, nil
}

// enrollRouter enrolls an edge router or transit router with its one-time
// token: it gets a client and a server certificate and becomes verified with
// the client certificate's fingerprint; the token and JWT are cleared.
func (s *Server) enrollRouter(c *call) error {
	body, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	token, err := enrollToken(c, body)
	if err != nil {
		return err
	}
	p, err := parseFields(body, routerCSRFields, modeCreate)
	if err != nil {
		return err
	}
	now := s.now()
	r := c.tx.RouterByEnrollmentToken(token)
	if r == nil && c.rejudge() {
		r = c.tx.RouterByEnrollmentToken(token)
	}
	if r == nil {
		return enrollmentNotFound()
	}
	e, k := routerState(r)
	if e.EnrollmentExpiresAt != nil && !e.EnrollmentExpiresAt.After(now) {
		return enrollmentNotFound()
	}
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	client, server, err := routerCerts(a, now, p, r.GetID())
	if err != nil {
		return err
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdRouterEnroll, fsm.RouterCert{Kind: k.Table, ID: r.GetID(), Token: token,
		CertPem: client.leafPEM, Fingerprint: client.fingerprint, At: now}); err != nil {
		return err
	}
	c.ok(routerCertsView(a, client, server))
	return nil
}

// enrolledRouter returns the verified edge router or router whose current
// client certificate has fingerprint fp, or nil.
func enrolledRouter(tx *store.Tx, fp string) store.Record {
	for _, k := range []*store.Kind{store.KindEdgeRouter, store.KindRouter} {
		if r := tx.First(k, "fingerprint", fp); r != nil {
			if e, _ := routerState(r); e.IsVerified {
				return r
			}
		}
	}
	return nil
}

// extendRouter issues new certificates to a router that asks with its
// current, valid client certificate. The router's fingerprint moves to the
// new client certificate in the same command, so the old one stops working.
func (s *Server) extendRouter(c *call) error {
	certs, err := requireClientCert(c)
	if err != nil {
		return err
	}
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	now := s.now()
	chain := append(append([]*x509.Certificate{}, certs...), a.Intermediates()...)
	if pki.VerifyClientChain(chain, a.Pool(), now, false) != nil {
		return unauthorized("the TLS client certificate is not a valid certificate issued by this controller")
	}
	fp := pki.Fingerprint(certs[0])
	r := enrolledRouter(c.tx, fp)
	if r == nil {
		return unauthorized("the TLS client certificate is not the current certificate of an enrolled router")
	}
	_, k := routerState(r)
	body, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(body, routerCSRFields, modeCreate)
	if err != nil {
		return err
	}
	client, server, err := routerCerts(a, now, p, r.GetID())
	if err != nil {
		return err
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdRouterExtend, fsm.RouterCert{Kind: k.Table, ID: r.GetID(), OldFingerprint: fp,
		CertPem: client.leafPEM, Fingerprint: client.fingerprint, At: now}); err != nil {
		return err
	}
	c.ok(routerCertsView(a, client, server))
	return nil
}
