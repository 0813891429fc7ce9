package controller

import (
	"context"
	"time"

	"edgectl/auth"
	"edgectl/policy"
	"edgectl/store"
)

// BootstrapRecords builds the records of conventions §9 for a new cluster
// whose PKI state (pki.State as JSON) is pkiState: the default admin is
// username with password, or with a generated password, which it returns
// (once) when password is "".
func BootstrapRecords(ctx context.Context, username, password string, pkiState []byte, now time.Time) (*store.Bootstrap, string, error) {
	generated := ""
	if password == "" {
		password = auth.NewToken()[:24]
		generated = password
	}
	hash, err := auth.NewHasher(auth.DefaultParams).Hash(ctx, password)
	if err != nil {
		return nil, "", err
	}
	base := func(id string) store.Base { return store.Base{ID: id, CreatedAt: now, UpdatedAt: now} }
	b := &store.Bootstrap{At: now, PKI: pkiState}
	for _, t := range []string{"User", "Device", "Service", "Router"} {
		b.IdentityTypes = append(b.IdentityTypes, &store.IdentityType{Base: base(t), Named: store.Named{Name: t}})
	}
	ap := &store.AuthPolicy{Base: base("default"), Named: store.Named{Name: "Default"}}
	ap.Primary.Cert.Allowed, ap.Primary.Cert.AllowExpiredCerts = true, true
	ap.Primary.ExtJwt.Allowed = true
	ap.Primary.Updb.Allowed, ap.Primary.Updb.MinPasswordLength = true, 5
	b.AuthPolicy = ap
	for _, t := range policy.CheckTypes() {
		pt := &store.PostureCheckType{Base: base(t.Name), Named: store.Named{Name: t.Name}, Version: "1", OperatingSystems: []store.OperatingSystem{}}
		for _, os := range t.OperatingSystems {
			pt.OperatingSystems = append(pt.OperatingSystems, store.OperatingSystem{Type: os, Versions: []string{}})
		}
		b.PostureCheckTypes = append(b.PostureCheckTypes, pt)
	}
	adminID := auth.NewID()
	b.Admin = &store.Identity{Base: base(adminID), Named: store.Named{Name: "Default Admin"}, TypeID: "User",
		IsAdmin: true, IsDefaultAdmin: true, AuthPolicyID: "default", DefaultHostingPrecedence: "default"}
	b.AdminAuthenticator = &store.Authenticator{Base: base(auth.NewID()), IdentityID: adminID, Method: "updb",
		Username: username, PasswordHash: hash}
	return b, generated, nil
}
