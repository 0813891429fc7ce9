package store

import "time"

// JoinToken lets one new node join the cluster, once, before it expires. The
// id is the SHA-256 of the token's secret; the secret itself is never stored.
type JoinToken struct {
	Base
	ExpiresAt time.Time `json:"expiresAt"`
}

// KindJoinToken holds the outstanding join tokens.
var KindJoinToken = &Kind{Table: "joinTokens", Entity: "join token",
	new: func() Record { return &JoinToken{} }, Fields: baseFields(nil)}

// CreateJoinToken stores a new join token.
func (tx *Tx) CreateJoinToken(t *JoinToken) error { return tx.Insert(KindJoinToken, t) }

// DeleteJoinToken revokes an outstanding join token.
func (tx *Tx) DeleteJoinToken(id string) error {
	if !tx.Exists(KindJoinToken, id) {
		return NotFound(KindJoinToken.Entity, id)
	}
	return tx.Remove(KindJoinToken, id)
}

// ConsumeJoinToken uses a join token up: it must exist and not be expired at `at`.
func (tx *Tx) ConsumeJoinToken(id string, at time.Time) error {
	t, err := GetAs[*JoinToken](tx, KindJoinToken, id)
	if err != nil {
		return Invalid("token", "the join token is unknown or was already used", nil)
	}
	if !at.Before(t.ExpiresAt) {
		return Invalid("token", "the join token expired at "+t.ExpiresAt.Format(time.RFC3339), nil)
	}
	return tx.Remove(KindJoinToken, id)
}
