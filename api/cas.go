package api

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"

	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// defaultIdentityNameFormat names identities made by CA auto enrollment.
const defaultIdentityNameFormat = "[caName]-[commonName]"

// externalIDClaimFields are the fields of a CA's externalIdClaim object.
var externalIDClaimFields = []field{
	{name: "index", kind: fInt, nullable: true, min: 0, max: maxInt32, def: int64(0)},
	{name: "location", kind: fString, required: true, enum: []string{"COMMON_NAME", "SAN_URI", "SAN_EMAIL"}},
	{name: "matcher", kind: fString, required: true, enum: []string{"ALL", "PREFIX", "SUFFIX", "SCHEME"}},
	{name: "matcherCriteria", kind: fString, nullable: true, max: 1024, def: ""},
	{name: "parser", kind: fString, required: true, enum: []string{"NONE", "SPLIT"}},
	{name: "parserCriteria", kind: fString, nullable: true, max: 1024, def: ""},
}

// decodeExternalIDClaim decodes a whole externalIdClaim (it is replaced, never merged).
func decodeExternalIDClaim(raw json.RawMessage) (any, error) {
	v, err := nestedDecoder("externalIdClaim", externalIDClaimFields, modeCreate)(raw)
	if err != nil {
		return nil, err
	}
	m := v.(map[string]any)
	if m["matcher"] != "ALL" && m["matcherCriteria"] == "" {
		return nil, invalidField("externalIdClaim.matcherCriteria", "is required when matcher is not ALL", nil)
	}
	if m["parser"] == "SPLIT" && m["parserCriteria"] == "" {
		return nil, invalidField("externalIdClaim.parserCriteria", "is required when parser is SPLIT", nil)
	}
	return m, nil
}

// decodeCACertPem accepts a PEM certificate that can act as a CA.
func decodeCACertPem(raw json.RawMessage) (any, error) {
	var s string
	if err := unmarshalField("certPem", raw, &s); err != nil {
		return nil, err
	}
	if _, err := pki.ValidateCACertPEM([]byte(s)); err != nil {
		return nil, invalidField("certPem", "must be a PEM CA certificate with the cert-sign key usage: "+err.Error(), nil)
	}
	return s, nil
}

// caFields are the writable fields of a CA. certPem is fixed at create (a
// different certificate is a different CA); identityNameFormat is required by
// PUT only, create defaults it.
func caFields(m mode) []field {
	return []field{
		{name: "name", kind: fString, required: true, min: 1, max: 255},
		{name: "certPem", kind: fCustom, required: true, create: true, custom: decodeCACertPem, ui: fieldUI{input: "pem"}},
		{name: "identityRoles", kind: fStringList, required: true, min: 1, max: 255,
			ui: fieldUI{input: "attrs", attrs: "identity-role-attributes", label: "Identity roles (attributes given to enrolled identities)"}},
		{name: "isAuthEnabled", kind: fBool, required: true},
		{name: "isAutoCaEnrollmentEnabled", kind: fBool, required: true},
		{name: "isOttCaEnrollmentEnabled", kind: fBool, required: true},
		{name: "identityNameFormat", kind: fString, required: m == modePut, nullable: m != modePut, min: 1, max: 255,
			def: defaultIdentityNameFormat},
		{name: "externalIdClaim", kind: fCustom, nullable: true, patchEmptyKeeps: true, custom: decodeExternalIDClaim},
		tagsField,
	}
}

func (s *Server) createCA(c *call) error {
	return s.createHandler(store.KindCA, "cas", caFields(modeCreate), fsm.CmdCACreate, caCertPrepare)(c)
}

// caCertPrepare checks the CA certificate of a create and derives what the
// CA record keeps of it; a new CA starts unverified.
func caCertPrepare(_ *call, p *parsed) error {
	pem, _ := p.values["certPem"].(string)
	cert, err := pki.ValidateCACertPEM([]byte(pem))
	if err != nil {
		return invalidField("certPem", err.Error(), nil)
	}
	for k, v := range map[string]any{"fingerprint": pki.Fingerprint(cert), "verificationToken": newUUID(), "isVerified": false} {
		if err := p.set(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) updateCA(m mode) func(c *call) error {
	return s.updateHandler(store.KindCA, caFields(m), fsm.CmdCAUpdate, m, nil)
}

// deleteCA removes a CA, its outstanding ottca enrollments and the cert
// authenticators whose certificates it signed.
func (s *Server) deleteCA(c *call) error {
	ca, err := store.GetAs[*store.CA](c.tx, store.KindCA, c.param("id"))
	if err != nil {
		return err
	}
	var ids []string
	if caCert, err := firstCert(ca.CertPem); err == nil {
		c.tx.Each(store.KindAuthenticator, "id", func(r store.Record) bool {
			if a := r.(*store.Authenticator); a.Method == "cert" && signedBy(a.CertPem, caCert) {
				ids = append(ids, a.ID)
			}
			return true
		})
	}
	_, err = s.Writer.Do(c.r.Context(), fsm.CmdCADelete, fsm.CADelete{ID: ca.ID, AuthenticatorIDs: ids})
	return err
}

func (s *Server) getCA(c *call) error {
	ca, err := store.GetAs[*store.CA](c.tx, store.KindCA, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(caView(ca))
	return nil
}

func (s *Server) listCAs(c *call) error {
	return c.listKind(store.KindCA, false, func(r store.Record) any { return caView(r.(*store.CA)) })
}

// verifyCA checks the proof of possession of a CA's key: a PEM certificate
// (the raw text/plain body) signed by the CA whose common name is the CA's
// verificationToken.
func (s *Server) verifyCA(c *call) error {
	ca, err := store.GetAs[*store.CA](c.tx, store.KindCA, c.param("id"))
	if err != nil {
		return err
	}
	if ca.IsVerified {
		return store.Conflict("isVerified", true, "the CA %q is already verified", ca.Name)
	}
	body, err := readBody(c.r, maxBody)
	if err != nil {
		return err
	}
	err = pki.VerifyCAProof([]byte(ca.CertPem), bytes.TrimSpace(body), ca.VerificationToken)
	switch {
	case errors.Is(err, pki.ErrBadPEM):
		return badBody("the body must be a PEM certificate: %v", err)
	case errors.Is(err, pki.ErrProofNotSigned):
		return invalidField("body", "the certificate is not signed by this CA", nil)
	case errors.Is(err, pki.ErrProofWrongCN):
		return invalidField("body", "the certificate's common name is not the CA's verificationToken", nil)
	case err != nil:
		return invalidField("body", err.Error(), nil)
	}
	_, err = s.Writer.Do(c.r.Context(), fsm.CmdCAVerify, fsm.CAVerify{ID: ca.ID, At: s.now()})
	return err
}

// getCAJWT answers the enrollment JWT for CA auto enrollment as
// application/jwt: method "ca", subject the CA id, valid as long as the CA
// certificate.
func (s *Server) getCAJWT(c *call) error {
	ca, err := store.GetAs[*store.CA](c.tx, store.KindCA, c.param("id"))
	if err != nil {
		return err
	}
	cert, err := firstCert(ca.CertPem)
	if err != nil {
		return err
	}
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	jwt, err := s.signEnrollmentJWT(a, pki.EnrollmentClaims{Subject: ca.ID,
		Method: "ca", ExpiresAt: cert.NotAfter, Controllers: s.controllerURLs()})
	if err != nil {
		return err
	}
	c.wrote = true
	c.w.Header().Set("Content-Type", "application/jwt")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write([]byte(jwt))
	return nil
}

// firstCert parses the first certificate of a PEM text.
func firstCert(certPem string) (*x509.Certificate, error) {
	certs, err := pki.ParseCertsPEM([]byte(certPem))
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}

// signedBy reports whether the first certificate of certPem is signed by ca.
func signedBy(certPem string, ca *x509.Certificate) bool {
	cert, err := firstCert(certPem)
	return err == nil && cert.CheckSignatureFrom(ca) == nil
}

// ottCAOf returns the verified, ottca-enabled CA that signed certPem, or nil.
func ottCAOf(tx *store.Tx, certPem string) *store.CA {
	var found *store.CA
	tx.Each(store.KindCA, "id", func(r store.Record) bool {
		ca := r.(*store.CA)
		if !ca.IsVerified || !ca.IsOttCaEnrollmentEnabled {
			return true
		}
		if caCert, err := firstCert(ca.CertPem); err == nil && signedBy(certPem, caCert) {
			found = ca
		}
		return found == nil
	})
	return found
}

// caView is a CA as the Management API shows it.
func caView(ca *store.CA) map[string]any {
	links := selfLinks("cas", ca.ID)
	links["jwt"] = map[string]string{"href": "./cas/" + ca.ID + "/jwt"}
	links["verify"] = map[string]string{"href": "./cas/" + ca.ID + "/verify"}
	var claim any
	if ca.ExternalIDClaim != nil {
		claim = ca.ExternalIDClaim
	}
	return map[string]any{
		"_links":                    links,
		"id":                        ca.ID,
		"createdAt":                 ca.CreatedAt,
		"updatedAt":                 ca.UpdatedAt,
		"tags":                      tagsOrEmpty(ca.Tags),
		"name":                      ca.Name,
		"certPem":                   ca.CertPem,
		"fingerprint":               ca.Fingerprint,
		"externalIdClaim":           claim,
		"identityNameFormat":        ca.IdentityNameFormat,
		"identityRoles":             nonNilStrings(ca.IdentityRoles),
		"isAuthEnabled":             ca.IsAuthEnabled,
		"isAutoCaEnrollmentEnabled": ca.IsAutoCaEnrollmentEnabled,
		"isOttCaEnrollmentEnabled":  ca.IsOttCaEnrollmentEnabled,
		"isVerified":                ca.IsVerified,
		"verificationToken":         ca.VerificationToken,
	}
}

// caRoutes are the certificate authority operations.
func (s *Server) caRoutes() []route {
	return append(crudRoutes("/cas", "Ca", "Cas", "Certificate Authority", crudOps{list: s.listCAs, create: s.createCA, detail: s.getCA, update: s.updateCA, del: s.deleteCA}),
		route{managementAPI, get, "/cas/:id/jwt", "getCaJwt", "Certificate Authority", admin, s.getCAJWT},
		route{managementAPI, post, "/cas/:id/verify", "verifyCa", "Certificate Authority", admin, s.verifyCA},
	)
}
