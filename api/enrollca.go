package api

import (
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// caEnrollIdentityType is the type of identities made by CA auto
// enrollment: a certificate provisioned ahead of time usually sits on a device.
const caEnrollIdentityType = "Device"

// certToPEM encodes a certificate as PEM.
func certToPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// autoEnrollCA returns the registered, verified CA with auto enrollment that
// signed the presented chain (verified as of now), or nil.
func autoEnrollCA(tx *store.Tx, certs []*x509.Certificate, now time.Time) *store.CA {
	var found *store.CA
	tx.Each(store.KindCA, "id", func(r store.Record) bool {
		ca := r.(*store.CA)
		if !ca.IsVerified || !ca.IsAutoCaEnrollmentEnabled {
			return true
		}
		caCert, err := firstCert(ca.CertPem)
		if err != nil {
			return true
		}
		pool := x509.NewCertPool()
		pool.AddCert(caCert)
		if pki.VerifyClientChain(certs, pool, now, false) == nil {
			found = ca
		}
		return found == nil
	})
	return found
}

// caIdentityName fills the CA's identityNameFormat. Placeholders:
// [caName], [caId], [commonName] (the certificate's subject CN),
// [requestedName] (the body's name, else the CN) and [identityId]. A format
// that yields nothing falls back to the default format, then to the id; the
// result is cut to 255 characters, the limit of identity names.
func caIdentityName(ca *store.CA, cn, requested, identityID string) string {
	if requested == "" {
		requested = cn
	}
	r := strings.NewReplacer("[caName]", ca.Name, "[caId]", ca.ID, "[commonName]", cn,
		"[requestedName]", requested, "[identityId]", identityID)
	name := strings.TrimSpace(r.Replace(ca.IdentityNameFormat))
	if name == "" {
		name = strings.TrimSpace(r.Replace(defaultIdentityNameFormat))
	}
	if name == "" {
		name = identityID
	}
	for utf8.RuneCountInString(name) > 255 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// enrollCA is CA auto enrollment: the TLS client certificate, signed by a
// registered, verified CA with isAutoCaEnrollmentEnabled, becomes a new
// identity (named by the CA's identityNameFormat, with the CA's
// identityRoles) with a cert authenticator. The optional JSON body {name}
// fills [requestedName]. Answers 200 {_links, id} of the identity.
func (s *Server) enrollCA(c *call) error {
	body, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(body, []field{{name: "name", kind: fString, nullable: true, max: 255}}, modePatch)
	if err != nil {
		return err
	}
	requested, _ := p.values["name"].(string)
	certs, err := requireClientCert(c)
	if err != nil {
		return err
	}
	now := s.now()
	ca := autoEnrollCA(c.tx, certs, now)
	if ca == nil && c.rejudge() {
		ca = autoEnrollCA(c.tx, certs, now)
	}
	if ca == nil {
		return &apiError{status: http.StatusNotFound, code: codeNotFound,
			message: "no registered, verified CA with isAutoCaEnrollmentEnabled signed the TLS client certificate (or it is not valid now)"}
	}
	leaf := certs[0]
	fp := pki.Fingerprint(leaf)
	if c.tx.First(store.KindAuthenticator, "fingerprint", fp) != nil {
		return store.Conflict("certificate", fp, "the certificate with fingerprint %s is already enrolled", fp)
	}
	id := auth.NewID()
	ident := &store.Identity{Base: store.Base{ID: id, CreatedAt: now, UpdatedAt: now},
		Named:  store.Named{Name: caIdentityName(ca, leaf.Subject.CommonName, requested, id)},
		TypeID: caEnrollIdentityType, AuthPolicyID: "default", DefaultHostingPrecedence: "default",
		RoleAttributes: append([]string(nil), ca.IdentityRoles...)}
	au := newEnrolledAuthenticator(id, "cert", now)
	au.CertPem, au.Fingerprint = string(certToPEM(leaf)), fp
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdEnrollCA, fsm.EnrollCA{CaID: ca.ID, Identity: ident, Authenticator: au}); err != nil {
		return err
	}
	c.ok(map[string]any{"_links": selfLinks("identities", id), "id": id})
	return nil
}
