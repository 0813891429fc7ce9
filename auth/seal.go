package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// SecretBox seals small secrets (TOTP secrets, recovery codes) with
// AES-256-GCM before they enter the replicated model. The key is derived
// with HKDF from key material every node has (the cluster PKI), so every node
// can open what any node sealed; the nonce is drawn when sealing, in the API
// handler, never in the FSM. The additional data binds a sealed value to its
// owner, so it cannot be copied to another record.
type SecretBox struct {
	aead cipher.AEAD
}

// ErrSealed: a sealed value is malformed or was not sealed with this key.
var ErrSealed = errors.New("auth: sealed value cannot be opened")

// NewSecretBox derives the key for purpose from material.
func NewSecretBox(material []byte, purpose string) (*SecretBox, error) {
	if len(material) == 0 {
		return nil, errors.New("auth: secret box: no key material")
	}
	key, err := hkdf.Key(sha256.New, material, nil, "edgectl secret box: "+purpose, 32)
	if err != nil {
		return nil, fmt.Errorf("auth: secret box: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("auth: secret box: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("auth: secret box: %w", err)
	}
	return &SecretBox{aead: aead}, nil
}

// Seal encrypts plain for owner: base64url(nonce || ciphertext).
func (b *SecretBox) Seal(plain, owner string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("auth: seal: %w", err)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(owner))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a value sealed for owner.
func (b *SecretBox) Open(sealed, owner string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", ErrSealed
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(owner))
	if err != nil {
		return "", ErrSealed
	}
	return string(plain), nil
}
