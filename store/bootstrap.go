package store

import "time"

// Setting ids of the singletons.
const (
	SettingBootstrapped = "bootstrapped"
	SettingPKI          = "pki"
	SettingDefaultAdmin = "defaultAdmin"
)

// Bootstrap is the set of records a new cluster starts with (conventions §9).
type Bootstrap struct {
	At                 time.Time           `json:"at"`
	PKI                []byte              `json:"pki"`
	IdentityTypes      []*IdentityType     `json:"identityTypes"`
	AuthPolicy         *AuthPolicy         `json:"authPolicy"`
	PostureCheckTypes  []*PostureCheckType `json:"postureCheckTypes"`
	Admin              *Identity           `json:"admin"`
	AdminAuthenticator *Authenticator      `json:"adminAuthenticator"`
}

// Bootstrapped reports whether the bootstrap records were applied.
func (tx *Tx) Bootstrapped() bool { return tx.Exists(KindSetting, SettingBootstrapped) }

// Setting returns the value of a singleton, or nil.
func (tx *Tx) Setting(id string) []byte {
	r := tx.First(KindSetting, "id", id)
	if r == nil {
		return nil
	}
	return r.(*Setting).Value
}

// ApplyBootstrap stores the bootstrap records once; a second bootstrap is a conflict.
func (tx *Tx) ApplyBootstrap(b *Bootstrap) error {
	if tx.Bootstrapped() {
		return Conflict("", nil, "the cluster is already bootstrapped")
	}
	if err := tx.Upsert(KindSetting, &Setting{Base: Base{ID: SettingPKI, CreatedAt: b.At, UpdatedAt: b.At}, Value: b.PKI}); err != nil {
		return err
	}
	for _, t := range b.IdentityTypes {
		if err := tx.Insert(KindIdentityType, t); err != nil {
			return err
		}
	}
	if err := tx.Insert(KindAuthPolicy, b.AuthPolicy); err != nil {
		return err
	}
	for _, t := range b.PostureCheckTypes {
		if err := tx.Insert(KindPostureCheckType, t); err != nil {
			return err
		}
	}
	if err := tx.CreateIdentity(b.Admin, nil, []*Authenticator{b.AdminAuthenticator}); err != nil {
		return err
	}
	if err := tx.Upsert(KindSetting, &Setting{Base: Base{ID: SettingDefaultAdmin, CreatedAt: b.At, UpdatedAt: b.At}, Value: []byte(b.Admin.ID)}); err != nil {
		return err
	}
	return tx.Upsert(KindSetting, &Setting{Base: Base{ID: SettingBootstrapped, CreatedAt: b.At, UpdatedAt: b.At}, Value: []byte("true")})
}
