package store

import (
	"slices"
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// Authenticator binds a credential (password or certificate) to an identity.
type Authenticator struct {
	Base
	IdentityID string `json:"identityId"`
	Method     string `json:"method"` // updb or cert
	Username   string `json:"username,omitempty"`
	// PasswordHash is the encoded Argon2id hash; never shown by the API.
	PasswordHash string `json:"passwordHash,omitempty"`
	CertPem      string `json:"certPem,omitempty"`
	Fingerprint  string `json:"fingerprint,omitempty"`
	// IsExtendRequested asks the holder of a cert authenticator to extend its
	// certificate (IsKeyRollRequested: with a new key); set by an admin.
	IsExtendRequested  bool       `json:"isExtendRequested,omitempty"`
	IsKeyRollRequested bool       `json:"isKeyRollRequested,omitempty"`
	ExtendRequestedAt  *time.Time `json:"extendRequestedAt,omitempty"`
}

// KindAuthenticator is the kind of Authenticator records.
var KindAuthenticator = &Kind{Table: "authenticators", Entity: "authenticator",
	new: func() Record { return &Authenticator{} },
	indexes: []*memdb.IndexSchema{strIndex("identity", "IdentityID"), strIndex("username", "Username"),
		strIndex("fingerprint", "Fingerprint")},
	Fields: baseFields(authenticatorFilterFields)}

var authenticatorFilterFields = map[string]filter.Field{
	"identityId":        {Type: filter.String, Get: func(r any) any { return r.(*Authenticator).IdentityID }},
	"method":            {Type: filter.String, Get: func(r any) any { return r.(*Authenticator).Method }},
	"username":          {Type: filter.String, Get: func(r any) any { return r.(*Authenticator).Username }},
	"fingerprint":       {Type: filter.String, Get: func(r any) any { return r.(*Authenticator).Fingerprint }},
	"isExtendRequested": filter.BoolField(func(r any) bool { return r.(*Authenticator).IsExtendRequested }),
	// OpenZiti's names for the same fields.
	"identity": refField("authenticators", idOf(func(r any) string { return r.(*Authenticator).IdentityID }),
		func() *filter.Schema { return KindIdentity.Fields }, KindIdentity),
	"certFingerprint": {Type: filter.String, Get: func(r any) any { return r.(*Authenticator).Fingerprint }},
}

func (tx *Tx) insertAuthenticator(a *Authenticator) error {
	if !tx.Exists(KindIdentity, a.IdentityID) {
		return Invalid("identityId", "no identity with this id", a.IdentityID)
	}
	if a.Method == "updb" {
		if other := tx.First(KindAuthenticator, "username", a.Username); other != nil {
			return Conflict("username", a.Username, "the username %q is already used", a.Username)
		}
		if e := tx.updbEnrollmentOf(a.Username); e != nil {
			return Conflict("username", a.Username, "the username %q is reserved by updb enrollment %s", a.Username, e.ID)
		}
	}
	if a.Method == "cert" && a.Fingerprint != "" {
		if other := tx.First(KindAuthenticator, "fingerprint", a.Fingerprint); other != nil {
			return Conflict("certPem", a.Fingerprint, "a certificate with fingerprint %s is already bound", a.Fingerprint)
		}
	}
	dup := false
	tx.Each(KindAuthenticator, "identity", func(r Record) bool {
		dup = r.(*Authenticator).Method == a.Method
		return !dup
	}, a.IdentityID)
	if dup {
		return Conflict("method", a.Method, "the identity already has a %s authenticator", a.Method)
	}
	return tx.Insert(KindAuthenticator, a)
}

// CreateAuthenticator adds an authenticator to an identity.
func (tx *Tx) CreateAuthenticator(a *Authenticator) error { return tx.insertAuthenticator(a) }

// SetPassword replaces the username and password hash of an updb authenticator.
func (tx *Tx) SetPassword(id, username, hash string, at time.Time) error {
	a, err := GetAs[*Authenticator](tx, KindAuthenticator, id)
	if err != nil {
		return err
	}
	if a.Method != "updb" {
		return Invalid("method", "only updb authenticators have a password", a.Method)
	}
	if other := tx.First(KindAuthenticator, "username", username); other != nil && other.base().ID != id {
		return Conflict("username", username, "the username %q is already used", username)
	}
	n := *a
	n.Username, n.PasswordHash, n.UpdatedAt = username, hash, at
	return tx.Replace(KindAuthenticator, &n)
}

// updbEnrollmentOf returns the updb enrollment that reserves username, or nil.
func (tx *Tx) updbEnrollmentOf(username string) *Enrollment {
	var found *Enrollment
	tx.Each(KindEnrollment, "username", func(r Record) bool {
		if e := r.(*Enrollment); e.Method == "updb" {
			found = e
		}
		return found == nil
	}, username)
	return found
}

// UpdateAuthenticator applies a PUT or PATCH (username, passwordHash, tags).
// Only updb authenticators have a username and password.
func (tx *Tx) UpdateAuthenticator(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindAuthenticator, id, p, at, func(old, upd Record) error {
		o, n := old.(*Authenticator), upd.(*Authenticator)
		if o.Method != "updb" {
			if n.Username != o.Username {
				return Invalid("username", "only updb authenticators have a username", n.Username)
			}
			if n.PasswordHash != o.PasswordHash {
				return Invalid("password", "only updb authenticators have a password", nil)
			}
			return nil
		}
		if n.Username == o.Username {
			return nil
		}
		if other := tx.First(KindAuthenticator, "username", n.Username); other != nil && other.GetID() != id {
			return Conflict("username", n.Username, "the username %q is already used", n.Username)
		}
		if e := tx.updbEnrollmentOf(n.Username); e != nil && e.IdentityID != o.IdentityID {
			return Conflict("username", n.Username, "the username %q is reserved by updb enrollment %s", n.Username, e.ID)
		}
		return nil
	})
	return err
}

// DeleteAuthenticator removes an authenticator. The last authenticator of the
// default admin stays: without it no operator could log in again.
func (tx *Tx) DeleteAuthenticator(id string) error {
	a, err := GetAs[*Authenticator](tx, KindAuthenticator, id)
	if err != nil {
		return err
	}
	if i, err := GetAs[*Identity](tx, KindIdentity, a.IdentityID); err == nil && i.IsDefaultAdmin {
		n := 0
		tx.Each(KindAuthenticator, "identity", func(Record) bool { n++; return true }, i.ID)
		if n <= 1 {
			return Invalid("id", "the last authenticator of the default admin cannot be deleted", id)
		}
	}
	return tx.Remove(KindAuthenticator, id)
}

// ReEnrollAuthenticator replaces an authenticator by an enrollment of the
// same identity in one step, so the identity is never left with both or
// neither when one of them fails.
func (tx *Tx) ReEnrollAuthenticator(id string, e *Enrollment, at time.Time) error {
	a, err := GetAs[*Authenticator](tx, KindAuthenticator, id)
	if err != nil {
		return err
	}
	if e.IdentityID != a.IdentityID {
		return Invalid("identityId", "the enrollment is not for the authenticator's identity", e.IdentityID)
	}
	if err := tx.Remove(KindAuthenticator, id); err != nil {
		return err
	}
	return tx.insertEnrollment(e, at)
}

// RequestExtendAuthenticator flags a cert authenticator as asked to extend
// its certificate, optionally with a new key.
func (tx *Tx) RequestExtendAuthenticator(id string, rollKeys bool, at time.Time) error {
	a, err := GetAs[*Authenticator](tx, KindAuthenticator, id)
	if err != nil {
		return err
	}
	if a.Method != "cert" {
		return Invalid("method", "only cert authenticators can be asked to extend", a.Method)
	}
	n := *a
	n.IsExtendRequested, n.IsKeyRollRequested, n.ExtendRequestedAt, n.UpdatedAt = true, rollKeys, &at, at
	return tx.Replace(KindAuthenticator, &n)
}

// CertFingerprints are the fingerprints of identity id's certificate
// authenticators: the certificates its clients may present to routers.
func (tx *Tx) CertFingerprints(id string) []string {
	var out []string
	tx.Each(KindAuthenticator, "identity", func(rec Record) bool {
		if a := rec.(*Authenticator); a.Method == "cert" && a.Fingerprint != "" && !slices.Contains(out, a.Fingerprint) {
			out = append(out, a.Fingerprint)
		}
		return true
	}, id)
	return out
}
