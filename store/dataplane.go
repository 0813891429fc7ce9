package store

import (
	"encoding/json"
	"time"
)

// SettingDataPlane holds the cluster's data-plane keys (DataPlaneKeys).
const SettingDataPlane = "dataPlane"

// DataPlaneKeys are the secrets every node needs to serve routers alike.
// They live in the replicated settings, next to the CA's keys (a snapshot
// is as secret as the CA it holds).
type DataPlaneKeys struct {
	// TokenKey derives API session tokens from their ids
	// (auth.DeriveAPISessionToken): any node can tell a router the token of
	// any session, while the model stores only the tokens' hashes.
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
}

// DataPlaneKeys returns the cluster's data-plane keys, or nil before they
// were made (a cluster upgraded from a release without them, until the
// upgrade step has run).
func (tx *Tx) DataPlaneKeys() *DataPlaneKeys {
	raw := tx.Setting(SettingDataPlane)
	if raw == nil {
		return nil
	}
	var k DataPlaneKeys
	if json.Unmarshal(raw, &k) != nil {
		return nil
	}
	return &k
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
