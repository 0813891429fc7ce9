package controller

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// NewDataPlaneKeys makes a cluster's data-plane keys: the API session
// token key and the service session signing key.
func NewDataPlaneKeys(at time.Time) (fsm.DataPlaneKeys, error) {
	k := store.DataPlaneKeys{TokenKey: make([]byte, 32)}
	_, _ = rand.Read(k.TokenKey)
	key, err := pki.NewNodeKey()
	if err != nil {
		return fsm.DataPlaneKeys{}, err
	}
	pemKey, err := pki.EncodeKeyPEM(key)
	if err != nil {
		return fsm.DataPlaneKeys{}, err
	}
	if k.KeyID, err = pki.KeyID(key.Public()); err != nil {
		return fsm.DataPlaneKeys{}, err
	}
	k.SigningKeyPEM = string(pemKey)
	k.TimelineID = newTimelineID()
	return fsm.DataPlaneKeys{Keys: k, At: at}, nil
}

// newTimelineID is a random id for a router data model timeline.
func newTimelineID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "tl-" + hex.EncodeToString(b)
}
