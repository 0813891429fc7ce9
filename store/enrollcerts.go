package store

import (
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// APISessionCertificate is an ephemeral client certificate the controller
// issued to an API session. It lives as long as its API session.
type APISessionCertificate struct {
	Base
	APISessionID string `json:"apiSessionId"`
	IdentityID   string `json:"identityId"`
	// Certificate is the PEM the client received: the leaf, then the intermediate.
	Certificate string    `json:"certificate"`
	Fingerprint string    `json:"fingerprint"`
	Subject     string    `json:"subject"`
	ValidFrom   time.Time `json:"validFrom"`
	ValidTo     time.Time `json:"validTo"`
}

// CertExtension is a certificate issued by the extend operation of a cert
// authenticator, waiting for extend-verify. Its id is the authenticator's id,
// so an authenticator has at most one pending extension.
type CertExtension struct {
	Base
	IdentityID string `json:"identityId"`
	// OldFingerprint is the authenticator's certificate when the extension
	// was issued: verify refuses the extension if it changed since.
	OldFingerprint string `json:"oldFingerprint"`
	CertPem        string `json:"certPem"`
	Fingerprint    string `json:"fingerprint"`
}

// Kinds of the enrollment family.
var (
	KindAPISessionCertificate = &Kind{Table: "apiSessionCertificates", Entity: "API session certificate",
		new: func() Record { return &APISessionCertificate{} },
		indexes: []*memdb.IndexSchema{strIndex("apiSession", "APISessionID"), strIndex("identity", "IdentityID"),
			strIndex("fingerprint", "Fingerprint")},
		Fields: baseFields(apiSessionCertificateFilterFields)}
	KindCertExtension = &Kind{Table: "certExtensions", Entity: "certificate extension",
		new:     func() Record { return &CertExtension{} },
		indexes: []*memdb.IndexSchema{strIndex("identity", "IdentityID")},
		Fields:  baseFields(nil)}
)

var apiSessionCertificateFilterFields = map[string]filter.Field{
	"fingerprint": filter.StringField(func(r any) string { return r.(*APISessionCertificate).Fingerprint }),
	"subject":     filter.StringField(func(r any) string { return r.(*APISessionCertificate).Subject }),
	"validFrom":   filter.TimeField(func(r any) time.Time { return r.(*APISessionCertificate).ValidFrom }),
	"validTo":     filter.TimeField(func(r any) time.Time { return r.(*APISessionCertificate).ValidTo }),
}

// CreateAPISessionCertificate stores an ephemeral certificate of a live API session.
func (tx *Tx) CreateAPISessionCertificate(c *APISessionCertificate) error {
	s, err := GetAs[*APISession](tx, KindAPISession, c.APISessionID)
	if err != nil {
		return Invalid("apiSessionId", "the API session has ended", c.APISessionID)
	}
	if s.IdentityID != c.IdentityID {
		return Invalid("identityId", "the certificate is not for the API session's identity", c.IdentityID)
	}
	return tx.Insert(KindAPISessionCertificate, c)
}

// DeleteAPISessionCertificate removes an ephemeral certificate of the API
// session apiSessionID; one of another session is not found.
func (tx *Tx) DeleteAPISessionCertificate(id, apiSessionID string) error {
	c, err := GetAs[*APISessionCertificate](tx, KindAPISessionCertificate, id)
	if err != nil || c.APISessionID != apiSessionID {
		return NotFound(KindAPISessionCertificate.Entity, id)
	}
	return tx.Remove(KindAPISessionCertificate, id)
}

// dropAPISessionCertificates removes the ephemeral certificates of an API
// session that ended (recordChanged calls it on every API session removal).
func (tx *Tx) dropAPISessionCertificates(apiSessionID string) error {
	return tx.removeWhere(KindAPISessionCertificate, "apiSession", apiSessionID)
}

// ownCertAuthenticator returns the cert authenticator id of identityID; one
// of another identity is not found, so it is not told apart from none.
func (tx *Tx) ownCertAuthenticator(id, identityID string) (*Authenticator, error) {
	a, err := GetAs[*Authenticator](tx, KindAuthenticator, id)
	if err != nil || a.IdentityID != identityID {
		return nil, NotFound(KindAuthenticator.Entity, id)
	}
	if a.Method != "cert" {
		return nil, Invalid("method", "only cert authenticators can be extended", a.Method)
	}
	return a, nil
}

// ExtendAuthenticator keeps x as the pending extension of the cert
// authenticator x.ID, replacing an earlier pending one. The authenticator's
// certificate must still be x.OldFingerprint: it stays active until verify.
func (tx *Tx) ExtendAuthenticator(x *CertExtension) error {
	a, err := tx.ownCertAuthenticator(x.ID, x.IdentityID)
	if err != nil {
		return err
	}
	if a.Fingerprint != x.OldFingerprint {
		return Conflict("fingerprint", x.OldFingerprint, "the authenticator's certificate changed since the request was made")
	}
	if tx.First(KindAuthenticator, "fingerprint", x.Fingerprint) != nil {
		return Conflict("clientCertCsr", x.Fingerprint, "a certificate with fingerprint %s is already bound", x.Fingerprint)
	}
	return tx.Upsert(KindCertExtension, x)
}

// VerifyAuthenticatorExtension switches the cert authenticator id to its
// pending extension, whose fingerprint must be fp: from now on only the new
// certificate is bound. The extend-requested flags are cleared.
func (tx *Tx) VerifyAuthenticatorExtension(id, identityID, fp string, at time.Time) error {
	a, err := tx.ownCertAuthenticator(id, identityID)
	if err != nil {
		return err
	}
	x, err := GetAs[*CertExtension](tx, KindCertExtension, id)
	if err != nil {
		return Invalid("clientCert", "the authenticator has no pending extension: call extend first", nil)
	}
	if x.Fingerprint != fp {
		return Invalid("clientCert", "is not the certificate the last extend issued", fp)
	}
	if x.OldFingerprint != a.Fingerprint {
		return Conflict("fingerprint", x.OldFingerprint, "the authenticator's certificate changed since extend: extend again")
	}
	if other := tx.First(KindAuthenticator, "fingerprint", fp); other != nil {
		return Conflict("clientCert", fp, "a certificate with fingerprint %s is already bound", fp)
	}
	n := *a
	n.CertPem, n.Fingerprint, n.UpdatedAt = x.CertPem, x.Fingerprint, at
	n.IsExtendRequested, n.IsKeyRollRequested, n.ExtendRequestedAt = false, false, nil
	if err := tx.Replace(KindAuthenticator, &n); err != nil {
		return err
	}
	return tx.Remove(KindCertExtension, id)
}
