package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are the Argon2id cost parameters. They are stored inside every
// hash, so raising them later leaves old hashes verifiable.
type Params struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
	SaltLen   int
	KeyLen    uint32
}

// DefaultParams is the OWASP minimum for Argon2id: 19 MiB, t=2, p=1.
var DefaultParams = Params{MemoryKiB: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}

// ErrMalformedHash: a stored hash cannot be decoded.
var ErrMalformedHash = errors.New("malformed password hash")

// Hasher hashes and verifies passwords with at most one hash per core at
// once, so a login storm queues instead of exhausting memory (19 MiB each)
// or starving the rest of the API of CPU.
type Hasher struct {
	params Params
	slots  chan struct{}
}

// NewHasher returns a Hasher with p and one slot per core.
func NewHasher(p Params) *Hasher {
	return &Hasher{params: p, slots: make(chan struct{}, runtime.NumCPU())}
}

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Hasher) release() { <-h.slots }

// Hash returns the encoded Argon2id hash of password with a fresh salt, in
// the PHC string format: $argon2id$v=19$m=...,t=...,p=...$salt$key.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, h.params.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("auth: salt: %w", err)
	}
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	p := h.params
	key := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, p.KeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether password matches the encoded hash, in constant time.
// An empty hash is checked against a dummy one, so a missing user costs the same.
func (h *Hasher) Verify(ctx context.Context, encoded, password string) (bool, error) {
	if encoded == "" {
		encoded = h.dummy()
		password += "\x00"
	}
	p, salt, key, err := decodeHash(encoded)
	if err != nil {
		return false, err
	}
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer h.release()
	got := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, p.KeyLen)
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// dummy is a valid hash with the current parameters that no password matches.
func (h *Hasher) dummy() string {
	p := h.params
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Time, p.Threads,
		b64.EncodeToString(make([]byte, p.SaltLen)), b64.EncodeToString(make([]byte, p.KeyLen)))
}

func decodeHash(s string) (Params, []byte, []byte, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return Params{}, nil, nil, ErrMalformedHash
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return Params{}, nil, nil, fmt.Errorf("%w: version", ErrMalformedHash)
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil {
		return Params{}, nil, nil, fmt.Errorf("%w: parameters", ErrMalformedHash)
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return Params{}, nil, nil, fmt.Errorf("%w: salt", ErrMalformedHash)
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) == 0 {
		return Params{}, nil, nil, fmt.Errorf("%w: key", ErrMalformedHash)
	}
	p.KeyLen = uint32(len(key))
	p.SaltLen = len(salt)
	return p, salt, key, nil
}
