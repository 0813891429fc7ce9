package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A password hash verifies the password it was made from and no other; the
// same password hashes differently each time (a salt); a hash that is not
// ours, and the empty hash (an unknown username), verify nothing; a request
// that ends while it waits for a hashing slot gives up.
func TestHasher(t *testing.T) {
	h := NewHasher(Params{MemoryKiB: 1024, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})
	ctx := context.Background()
	a, err := h.Hash(ctx, "Right-pass-1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := h.Hash(ctx, "Right-pass-1")
	if a == b || !strings.HasPrefix(a, "$argon2id$") {
		t.Fatalf("two hashes of one password: %q %q", a, b)
	}
	for _, c := range []struct {
		hash, password string
		want           bool
	}{{a, "Right-pass-1", true}, {a, "Wrong-pass-1", false}, {a, "right-pass-1", false}, {"", "Right-pass-1", false},
		{"$argon2id$v=19$m=1024,t=1,p=1$garbage", "Right-pass-1", false}} {
		if ok, _ := h.Verify(ctx, c.hash, c.password); ok != c.want {
			t.Errorf("Verify(%.20q, %q) = %v, want %v", c.hash, c.password, ok, c.want)
		}
	}
	// Hashing takes a slot (one per CPU): a request that ends while it waits
	// for one gives up.
	for range cap(h.slots) {
		h.slots <- struct{}{}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.Hash(done, "Right-pass-1"); !errors.Is(err, context.Canceled) {
		t.Errorf("a request that ended while every slot was busy: %v", err)
	}
	for range cap(h.slots) {
		<-h.slots
	}
}

// A sealed secret opens with the same key material, purpose and owner only:
// moved to another record (owner) or another purpose, or changed, it does not.
func TestSecretBox(t *testing.T) {
	box, err := NewSecretBox([]byte("the cluster's root key"), "totp")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := box.Seal("JBSWY3DPEHPK3PXP", "identity-1")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := box.Seal("JBSWY3DPEHPK3PXP", "identity-1")
	if sealed == again || strings.Contains(sealed, "JBSWY3DPEHPK3PXP") {
		t.Fatalf("sealed values %q %q", sealed, again)
	}
	if plain, err := box.Open(sealed, "identity-1"); err != nil || plain != "JBSWY3DPEHPK3PXP" {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	other, _ := NewSecretBox([]byte("the cluster's root key"), "recovery")
	otherKey, _ := NewSecretBox([]byte("another root key"), "totp")
	tampered := sealed[:len(sealed)-2] + "AA"
	for what, open := range map[string]func() (string, error){
		"another owner":   func() (string, error) { return box.Open(sealed, "identity-2") },
		"another purpose": func() (string, error) { return other.Open(sealed, "identity-1") },
		"another key":     func() (string, error) { return otherKey.Open(sealed, "identity-1") },
		"changed":         func() (string, error) { return box.Open(tampered, "identity-1") },
		"not base64":      func() (string, error) { return box.Open("%%%", "identity-1") },
		"too short":       func() (string, error) { return box.Open("AAAA", "identity-1") },
	} {
		if _, err := open(); !errors.Is(err, ErrSealed) {
			t.Errorf("%s: %v, want ErrSealed", what, err)
		}
	}
	if _, err := NewSecretBox(nil, "totp"); err == nil {
		t.Error("a secret box without key material")
	}
}
