package fsm

import (
	"time"

	"edgectl/store"
)

// Identity commands, with the identity's own authenticators. Added, never renamed or reused.
var (
	CmdIdentityCreate        = command("identity.create", 1)
	CmdIdentityUpdate        = command("identity.update", 1)
	CmdIdentityDelete        = command("identity.delete", 1)
	CmdIdentityDisable       = command("identity.disable", 1)
	CmdIdentityEnable        = command("identity.enable", 1)
	CmdIdentityTrace         = command("identity.trace", 1)
	CmdAuthenticatorCreate   = command("authenticator.create", 1)
	CmdAuthenticatorPassword = command("authenticator.password", 1)
)

// IdentityCreate is the payload of CmdIdentityCreate.
type IdentityCreate struct {
	Identity       *store.Identity        `json:"identity"`
	Enrollments    []*store.Enrollment    `json:"enrollments"`
	Authenticators []*store.Authenticator `json:"authenticators"`
}

// Disable is the payload of CmdIdentityDisable and CmdIdentityEnable.
type Disable struct {
	ID    string     `json:"id"`
	At    time.Time  `json:"at"`
	Until *time.Time `json:"until"`
}

// Trace is the payload of CmdIdentityTrace.
type Trace struct {
	ID   string           `json:"id"`
	Spec *store.TraceSpec `json:"spec"`
	At   time.Time        `json:"at"`
}

// SetPassword is the payload of CmdAuthenticatorPassword.
type SetPassword struct {
	ID       string    `json:"id"`
	Username string    `json:"username"`
	Hash     string    `json:"hash"`
	At       time.Time `json:"at"`
}

func registerIdentities(f *FSM) {
	on(f, CmdIdentityCreate, func(tx *store.Tx, p *IdentityCreate) (any, error) {
		return nil, tx.CreateIdentity(p.Identity, p.Enrollments, p.Authenticators)
	})
	on(f, CmdIdentityUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateIdentity(p.ID, p.Patch, p.At)
	})
	on(f, CmdIdentityDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteIdentity(p.ID)
	})
	on(f, CmdIdentityDisable, func(tx *store.Tx, p *Disable) (any, error) {
		return nil, tx.DisableIdentity(p.ID, p.At, p.Until)
	})
	on(f, CmdIdentityEnable, func(tx *store.Tx, p *Disable) (any, error) {
		return nil, tx.EnableIdentity(p.ID, p.At)
	})
	on(f, CmdIdentityTrace, func(tx *store.Tx, p *Trace) (any, error) {
		return nil, tx.SetTrace(p.ID, p.Spec, p.At)
	})
	on(f, CmdAuthenticatorCreate, func(tx *store.Tx, a *store.Authenticator) (any, error) {
		return nil, tx.CreateAuthenticator(a)
	})
	on(f, CmdAuthenticatorPassword, func(tx *store.Tx, p *SetPassword) (any, error) {
		return nil, tx.SetPassword(p.ID, p.Username, p.Hash, p.At)
	})
}
