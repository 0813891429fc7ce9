package store

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// A session key rotation keeps the replaced key as the previous one and
// retires the one before, ending the sessions made before the replaced key
// became current; a rotation from a key that is no longer current, or to a
// key id already trusted, changes nothing.
func TestDataPlane_RotatingTheSessionKeyRetiresTheKeyBeforeTheReplacedOne(t *testing.T) {
	s := New()
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	session := func(id string, sec int) {
		mustWrite(t, s, func(tx *Tx) error {
			return tx.Insert(KindSession, &Session{Base: Base{ID: id, CreatedAt: at(sec)}, IdentityID: "i", ServiceID: "s", Type: "Dial"})
		})
	}
	rotate := func(sec int, r SessionKeyRotation) ([]string, error) {
		tx := s.Write()
		tx.SetTime(at(sec))
		ended, err := tx.RotateSessionKey(&r)
		if err != nil {
			tx.Abort()
			return nil, err
		}
		tx.Commit()
		return ended, nil
	}
	if _, err := rotate(0, SessionKeyRotation{SigningKeyPEM: "k2", KeyID: "k2", FromKeyID: "k1", FromPublicKey: []byte("p1")}); err == nil {
		t.Fatal("a rotation without keys passed")
	}
	mustWrite(t, s, func(tx *Tx) error {
		return tx.EnsureDataPlaneKeys(&DataPlaneKeys{TokenKey: make([]byte, 32), SigningKeyPEM: "k1", KeyID: "k1", TimelineID: "tl"}, at(0))
	})
	session("a", 1) // signed by k1
	if ended, err := rotate(2, SessionKeyRotation{SigningKeyPEM: "k2", KeyID: "k2", FromKeyID: "k1", FromPublicKey: []byte("p1")}); err != nil || len(ended) != 0 {
		t.Fatalf("first rotation: %v %v", ended, err)
	}
	session("b", 3) // signed by k2
	var conflict *Error
	if _, err := rotate(4, SessionKeyRotation{SigningKeyPEM: "k3", KeyID: "k3", FromKeyID: "k1", FromPublicKey: []byte("p1")}); !errors.As(err, &conflict) {
		t.Fatalf("a rotation from the replaced key: %v", err)
	}
	if _, err := rotate(4, SessionKeyRotation{SigningKeyPEM: "k1", KeyID: "k1", FromKeyID: "k2", FromPublicKey: []byte("p2")}); err == nil {
		t.Fatal("a rotation back to the previous key id passed")
	}
	ended, err := rotate(5, SessionKeyRotation{SigningKeyPEM: "k3", KeyID: "k3", FromKeyID: "k2", FromPublicKey: []byte("p2")})
	if err != nil || !slices.Equal(ended, []string{"a"}) {
		t.Fatalf("second rotation ended %v (%v), want [a]", ended, err)
	}
	tx := s.Read()
	k := tx.DataPlaneKeys()
	if k.KeyID != "k3" || !k.KeyActivatedAt.Equal(at(5)) || k.Previous == nil || k.Previous.KeyID != "k2" ||
		string(k.Previous.PublicKey) != "p2" || !k.Previous.ActivatedAt.Equal(at(2)) || string(k.TokenKey) != string(make([]byte, 32)) {
		t.Fatalf("keys after two rotations: %+v", k)
	}
	if tx.Exists(KindSession, "a") || !tx.Exists(KindSession, "b") {
		t.Fatal("the sessions of the retired key and of the kept key")
	}
}
