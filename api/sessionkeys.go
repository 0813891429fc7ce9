package api

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"time"

	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// Session signing keys. Service sessions are JWTs signed by the cluster's
// session key (pki.SignServiceAccess); routers verify them with the public
// keys of the router data model. An administrator rotates the key: the new
// key signs every session made from then on, the replaced one keeps
// verifying the sessions it signed, and the key before it is retired,
// ending the sessions it signed (store.RotateSessionKey). Two rotations
// apart, then, every session in use was signed by a key routers trust.

// sessionKeyView is one trusted key: the current one signs, the previous
// one only verifies.
func sessionKeyView(kid string, public []byte, current bool, activatedAt time.Time) map[string]any {
	v := map[string]any{
		"kid":          kid,
		"current":      current,
		"publicKeyPem": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: public})),
		"activatedAt":  nil,
	}
	if !activatedAt.IsZero() {
		v["activatedAt"] = activatedAt.UTC().Format(time.RFC3339Nano)
	}
	return v
}

// sessionKeys lists the keys routers trust for service sessions, the
// current one first.
func sessionKeys(tx *store.Tx) ([]map[string]any, error) {
	k := tx.DataPlaneKeys()
	if k == nil {
		return []map[string]any{}, nil
	}
	signer, err := pki.ParseKeyPEM([]byte(k.SigningKeyPEM))
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(signer.Public())
	if err != nil {
		return nil, err
	}
	out := []map[string]any{sessionKeyView(k.KeyID, der, true, k.KeyActivatedAt)}
	if p := k.Previous; p != nil {
		out = append(out, sessionKeyView(p.KeyID, p.PublicKey, false, p.ActivatedAt))
	}
	return out, nil
}

func (s *Server) listSessionKeys(c *call) error {
	keys, err := sessionKeys(c.tx)
	if err != nil {
		return err
	}
	c.write(200, map[string]any{"data": keys, "meta": meta(nil)})
	return nil
}

// rotateSessionKey makes a new session signing key and proposes it; the
// answer names the new key, the replaced one and the sessions that ended.
func (s *Server) rotateSessionKey(c *call) error {
	k := c.tx.DataPlaneKeys()
	if k == nil {
		return store.Invalid("keys", "the cluster has no session signing key yet (its upgrade step has not run)", nil)
	}
	current, err := pki.ParseKeyPEM([]byte(k.SigningKeyPEM))
	if err != nil {
		return err
	}
	from, err := x509.MarshalPKIXPublicKey(current.Public())
	if err != nil {
		return err
	}
	key, err := pki.NewNodeKey()
	if err != nil {
		return err
	}
	pemKey, err := pki.EncodeKeyPEM(key)
	if err != nil {
		return err
	}
	kid, err := pki.KeyID(key.Public())
	if err != nil {
		return err
	}
	raw, err := s.Writer.Do(c.r.Context(), fsm.CmdSessionKeyRotate, store.SessionKeyRotation{
		SigningKeyPEM: string(pemKey), KeyID: kid, FromKeyID: k.KeyID, FromPublicKey: from})
	if err != nil {
		return err
	}
	var ended []string
	_ = json.Unmarshal(raw, &ended)
	c.ok(map[string]any{"kid": kid, "previousKid": k.KeyID, "sessionsEnded": len(ended)})
	return nil
}

func (s *Server) sessionKeyRoutes() []route {
	return []route{
		{managementAPI, get, "/session-signing-keys", "listSessionSigningKeys", "Session", admin, s.listSessionKeys},
		{managementAPI, post, "/session-signing-keys/rotate", "rotateSessionSigningKey", "Session", admin, s.rotateSessionKey},
	}
}
