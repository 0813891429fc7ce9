package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// NewToken returns 256 random bits, URL-safe base64 without padding.
func NewToken() string {
	b := make([]byte, 32)
	// crypto/rand.Read never fails on supported platforms (it panics rather than return short).
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashToken is the SHA-256 (hex) under which a token is stored and looked up.
// Lookup by hash then needs no constant-time compare of secrets: the hash
// index is keyed by a value an attacker cannot steer toward a stored one.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// NewID returns a random opaque record id: 96 random bits, URL-safe base64,
// never beginning with '-', which command lines (edgectl's, ziti's, shells'
// tools) would take for an option: one id in 64 did, and
// `edgectl get identity -Xf-...` failed with "unknown shorthand flag".
func NewID() string {
	b := make([]byte, 12)
	for {
		_, _ = rand.Read(b)
		if id := base64.RawURLEncoding.EncodeToString(b); id[0] != '-' {
			return id
		}
	}
}
