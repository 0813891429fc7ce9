package store

import (
	"edgectl/policy"
	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// Session is a Dial or Bind session of an API session on a service.
type Session struct {
	Base
	// TokenHash is the SHA-256 of the session token; the token is shown once, at create.
	TokenHash    string `json:"tokenHash"`
	APISessionID string `json:"apiSessionId"`
	IdentityID   string `json:"identityId"`
	ServiceID    string `json:"serviceId"`
	Type         string `json:"type"`
}

// KindSession holds the sessions.
var KindSession = &Kind{Table: "sessions", Entity: "session",
	new: func() Record { return &Session{} },
	indexes: []*memdb.IndexSchema{strIndex("apiSession", "APISessionID"), strIndex("identity", "IdentityID"),
		strIndex("service", "ServiceID"), strIndex("token", "TokenHash")},
	Fields: baseFields(map[string]filter.Field{
		"apiSessionId": filter.StringField(func(r any) string { return r.(*Session).APISessionID }),
		"identityId":   filter.StringField(func(r any) string { return r.(*Session).IdentityID }),
		"serviceId":    filter.StringField(func(r any) string { return r.(*Session).ServiceID }),
		"type":         filter.StringField(func(r any) string { return r.(*Session).Type }),
		// OpenZiti's names for the same fields; its references reach the
		// API session's and the service's fields ("apiSession.identity.name").
		"apiSession": refField("sessions", idOf(func(r any) string { return r.(*Session).APISessionID }),
			func() *filter.Schema { return KindAPISession.Fields }, KindAPISession),
		"identity": filter.StringField(func(r any) string { return r.(*Session).IdentityID }),
		"service": refField("sessions", idOf(func(r any) string { return r.(*Session).ServiceID }),
			func() *filter.Schema { return KindService.Fields }, KindService),
	})}

// CreateSession stores a session after checking, deterministically, that its
// API session and service exist and that a service policy grants the type.
func (tx *Tx) CreateSession(s *Session) error {
	as, err := GetAs[*APISession](tx, KindAPISession, s.APISessionID)
	if err != nil {
		return Invalid("apiSessionId", "the API session ended", s.APISessionID)
	}
	if as.IdentityID != s.IdentityID {
		return Invalid("identityId", "the API session belongs to another identity", s.IdentityID)
	}
	if !tx.Exists(KindService, s.ServiceID) {
		return NotFound("service", s.ServiceID)
	}
	if !hasType(policy.PairGrants(tx, s.IdentityID, s.ServiceID), s.Type) {
		return Forbidden("the identity has no %s permission on service %s", s.Type, s.ServiceID)
	}
	return tx.Insert(KindSession, s)
}

// DeleteSession removes a session.
func (tx *Tx) DeleteSession(id string) error { return tx.Remove(KindSession, id) }
