package store

import (
	"time"

	"github.com/hashicorp/go-memdb"
)

// LoginFailures counts the consecutive failed authentications of an
// identity (wrong password, wrong MFA code) for the lockout of its auth
// policy. The record's id is the identity's id; it exists only while the
// count is above zero.
type LoginFailures struct {
	Base
	IdentityID string    `json:"identityId"`
	Count      int       `json:"count"`
	LastAt     time.Time `json:"lastAt"`
}

// KindLoginFailures holds the failure counts, one record per identity at most.
var KindLoginFailures = &Kind{Table: "loginFailures", Entity: "login failures",
	new:     func() Record { return &LoginFailures{} },
	indexes: []*memdb.IndexSchema{strIndex("identity", "IdentityID")},
	Fields:  baseFields(nil)}

// authPolicyFor returns the auth policy that governs an identity (its own or
// the default one), or nil when neither exists.
func (tx *Tx) authPolicyFor(i *Identity) *AuthPolicy {
	id := i.AuthPolicyID
	if id == "" {
		id = DefaultAuthPolicyID
	}
	p, err := GetAs[*AuthPolicy](tx, KindAuthPolicy, id)
	if err != nil {
		return nil
	}
	return p
}

// LoginFailed is the result of RecordLoginFailure.
type LoginFailed struct {
	Count  int  `json:"count"`
	Locked bool `json:"locked"`
}

// RecordLoginFailure counts a failed authentication of an identity at the
// time at. When the count reaches the policy's primary.updb.maxAttempts the
// identity is locked: disabled until at + lockoutDurationMinutes, or until an
// admin enables it when the duration is 0 (its API sessions end, as with any
// disable), and the count starts again. maxAttempts 0 means no lockout and
// nothing is counted. The default admin is never locked out: that would
// lock every operator out. An identity disabled at `at` counts nothing more.
// The policy is read here, as the log has it, so every node decides alike.
func (tx *Tx) RecordLoginFailure(identityID string, at time.Time) (*LoginFailed, error) {
	i, err := GetAs[*Identity](tx, KindIdentity, identityID)
	if err != nil {
		return &LoginFailed{}, nil
	}
	p := tx.authPolicyFor(i)
	if p == nil || p.Primary.Updb.MaxAttempts <= 0 || i.IsDefaultAdmin ||
		(i.Disabled && (i.DisabledUntil == nil || i.DisabledUntil.After(at))) {
		return &LoginFailed{}, nil
	}
	rec := &LoginFailures{Base: Base{ID: identityID, CreatedAt: at}, IdentityID: identityID}
	if old, err := GetAs[*LoginFailures](tx, KindLoginFailures, identityID); err == nil {
		c := *old
		rec = &c
	}
	rec.Count++
	rec.LastAt, rec.UpdatedAt = at, at
	if rec.Count < p.Primary.Updb.MaxAttempts {
		return &LoginFailed{Count: rec.Count}, tx.Upsert(KindLoginFailures, rec)
	}
	var until *time.Time
	if m := p.Primary.Updb.LockoutDurationMinutes; m > 0 {
		u := at.Add(time.Duration(m) * time.Minute)
		until = &u
	}
	if err := tx.resetLoginFailures(identityID); err != nil {
		return nil, err
	}
	if err := tx.DisableIdentity(identityID, at, until); err != nil {
		return nil, err
	}
	return &LoginFailed{Count: rec.Count, Locked: true}, nil
}

// resetLoginFailures ends a run of failures: the identity authenticated.
func (tx *Tx) resetLoginFailures(identityID string) error {
	if !tx.Exists(KindLoginFailures, identityID) {
		return nil
	}
	return tx.Remove(KindLoginFailures, identityID)
}

// LoginFailureCount is the current run of failures of an identity.
func (tx *Tx) LoginFailureCount(identityID string) int {
	r, err := GetAs[*LoginFailures](tx, KindLoginFailures, identityID)
	if err != nil {
		return 0
	}
	return r.Count
}

// Login stores the API session of a successful primary authentication,
// unless the identity is disabled (locked) at the session's creation time.
// With resetFailures (the session needs no further factor) the identity's
// run of failed attempts ends in the same step.
func (tx *Tx) Login(s *APISession, resetFailures bool) error {
	// A lock (or disable) committed after the API read the identity wins:
	// the log, not the proposer's view, decides.
	if i, err := GetAs[*Identity](tx, KindIdentity, s.IdentityID); err == nil &&
		i.Disabled && (i.DisabledUntil == nil || i.DisabledUntil.After(s.CreatedAt)) {
		return Invalid("identityId", "the identity is disabled", s.IdentityID)
	}
	if err := tx.CreateAPISession(s); err != nil {
		return err
	}
	if !resetFailures {
		return nil
	}
	return tx.resetLoginFailures(s.IdentityID)
}
