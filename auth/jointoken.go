package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
)

// joinTokenPrefix marks edgectl join tokens, so a pasted value of another kind fails clearly.
const joinTokenPrefix = "edgectl-join."

// JoinToken is what `edgectl cluster join-token` prints: a one-use secret,
// the fingerprint of the cluster's root CA (so the new node trusts the cluster
// it reaches without trust on first use), and the API URLs of the cluster.
type JoinToken struct {
	Secret        string   `json:"s"`
	CAFingerprint string   `json:"f"`
	URLs          []string `json:"u,omitempty"`
}

// ErrBadJoinToken: the value is not a join token.
var ErrBadJoinToken = errors.New("not an edgectl join token")

// Encode returns the printable token.
func (t *JoinToken) Encode() string {
	raw, _ := json.Marshal(t)
	return joinTokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
}

// ID is the id under which the token is stored: the SHA-256 of its secret.
func (t *JoinToken) ID() string {
	h := sha256.Sum256([]byte(t.Secret))
	return hex.EncodeToString(h[:])
}

// DecodeJoinToken parses a printed token.
func DecodeJoinToken(s string) (*JoinToken, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, joinTokenPrefix) {
		return nil, ErrBadJoinToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(s[len(joinTokenPrefix):])
	if err != nil {
		return nil, ErrBadJoinToken
	}
	var t JoinToken
	if err := json.Unmarshal(raw, &t); err != nil || t.Secret == "" || len(t.CAFingerprint) != 64 {
		return nil, ErrBadJoinToken
	}
	return &t, nil
}

// CAFingerprint is the SHA-256 (hex) of a CA certificate's DER, as join tokens carry it.
func CAFingerprint(der []byte) string {
	h := sha256.Sum256(der)
	return hex.EncodeToString(h[:])
}
