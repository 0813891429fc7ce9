package store

import (
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// Enrollment is an outstanding way for an identity to get its credential.
type Enrollment struct {
	Base
	IdentityID string    `json:"identityId"`
	Method     string    `json:"method"` // ott, ottca, updb
	CaID       *string   `json:"caId"`
	Username   *string   `json:"username"`
	Token      string    `json:"token"`
	JWT        string    `json:"jwt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// KindEnrollment is the kind of Enrollment records.
var KindEnrollment = &Kind{Table: "enrollments", Entity: "enrollment",
	new: func() Record { return &Enrollment{} },
	// username: the username an updb enrollment reserves; ca: the CA of an ottca one.
	indexes: []*memdb.IndexSchema{strIndex("identity", "IdentityID"), strIndex("token", "Token"),
		strIndex("username", "Username"), strIndex("ca", "CaID")},
	Fields: baseFields(enrollmentFilterFields)}

var enrollmentFilterFields = map[string]filter.Field{
	"identityId": {Type: filter.String, Get: func(r any) any { return r.(*Enrollment).IdentityID }},
	"method":     {Type: filter.String, Get: func(r any) any { return r.(*Enrollment).Method }},
	"expiresAt":  {Type: filter.Time, Get: func(r any) any { return r.(*Enrollment).ExpiresAt }},
	"username":   {Type: filter.String, Get: func(r any) any { return optString(r.(*Enrollment).Username) }},
	// OpenZiti's references: "identity" (identityId) and "caId" reach the
	// identity's and the CA's fields ("identity.name", "caId.name").
	"identity": refField("enrollments", idOf(func(r any) string { return r.(*Enrollment).IdentityID }),
		func() *filter.Schema { return KindIdentity.Fields }, KindIdentity),
	"caId": refField("enrollments", optIDOf(func(r any) *string { return r.(*Enrollment).CaID }),
		func() *filter.Schema { return KindCA.Fields }, KindCA),
}

// credentialOf is the authenticator method an enrollment method yields:
// ott and ottca both end in a certificate.
func credentialOf(method string) string {
	if method == "updb" {
		return "updb"
	}
	return "cert"
}

// insertEnrollment adds an outstanding enrollment after the checks every
// enrollment needs. at is the time of the request (decided by the proposer):
// an enrollment of the same credential that expired by then is replaced, one
// still outstanding is a conflict.
func (tx *Tx) insertEnrollment(e *Enrollment, at time.Time) error {
	if !tx.Exists(KindIdentity, e.IdentityID) {
		return Invalid("identityId", "no identity with this id", e.IdentityID)
	}
	if e.Method == "ottca" {
		if err := tx.checkOttCA(e.CaID); err != nil {
			return err
		}
	}
	want := credentialOf(e.Method)
	var expired []string
	var pending *Enrollment
	tx.Each(KindEnrollment, "identity", func(r Record) bool {
		o := r.(*Enrollment)
		if credentialOf(o.Method) != want {
			return true
		}
		if o.ExpiresAt.After(at) {
			pending = o
			return false
		}
		expired = append(expired, o.ID)
		return true
	}, e.IdentityID)
	if pending != nil {
		return Conflict("method", e.Method, "the identity already has an outstanding %s enrollment (%s)", pending.Method, pending.ID)
	}
	var has bool
	tx.Each(KindAuthenticator, "identity", func(r Record) bool {
		has = r.(*Authenticator).Method == want
		return !has
	}, e.IdentityID)
	if has {
		return Conflict("method", e.Method, "the identity already has a %s authenticator", want)
	}
	if e.Method == "updb" && e.Username != nil {
		if err := tx.checkEnrollmentUsername(*e.Username, e.ID); err != nil {
			return err
		}
	}
	for _, id := range expired {
		if err := tx.Remove(KindEnrollment, id); err != nil {
			return err
		}
	}
	return tx.Insert(KindEnrollment, e)
}

// checkOttCA verifies that an ottca enrollment names a CA that can enroll.
func (tx *Tx) checkOttCA(caID *string) error {
	if caID == nil || *caID == "" {
		return Invalid("caId", "is required for method ottca", nil)
	}
	ca, err := GetAs[*CA](tx, KindCA, *caID)
	switch {
	case err != nil:
		return Invalid("caId", "no CA with this id", *caID)
	case !ca.IsVerified:
		return Invalid("caId", "the CA is not verified", *caID)
	case !ca.IsOttCaEnrollmentEnabled:
		return Invalid("caId", "the CA does not allow ottca enrollment (isOttCaEnrollmentEnabled is false)", *caID)
	}
	return nil
}

// checkEnrollmentUsername keeps a username that an updb enrollment will
// create unique among authenticators and other updb enrollments.
func (tx *Tx) checkEnrollmentUsername(username, self string) error {
	if tx.First(KindAuthenticator, "username", username) != nil {
		return Conflict("username", username, "the username %q is already used", username)
	}
	if e := tx.updbEnrollmentOf(username); e != nil && e.ID != self {
		return Conflict("username", username, "the username %q is reserved by updb enrollment %s", username, e.ID)
	}
	return nil
}

// CreateEnrollment adds an outstanding enrollment for an existing identity.
func (tx *Tx) CreateEnrollment(e *Enrollment, at time.Time) error { return tx.insertEnrollment(e, at) }

// RefreshEnrollment gives an enrollment a new token, JWT and expiry; the old
// token no longer finds it, so the old JWT is unusable.
func (tx *Tx) RefreshEnrollment(id, token, jwt string, expiresAt, at time.Time) error {
	e, err := GetAs[*Enrollment](tx, KindEnrollment, id)
	if err != nil {
		return err
	}
	n := *e
	n.Token, n.JWT, n.ExpiresAt, n.UpdatedAt = token, jwt, expiresAt, at
	return tx.Replace(KindEnrollment, &n)
}

// DeleteEnrollment removes an enrollment.
func (tx *Tx) DeleteEnrollment(id string) error { return tx.Remove(KindEnrollment, id) }

// JWTReissue replaces the JWT of an outstanding enrollment: an identity's
// (Kind "enrollment") or a router's ("edgeRouter", "router"), whose one-time
// token is still Token.
type JWTReissue struct {
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Token string `json:"token"`
	JWT   string `json:"jwt"`
}

// ReissueJWTs applies items; one whose record is gone or whose token changed
// since (used, or replaced by a re-enrollment) is skipped.
func (tx *Tx) ReissueJWTs(items []JWTReissue) error {
	for _, it := range items {
		switch it.Kind {
		case "enrollment":
			e, err := GetAs[*Enrollment](tx, KindEnrollment, it.ID)
			if err != nil || e.Token != it.Token {
				continue
			}
			cp := *e
			cp.JWT = it.JWT
			if err := tx.Replace(KindEnrollment, &cp); err != nil {
				return err
			}
		case "edgeRouter":
			r, err := GetAs[*EdgeRouter](tx, KindEdgeRouter, it.ID)
			if err != nil || r.EnrollmentToken == nil || *r.EnrollmentToken != it.Token {
				continue
			}
			cp := *r
			jwt := it.JWT
			cp.EnrollmentJwt = &jwt
			if err := tx.Replace(KindEdgeRouter, &cp); err != nil {
				return err
			}
		case "router":
			r, err := GetAs[*Router](tx, KindRouter, it.ID)
			if err != nil || r.EnrollmentToken == nil || *r.EnrollmentToken != it.Token {
				continue
			}
			cp := *r
			jwt := it.JWT
			cp.EnrollmentJwt = &jwt
			if err := tx.Replace(KindRouter, &cp); err != nil {
				return err
			}
		}
	}
	return nil
}
