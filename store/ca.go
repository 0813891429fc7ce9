package store

import (
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// ExternalIDClaim says where in a certificate issued by a CA the identity's
// externalId is found, and how it is matched and parsed.
type ExternalIDClaim struct {
	Index           int64  `json:"index"`
	Location        string `json:"location"` // COMMON_NAME, SAN_URI, SAN_EMAIL
	Matcher         string `json:"matcher"`  // ALL, PREFIX, SUFFIX, SCHEME
	MatcherCriteria string `json:"matcherCriteria"`
	Parser          string `json:"parser"` // NONE, SPLIT
	ParserCriteria  string `json:"parserCriteria"`
}

// CA is a third-party certificate authority whose certificates identities may
// authenticate or enroll with once it is verified.
type CA struct {
	Base
	Named
	CertPem                   string           `json:"certPem"`
	Fingerprint               string           `json:"fingerprint"`
	ExternalIDClaim           *ExternalIDClaim `json:"externalIdClaim"`
	IdentityNameFormat        string           `json:"identityNameFormat"`
	IdentityRoles             []string         `json:"identityRoles"`
	IsAuthEnabled             bool             `json:"isAuthEnabled"`
	IsAutoCaEnrollmentEnabled bool             `json:"isAutoCaEnrollmentEnabled"`
	IsOttCaEnrollmentEnabled  bool             `json:"isOttCaEnrollmentEnabled"`
	IsVerified                bool             `json:"isVerified"`
	// VerificationToken is the common name the proof certificate of verify must carry.
	VerificationToken string `json:"verificationToken"`
}

// RecordName is the CA's name.
func (r *CA) RecordName() string { return r.Name }

// KindCA is the table of third-party CAs.
var KindCA = &Kind{Table: "cas", Entity: "CA", Named: true,
	new:     func() Record { return &CA{} },
	indexes: []*memdb.IndexSchema{strIndex("fingerprint", "Fingerprint")},
	Fields:  namedFields(caFilterFields)}

var caFilterFields = map[string]filter.Field{
	"fingerprint":               filter.StringField(func(r any) string { return r.(*CA).Fingerprint }),
	"identityNameFormat":        filter.StringField(func(r any) string { return r.(*CA).IdentityNameFormat }),
	"identityRoles":             filter.StringListField(func(r any) []string { return r.(*CA).IdentityRoles }),
	"isAuthEnabled":             filter.BoolField(func(r any) bool { return r.(*CA).IsAuthEnabled }),
	"isAutoCaEnrollmentEnabled": filter.BoolField(func(r any) bool { return r.(*CA).IsAutoCaEnrollmentEnabled }),
	"isOttCaEnrollmentEnabled":  filter.BoolField(func(r any) bool { return r.(*CA).IsOttCaEnrollmentEnabled }),
	"isVerified":                filter.BoolField(func(r any) bool { return r.(*CA).IsVerified }),
}

// checkCAFingerprint enforces that one certificate is registered as one CA only.
func (tx *Tx) checkCAFingerprint(ca *CA) error {
	if other := tx.First(KindCA, "fingerprint", ca.Fingerprint); other != nil && other.GetID() != ca.ID {
		return Conflict("certPem", ca.Fingerprint, "the certificate with fingerprint %s is already registered as CA %q",
			ca.Fingerprint, other.RecordName())
	}
	return nil
}

// CreateCA registers a new, unverified CA.
func (tx *Tx) CreateCA(ca *CA) error {
	if err := tx.checkCAFingerprint(ca); err != nil {
		return err
	}
	ca.IsVerified = false
	return tx.Insert(KindCA, ca)
}

// UpdateCA applies a PUT or PATCH. The certificate, its fingerprint, the
// verification token and the verified state never change through an update:
// a different certificate is a different CA.
func (tx *Tx) UpdateCA(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindCA, id, p, at, func(old, upd Record) error {
		o, n := old.(*CA), upd.(*CA)
		n.CertPem, n.Fingerprint, n.VerificationToken, n.IsVerified = o.CertPem, o.Fingerprint, o.VerificationToken, o.IsVerified
		return nil
	})
	return err
}

// VerifyCA marks a CA verified. The API checked the proof certificate before
// proposing; a CA verified already is a conflict, so a second proof is not
// silently accepted.
func (tx *Tx) VerifyCA(id string, at time.Time) error {
	ca, err := GetAs[*CA](tx, KindCA, id)
	if err != nil {
		return err
	}
	if ca.IsVerified {
		return Conflict("isVerified", true, "the CA %q is already verified", ca.Name)
	}
	n := *ca
	n.IsVerified, n.UpdatedAt = true, at
	return tx.Replace(KindCA, &n)
}

// DeleteCA removes a CA with its outstanding ottca enrollments and the cert
// authenticators issued through it (authenticatorIDs, found by the API by
// checking certificate signatures; ids gone or not cert are skipped).
func (tx *Tx) DeleteCA(id string, authenticatorIDs []string) error {
	if !tx.Exists(KindCA, id) {
		return NotFound(KindCA.Entity, id)
	}
	if err := tx.removeWhere(KindEnrollment, "ca", id); err != nil {
		return err
	}
	for _, aid := range authenticatorIDs {
		a, err := GetAs[*Authenticator](tx, KindAuthenticator, aid)
		if err != nil || a.Method != "cert" {
			continue
		}
		if err := tx.Remove(KindAuthenticator, aid); err != nil {
			return err
		}
	}
	return tx.Remove(KindCA, id)
}
