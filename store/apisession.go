package store

import (
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// APISession is an authenticated session of an identity.
type APISession struct {
	Base
	// TokenHash is the SHA-256 of the token; the token itself is never stored.
	TokenHash       string   `json:"tokenHash"`
	IdentityID      string   `json:"identityId"`
	AuthenticatorID string   `json:"authenticatorId"`
	IPAddress       string   `json:"ipAddress"`
	ConfigTypes     []string `json:"configTypes"`
	IsMfaRequired   bool     `json:"isMfaRequired"`
	IsMfaComplete   bool     `json:"isMfaComplete"`
	// LastMfaAt is when the session last passed a TOTP (or recovery) code; MFA posture checks time from it.
	LastMfaAt            *time.Time  `json:"lastMfaAt,omitempty"`
	CachedLastActivityAt time.Time   `json:"cachedLastActivityAt"`
	AuthQueries          []AuthQuery `json:"authQueries"`
	// EnvInfo and SdkInfo, when reported at authentication, are copied to the identity.
	EnvInfo *EnvInfo `json:"envInfo,omitempty"`
	SdkInfo *SdkInfo `json:"sdkInfo,omitempty"`
}

// AuthQuery is a pending secondary authentication query of an API session.
type AuthQuery struct {
	Format     string `json:"format,omitempty"`
	HTTPMethod string `json:"httpMethod,omitempty"`
	HTTPURL    string `json:"httpUrl,omitempty"`
	MaxLength  int    `json:"maxLength,omitempty"`
	MinLength  int    `json:"minLength,omitempty"`
	Provider   string `json:"provider"`
	TypeID     string `json:"typeId"`
}

// KindAPISession is the kind of APISession records.
var KindAPISession = &Kind{Table: "apiSessions", Entity: "API session",
	new:     func() Record { return &APISession{} },
	indexes: []*memdb.IndexSchema{strIndex("identity", "IdentityID"), strIndex("token", "TokenHash")},
	Fields:  baseFields(apiSessionFilterFields)}

var apiSessionFilterFields = map[string]filter.Field{
	"identityId":           {Type: filter.String, Get: func(r any) any { return r.(*APISession).IdentityID }},
	"authenticatorId":      {Type: filter.String, Get: func(r any) any { return r.(*APISession).AuthenticatorID }},
	"ipAddress":            {Type: filter.String, Get: func(r any) any { return r.(*APISession).IPAddress }},
	"isMfaRequired":        {Type: filter.Bool, Get: func(r any) any { return r.(*APISession).IsMfaRequired }},
	"isMfaComplete":        {Type: filter.Bool, Get: func(r any) any { return r.(*APISession).IsMfaComplete }},
	"cachedLastActivityAt": {Type: filter.Time, Get: func(r any) any { return r.(*APISession).CachedLastActivityAt }},
	// OpenZiti's names for the same fields.
	"identity": refField("apiSessions", idOf(func(r any) string { return r.(*APISession).IdentityID }),
		func() *filter.Schema { return KindIdentity.Fields }, KindIdentity),
	"authenticator":  {Type: filter.String, Get: func(r any) any { return r.(*APISession).AuthenticatorID }},
	"mfaRequired":    {Type: filter.Bool, Get: func(r any) any { return r.(*APISession).IsMfaRequired }},
	"mfaComplete":    {Type: filter.Bool, Get: func(r any) any { return r.(*APISession).IsMfaComplete }},
	"lastActivityAt": {Type: filter.Time, Get: func(r any) any { return r.(*APISession).CachedLastActivityAt }},
}

// CreateAPISession stores a new API session.
func (tx *Tx) CreateAPISession(s *APISession) error {
	i, err := GetAs[*Identity](tx, KindIdentity, s.IdentityID)
	if err != nil {
		return Invalid("identityId", "no identity with this id", s.IdentityID)
	}
	if s.EnvInfo != nil || s.SdkInfo != nil {
		n := *i
		if s.EnvInfo != nil {
			n.EnvInfo = s.EnvInfo
		}
		if s.SdkInfo != nil {
			n.SdkInfo = s.SdkInfo
		}
		if err := tx.Replace(KindIdentity, &n); err != nil {
			return err
		}
	}
	return tx.Insert(KindAPISession, s)
}

// APISessionByTokenHash returns the API session whose token hashes to h, or nil.
func (tx *Tx) APISessionByTokenHash(h string) *APISession {
	r := tx.First(KindAPISession, "token", h)
	if r == nil {
		return nil
	}
	return r.(*APISession)
}

// Activity is a batch entry of last activity of one API session.
type Activity struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// TouchAPISessions records last activity times; sessions gone since are skipped.
func (tx *Tx) TouchAPISessions(batch []Activity) error {
	for _, a := range batch {
		s, err := GetAs[*APISession](tx, KindAPISession, a.ID)
		if err != nil {
			continue
		}
		if !a.At.After(s.CachedLastActivityAt) {
			continue
		}
		n := *s
		n.CachedLastActivityAt = a.At
		if err := tx.Replace(KindAPISession, &n); err != nil {
			return err
		}
	}
	return nil
}

// DeleteAPISessions removes API sessions; ids already gone are skipped.
func (tx *Tx) DeleteAPISessions(ids []string) error {
	for _, id := range ids {
		if !tx.Exists(KindAPISession, id) {
			continue
		}
		if err := tx.Remove(KindAPISession, id); err != nil {
			return err
		}
	}
	return nil
}
