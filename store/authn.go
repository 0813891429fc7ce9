package store

import "time"

func (tx *Tx) insertAuthenticator(a *Authenticator) error {
	if !tx.Exists(KindIdentity, a.IdentityID) {
		return Invalid("identityId", "no identity with this id", a.IdentityID)
	}
	if a.Method == "updb" {
		if other := tx.First(KindAuthenticator, "username", a.Username); other != nil {
			return Conflict("username", a.Username, "the username %q is already used", a.Username)
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
