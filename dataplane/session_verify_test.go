package dataplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"testing"
	"time"

	"edgectl/pki"
	"edgectl/store"
)

// A service session token is verified once per signing key: dialed again,
// its claims come from the verifier's memory, its expiry is checked again,
// and when the keys change a token of a key no longer trusted is refused.
func TestSessionVerifier_KeepsWhatItVerifiedUntilTheKeysChange(t *testing.T) {
	newKeys := func(kid string) (*ecdsa.PrivateKey, *store.DataPlaneKeys) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pem, err := pki.EncodeKeyPEM(key)
		if err != nil {
			t.Fatal(err)
		}
		return key, &store.DataPlaneKeys{SigningKeyPEM: string(pem), KeyID: kid}
	}
	key1, keys1 := newKeys("k1")
	now := time.Now()
	token, err := pki.SignServiceAccess(key1, "k1", pki.ServiceAccess{ServiceID: "svc", SessionID: "s1", APISessionID: "a1",
		IdentityID: "i1", Type: "Dial", IssuedAt: now, ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var v sessionVerifier
	verify := func(k *store.DataPlaneKeys, at time.Time) (*pki.ServiceAccess, error) {
		trusted, err := v.trusted(k)
		if err != nil {
			t.Fatal(err)
		}
		return v.verify(trusted, token, at)
	}
	first, err := verify(keys1, now)
	if err != nil || first.SessionID != "s1" {
		t.Fatalf("first verify: %+v, %v", first, err)
	}
	again, err := verify(keys1, now.Add(time.Minute))
	if err != nil || again != first {
		t.Fatalf("verified again: %p %v, want the kept claims %p", again, err, first)
	}
	if _, err := verify(keys1, now.Add(2*time.Hour)); err == nil {
		t.Fatal("a kept token past its expiry was taken")
	}
	// A rotation keeps trusting the previous key; a second one does not.
	_, keys2 := newKeys("k2")
	pub1, err := x509.MarshalPKIXPublicKey(key1.Public())
	if err != nil {
		t.Fatal(err)
	}
	keys2.Previous = &store.VerifyKey{KeyID: "k1", PublicKey: pub1}
	if c, err := verify(keys2, now.Add(time.Minute)); err != nil || c == first {
		t.Fatalf("after a rotation: %p %v; want the token verified again with the new keys", c, err)
	}
	_, keys3 := newKeys("k3")
	if _, err := verify(keys3, now.Add(time.Minute)); err == nil {
		t.Fatal("a token of a key no longer trusted was taken from what was verified before")
	}
}
