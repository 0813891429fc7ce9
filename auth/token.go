package auth

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"time"
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

// Record ids: 18 characters of the URL-safe alphabet, in ASCII order, so
// that ids sort as strings in the order they were made (on one clock).
//
//   - the first 7 carry the millisecond the id was made: the time since the
//     Unix epoch modulo 63·2^36 ms (137 years), the first character from the
//     63 that are not '-', so that no id begins with '-', which command lines
//     (edgectl's, ziti's, shells' tools) would take for an option;
//   - the other 11 are random: 66 bits.
//
// Why time first: the store keeps every table's ids (and the keys that end in
// an id, as the name and policy indexes do) in radix trees whose changes copy
// the path from the root. Ids made one after the other share a prefix, so the
// records of one batch of writes share that path instead of each copying its
// own; an identity create costs the FSM of every node a quarter (batches of
// 16, 68 → 51 µs) to nearly half (batches of 5) less than with ids that are
// random from their first character (docs/performance-history.md, Issue 16, part 9).
// Random ids did no other job: ids are not secrets, tokens are.
const (
	idAlphabet   = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
	idLen        = 18
	idTimeChars  = 7
	idTimeWindow = 63 << 36 // ms: the first character takes 63 values, the next six 2^36
)

// NewID returns a new record id (see idAlphabet).
func NewID() string { return newIDAt(time.Now()) }

func newIDAt(now time.Time) string {
	var b [idLen]byte
	ms := uint64(now.UnixMilli()) % idTimeWindow
	b[0] = idAlphabet[1+ms>>36]
	for i := idTimeChars - 1; i >= 1; i-- {
		b[i] = idAlphabet[ms&63]
		ms >>= 6
	}
	var r [9]byte
	// crypto/rand.Read never fails on supported platforms (it panics rather than return short).
	_, _ = rand.Read(r[:])
	bits := binary.BigEndian.Uint64(r[:8]) // ten characters of 6 bits, and one from r[8]
	for i := idTimeChars; i < idLen-1; i++ {
		b[i] = idAlphabet[bits>>58]
		bits <<= 6
	}
	b[idLen-1] = idAlphabet[r[8]&63]
	return string(b[:])
}

// APISessionSigningKey is the key that signs API session tokens as JWTs
// (pki.SignAPIAccess) in a cluster whose data-plane token key is key: an
// Ed25519 key whose seed is derived from the token key, so that every node
// has it without another replicated secret, and routers get its public key
// in their data model. Unlike the service session key it is not rotated
// (docs/architecture.md): an API session lasts as long as its client is
// active, and nodes still check every API session token against the model
// before a circuit or a terminator is made.
func APISessionSigningKey(key []byte) ed25519.PrivateKey {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("edgectl api session signing key\x00"))
	return ed25519.NewKeyFromSeed(m.Sum(nil))
}
