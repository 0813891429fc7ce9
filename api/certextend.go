package api

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"

	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// extendableAuthenticator returns the caller's authenticator id; one of another
// identity is not found, like an unknown id.
func extendableAuthenticator(c *call) (*store.Authenticator, error) {
	id := c.param("id")
	a, err := store.GetAs[*store.Authenticator](c.tx, store.KindAuthenticator, id)
	if err != nil || a.IdentityID != c.identity.ID {
		return nil, notFound("authenticator", id)
	}
	if a.Method != "cert" {
		return nil, invalidField("method", "only cert authenticators can be extended", a.Method)
	}
	return a, nil
}

// csrPublicKey returns the DER public key of a PEM certificate request, nil
// when it does not parse (issueFromCSR reports that).
func csrPublicKey(csrPEM string) []byte {
	for rest := []byte(csrPEM); ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if csr, err := x509.ParseCertificateRequest(b.Bytes); err == nil {
			return csr.RawSubjectPublicKeyInfo
		}
	}
}

// extendAuthenticator issues a new certificate for the caller's cert
// authenticator. The request must be made with the authenticator's current
// certificate, issued by this controller (valid, or expired when the auth
// policy allows expired certificates). The new certificate is kept pending:
// the old one stays bound until extend-verify. When an admin asked for a key
// roll (isKeyRollRequested), the CSR must carry a new key.
func (s *Server) extendAuthenticator(c *call) error {
	au, err := extendableAuthenticator(c)
	if err != nil {
		return err
	}
	certs, err := requireClientCert(c)
	if err != nil {
		return err
	}
	if pki.Fingerprint(certs[0]) != au.Fingerprint {
		return unauthorized("the request must be made with the authenticator's current certificate as TLS client certificate")
	}
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	now := s.now()
	allowExpired := false
	if pol := s.authPolicyOf(c.tx, c.identity); pol != nil {
		allowExpired = pol.Primary.Cert.AllowExpiredCerts
	}
	chain := append(append([]*x509.Certificate{}, certs...), a.Intermediates()...)
	if pki.VerifyClientChain(chain, a.Pool(), now, allowExpired) != nil {
		return invalidField("certPem", "the authenticator's certificate was not issued by this controller (or is not valid now): only those can be extended", nil)
	}
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(raw, []field{{name: "clientCertCsr", kind: fString, required: true, min: 1}}, modeCreate)
	if err != nil {
		return err
	}
	csr := p.values["clientCertCsr"].(string)
	if key := csrPublicKey(csr); au.IsKeyRollRequested && key != nil && bytes.Equal(key, certs[0].RawSubjectPublicKeyInfo) {
		return invalidField("clientCertCsr", "a key roll was requested: the request must carry a new key", nil)
	}
	cert, err := issueFromCSR(a, now, "clientCertCsr", csr, au.IdentityID, identityCertValidity, pki.UsageClient)
	if err != nil {
		return err
	}
	x := &store.CertExtension{Base: store.Base{ID: au.ID, CreatedAt: now, UpdatedAt: now}, IdentityID: au.IdentityID,
		OldFingerprint: au.Fingerprint, CertPem: cert.leafPEM, Fingerprint: cert.fingerprint}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdAuthenticatorExtend, x); err != nil {
		return err
	}
	c.ok(map[string]any{"ca": string(a.BundlePEM()), "clientCert": cert.chainPEM})
	return nil
}

// extendVerifyAuthenticator switches the caller's cert authenticator to the
// certificate the last extend issued (the body's clientCert): from then on
// the old certificate is no longer bound to the identity.
func (s *Server) extendVerifyAuthenticator(c *call) error {
	au, err := extendableAuthenticator(c)
	if err != nil {
		return err
	}
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(raw, []field{{name: "clientCert", kind: fString, required: true, min: 1}}, modeCreate)
	if err != nil {
		return err
	}
	fp, err := parseClientCertField("clientCert", p.values["clientCert"].(string))
	if err != nil {
		return err
	}
	_, err = s.Writer.Do(c.r.Context(), fsm.CmdAuthenticatorExtendVerify,
		fsm.ExtendVerify{ID: au.ID, IdentityID: au.IdentityID, Fingerprint: fp, At: s.now()})
	return err
}

// certExtendRoutes are the extension of the caller's certificate.
func (s *Server) certExtendRoutes() []route {
	return []route{
		{bothAPIs, post, "/current-identity/authenticators/:id/extend", "extendCurrentIdentityAuthenticator",
			"Current API Session, Enroll, Extend Enrollment", full, s.extendAuthenticator},
		{bothAPIs, post, "/current-identity/authenticators/:id/extend-verify", "extendVerifyCurrentIdentityAuthenticator",
			"Current API Session, Enroll, Extend Enrollment", full, s.extendVerifyAuthenticator},
	}
}
