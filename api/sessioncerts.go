package api

import (
	"net/http"
	"net/url"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// sessionCertsPath is the collection of the caller's ephemeral certificates, for links.
const sessionCertsPath = "current-api-session/certificates"

// createSessionCert issues an ephemeral client certificate (CN = the
// caller's identity id, valid 12 hours) for the body's csr. It is tied to
// the caller's API session and removed with it.
func (s *Server) createSessionCert(c *call) error {
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(raw, []field{{name: "csr", kind: fString, required: true, min: 1}}, modeCreate)
	if err != nil {
		return err
	}
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	now := s.now()
	id := auth.NewID()
	cert, err := issueFromCSR(a, now, "csr", p.values["csr"].(string), c.identity.ID, sessionCertValidity, pki.UsageClient,
		sessionCertSPIFFEID(c.identity.ID, c.session.ID, id))
	if err != nil {
		return err
	}
	rec := &store.APISessionCertificate{Base: store.Base{ID: id, CreatedAt: now, UpdatedAt: now},
		APISessionID: c.session.ID, IdentityID: c.identity.ID, Certificate: cert.chainPEM, Fingerprint: cert.fingerprint,
		Subject: cert.leaf.Subject.String(), ValidFrom: cert.leaf.NotBefore.UTC(), ValidTo: cert.leaf.NotAfter.UTC()}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdAPISessionCertCreate, rec); err != nil {
		return err
	}
	c.write(http.StatusCreated, map[string]any{"data": map[string]any{
		"_links": selfLinks(sessionCertsPath, rec.ID), "id": rec.ID,
		"cas": string(a.BundlePEM()), "certificate": cert.chainPEM,
	}, "meta": meta(nil)})
	return nil
}

// sessionCertSPIFFEID names an API session certificate's session in the
// certificate itself, as OpenZiti does: a router admits a client presenting
// it on that session's JWT, whose fingerprint list was fixed before the
// certificate existed (router/xgress_edge/connections.go, verifySpiffId).
func sessionCertSPIFFEID(identityID, apiSessionID, certID string) *url.URL {
	return &url.URL{Scheme: "spiffe", Host: "edgectl", Path: "/identity/" + url.PathEscape(identityID) + "/apiSession/" +
		url.PathEscape(apiSessionID) + "/apiSessionCertificate/" + url.PathEscape(certID)}
}

// ownSessionCert returns the caller's API session's certificate id; one of
// another session is not found, like an unknown id.
func ownSessionCert(c *call) (*store.APISessionCertificate, error) {
	id := c.param("id")
	rec, err := store.GetAs[*store.APISessionCertificate](c.tx, store.KindAPISessionCertificate, id)
	if err != nil || rec.APISessionID != c.session.ID {
		return nil, notFound("API session certificate", id)
	}
	return rec, nil
}

func (s *Server) getSessionCert(c *call) error {
	rec, err := ownSessionCert(c)
	if err != nil {
		return err
	}
	c.ok(sessionCertView(rec))
	return nil
}

// listSessionCerts lists the certificates of the caller's API session (LQ).
func (s *Server) listSessionCerts(c *call) error {
	lr, err := c.parseList(store.KindAPISessionCertificate.Fields, false)
	if err != nil {
		return err
	}
	recs := ownedRecords(c.tx, store.KindAPISessionCertificate, "apiSession", c.session.ID)
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return sessionCertView(r.(*store.APISessionCertificate)) })
}

func (s *Server) deleteSessionCert(c *call) error {
	rec, err := ownSessionCert(c)
	if err != nil {
		return err
	}
	_, err = s.Writer.Do(c.r.Context(), fsm.CmdAPISessionCertDelete, fsm.APISessionCertDelete{ID: rec.ID, APISessionID: c.session.ID})
	return err
}

// sessionCertView is an ephemeral certificate as its API session sees it.
func sessionCertView(r *store.APISessionCertificate) map[string]any {
	return map[string]any{
		"_links":      selfLinks(sessionCertsPath, r.ID),
		"id":          r.ID,
		"createdAt":   r.CreatedAt,
		"updatedAt":   r.UpdatedAt,
		"tags":        tagsOrEmpty(r.Tags),
		"certificate": r.Certificate,
		"fingerprint": r.Fingerprint,
		"subject":     r.Subject,
		"validFrom":   r.ValidFrom,
		"validTo":     r.ValidTo,
	}
}

// sessionCertRoutes are the certificates of the caller's API session.
func (s *Server) sessionCertRoutes() []route {
	return []route{
		{clientAPI, get, "/current-api-session/certificates", "listCurrentApiSessionCertificates", "Current API Session", full, s.listSessionCerts},
		{clientAPI, post, "/current-api-session/certificates", "createCurrentApiSessionCertificate", "Current API Session", full, s.createSessionCert},
		{clientAPI, get, "/current-api-session/certificates/:id", "detailCurrentApiSessionCertificate", "Current API Session", full, s.getSessionCert},
		{clientAPI, del, "/current-api-session/certificates/:id", "deleteCurrentApiSessionCertificate", "Current API Session", full, s.deleteSessionCert},
	}
}
