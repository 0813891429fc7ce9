package store

import (
	"encoding/json"
	"slices"
	"time"
)

// SettingDataPlane holds the cluster's data-plane keys (DataPlaneKeys).
const SettingDataPlane = "dataPlane"

// DataPlaneKeys are the secrets every node needs to serve routers alike.
// They live in the replicated settings, next to the CA's keys (a snapshot
// is as secret as the CA it holds).
type DataPlaneKeys struct {
	// TokenKey is the seed of the key that signs API session tokens, JWTs
	// routers verify (auth.APISessionSigningKey): every node signs and
	// routers get its public key, while the model stores only the tokens'
	// hashes.
	TokenKey []byte `json:"tokenKey"`
	// SigningKeyPEM is the key (PKCS#8 PEM, ECDSA P-256) that signs the
	// service session JWTs routers verify; routers get its public key, with
	// KeyID, in the router data model.
	SigningKeyPEM string `json:"signingKeyPem"`
	KeyID         string `json:"kid"`
	// TimelineID names the history of the router data model's indexes (the
	// Raft indexes): routers keep it with their index, and a router on
	// another timeline gets the full state. A cluster restored from a
	// backup gets a new one (its indexes are another history).
	TimelineID string `json:"timelineId"`
	// KeyActivatedAt is when SigningKeyPEM became the signing key (zero for
	// the key the cluster was made with), and Previous the key it replaced,
	// still trusted by routers and nodes until the next rotation
	// (RotateSessionKey).
	KeyActivatedAt time.Time  `json:"keyActivatedAt,omitzero"`
	Previous       *VerifyKey `json:"previous,omitempty"`
}

// VerifyKey is a retired session signing key that still verifies: its key
// id and its public key (PKIX DER).
type VerifyKey struct {
	KeyID       string    `json:"kid"`
	PublicKey   []byte    `json:"publicKey"`
	ActivatedAt time.Time `json:"activatedAt,omitzero"`
}

// SessionKeyRotation is a new session signing key: FromKeyID names the key
// the proposer saw as current (so two rotations at once cannot both pass),
// FromPublicKey is that key's public key (PKIX DER).
type SessionKeyRotation struct {
	SigningKeyPEM string `json:"signingKeyPem"`
	KeyID         string `json:"kid"`
	FromKeyID     string `json:"fromKid"`
	FromPublicKey []byte `json:"fromPublicKey"`
}

// RotateSessionKey makes r's key the session signing key at the command's
// time: the key it replaces becomes the previous one (routers and nodes
// still accept the sessions it signed), and the previous one is retired,
// ending the sessions it signed: those made before the replaced key became
// current. It returns the ids of the sessions it ended, sorted.
func (tx *Tx) RotateSessionKey(r *SessionKeyRotation) ([]string, error) {
	k := tx.DataPlaneKeys()
	if k == nil {
		return nil, Invalid("keys", "the cluster has no session signing key yet (its upgrade step has not run)", nil)
	}
	if r.SigningKeyPEM == "" || r.KeyID == "" || len(r.FromPublicKey) == 0 {
		return nil, Invalid("key", "a rotation needs the new key, its key id and the replaced key's public key", nil)
	}
	if r.FromKeyID != k.KeyID {
		return nil, Conflict("kid", r.FromKeyID, "the session signing key is no longer %s: it was rotated at the same time; try again", r.FromKeyID)
	}
	if r.KeyID == k.KeyID || (k.Previous != nil && r.KeyID == k.Previous.KeyID) {
		return nil, Invalid("kid", "a new key needs a new key id", r.KeyID)
	}
	cutoff := k.KeyActivatedAt
	var ended []string
	if k.Previous != nil {
		tx.Each(KindSession, "id", func(rec Record) bool {
			if s := rec.(*Session); s.CreatedAt.Before(cutoff) {
				ended = append(ended, s.ID)
			}
			return true
		})
	}
	slices.Sort(ended)
	for _, id := range ended {
		if err := tx.Remove(KindSession, id); err != nil {
			return nil, err
		}
	}
	next := *k
	next.Previous = &VerifyKey{KeyID: k.KeyID, PublicKey: r.FromPublicKey, ActivatedAt: k.KeyActivatedAt}
	next.SigningKeyPEM, next.KeyID, next.KeyActivatedAt = r.SigningKeyPEM, r.KeyID, tx.at
	raw, err := json.Marshal(&next)
	if err != nil {
		return nil, err
	}
	old, err := GetAs[*Setting](tx, KindSetting, SettingDataPlane)
	if err != nil {
		return nil, err
	}
	return ended, tx.Upsert(KindSetting, &Setting{Base: Base{ID: SettingDataPlane, CreatedAt: old.CreatedAt, UpdatedAt: tx.at}, Value: raw})
}

// DataPlaneKeys returns the cluster's data-plane keys, or nil before they
// were made (a cluster upgraded from a release without them, until the
// upgrade step has run).
// Every dial and session reads them: the decoded setting is cached by the
// stored value it came from (a setting is replaced, never changed in
// place), and callers must not change what it returns.
func (tx *Tx) DataPlaneKeys() *DataPlaneKeys {
	raw := tx.Setting(SettingDataPlane)
	if len(raw) == 0 {
		return nil
	}
	if c := tx.s.dataPlane.Load(); c != nil && len(c.raw) == len(raw) && &c.raw[0] == &raw[0] {
		return c.keys
	}
	var k DataPlaneKeys
	if json.Unmarshal(raw, &k) != nil {
		return nil
	}
	tx.s.dataPlane.Store(&dataPlaneCache{raw: raw, keys: &k})
	return &k
}

type dataPlaneCache struct {
	raw  []byte
	keys *DataPlaneKeys
}

// EnsureDataPlaneKeys stores k unless the cluster has its keys already
// (the first proposal wins; later ones change nothing).
func (tx *Tx) EnsureDataPlaneKeys(k *DataPlaneKeys, at time.Time) error {
	if tx.Exists(KindSetting, SettingDataPlane) {
		return nil
	}
	if len(k.TokenKey) < 32 || k.SigningKeyPEM == "" || k.KeyID == "" || k.TimelineID == "" {
		return Invalid("keys", "data-plane keys need a token key of at least 32 bytes, a signing key, its key id and a timeline id", nil)
	}
	raw, err := json.Marshal(k)
	if err != nil {
		return err
	}
	return tx.Upsert(KindSetting, &Setting{Base: Base{ID: SettingDataPlane, CreatedAt: at, UpdatedAt: at}, Value: raw})
}
