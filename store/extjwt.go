package store

import (
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// ExternalJWTSigner is an identity provider whose JWTs identities may
// authenticate with (primary ext-jwt) or must present (secondary factor).
type ExternalJWTSigner struct {
	Base
	Named
	Enabled         bool    `json:"enabled"`
	Issuer          string  `json:"issuer"`
	Audience        *string `json:"audience"`
	CertPem         *string `json:"certPem"`
	JwksEndpoint    *string `json:"jwksEndpoint"`
	Kid             *string `json:"kid"`
	ClaimsProperty  string  `json:"claimsProperty"`
	UseExternalID   bool    `json:"useExternalId"`
	ExternalAuthURL *string `json:"externalAuthUrl"`
	// Derived by the API from CertPem; null without a certificate.
	Fingerprint *string    `json:"fingerprint"`
	CommonName  *string    `json:"commonName"`
	NotBefore   *time.Time `json:"notBefore"`
	NotAfter    *time.Time `json:"notAfter"`
}

// RecordName is the signer's name.
func (r *ExternalJWTSigner) RecordName() string { return r.Name }

// KindExternalJWTSigner is the table of external JWT signers.
var KindExternalJWTSigner = &Kind{Table: "externalJwtSigners", Entity: "external JWT signer", Named: true,
	new:     func() Record { return &ExternalJWTSigner{} },
	indexes: []*memdb.IndexSchema{strIndex("issuer", "Issuer")},
	Fields:  namedFields(extJWTSignerFilterFields)}

func signerString(get func(*ExternalJWTSigner) *string) filter.Field {
	return filter.Field{Type: filter.String, Get: func(r any) any { return optString(get(r.(*ExternalJWTSigner))) }}
}

var extJWTSignerFilterFields = map[string]filter.Field{
	"enabled":         filter.BoolField(func(r any) bool { return r.(*ExternalJWTSigner).Enabled }),
	"issuer":          filter.StringField(func(r any) string { return r.(*ExternalJWTSigner).Issuer }),
	"claimsProperty":  filter.StringField(func(r any) string { return r.(*ExternalJWTSigner).ClaimsProperty }),
	"useExternalId":   filter.BoolField(func(r any) bool { return r.(*ExternalJWTSigner).UseExternalID }),
	"audience":        signerString(func(s *ExternalJWTSigner) *string { return s.Audience }),
	"kid":             signerString(func(s *ExternalJWTSigner) *string { return s.Kid }),
	"jwksEndpoint":    signerString(func(s *ExternalJWTSigner) *string { return s.JwksEndpoint }),
	"externalAuthUrl": signerString(func(s *ExternalJWTSigner) *string { return s.ExternalAuthURL }),
	"fingerprint":     signerString(func(s *ExternalJWTSigner) *string { return s.Fingerprint }),
	"commonName":      signerString(func(s *ExternalJWTSigner) *string { return s.CommonName }),
	"notBefore":       {Type: filter.Time, Get: func(r any) any { return optTime(r.(*ExternalJWTSigner).NotBefore) }},
	"notAfter":        {Type: filter.Time, Get: func(r any) any { return optTime(r.(*ExternalJWTSigner).NotAfter) }},
}

// checkSigner enforces the rules that span fields: one key source, and one
// signer per issuer (a JWT names its issuer, which must select one signer).
func (tx *Tx) checkSigner(s *ExternalJWTSigner) error {
	hasCert, hasJwks := s.CertPem != nil && *s.CertPem != "", s.JwksEndpoint != nil && *s.JwksEndpoint != ""
	switch {
	case hasCert && hasJwks:
		return Invalid("jwksEndpoint", "certPem and jwksEndpoint cannot both be set: exactly one must be", *s.JwksEndpoint)
	case !hasCert && !hasJwks:
		return Invalid("certPem", "exactly one of certPem and jwksEndpoint must be set", nil)
	}
	if other := tx.First(KindExternalJWTSigner, "issuer", s.Issuer); other != nil && other.GetID() != s.ID {
		return Conflict("issuer", s.Issuer, "the issuer %q is already used by external JWT signer %q", s.Issuer, other.RecordName())
	}
	return nil
}

// CreateExternalJWTSigner adds a signer.
func (tx *Tx) CreateExternalJWTSigner(s *ExternalJWTSigner) error {
	if err := tx.checkSigner(s); err != nil {
		return err
	}
	return tx.Insert(KindExternalJWTSigner, s)
}

// UpdateExternalJWTSigner applies a PUT or PATCH; the cross-field rules are
// checked on the merged record, so a PATCH cannot leave two key sources.
func (tx *Tx) UpdateExternalJWTSigner(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindExternalJWTSigner, id, p, at, func(_, upd Record) error {
		return tx.checkSigner(upd.(*ExternalJWTSigner))
	})
	return err
}

// DeleteExternalJWTSigner removes a signer no auth policy names.
func (tx *Tx) DeleteExternalJWTSigner(id string) error {
	s, err := GetAs[*ExternalJWTSigner](tx, KindExternalJWTSigner, id)
	if err != nil {
		return err
	}
	var user *AuthPolicy
	tx.Each(KindAuthPolicy, "id", func(r Record) bool {
		if p := r.(*AuthPolicy); p.usesSigner(id) {
			user = p
		}
		return user == nil
	})
	if user != nil {
		return Referenced("the external JWT signer %q is used by auth policy %q", s.Name, user.Name)
	}
	return tx.Remove(KindExternalJWTSigner, id)
}
