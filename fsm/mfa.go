package fsm

import (
	"time"

	"edgectl/store"
)

// Commands of authentication itself: logins, failed attempts (lockout) and
// MFA enrollments. Added, never renamed or reused.
var (
	CmdLogin       = command("authn.login", 1)
	CmdLoginFailed = command("authn.loginFailed", 1)
	// CmdLoginFailedAudit records a failed login that counts toward no
	// lockout, for the audit trail only (command version 8).
	CmdLoginFailedAudit = command("authn.loginFailedAudit", 8)
	CmdMFACreate        = command("mfa.create", 1)
	CmdMFAVerify        = command("mfa.verify", 1)
	CmdMFAAccept        = command("mfa.accept", 1)
	CmdMFARecoveryCodes = command("mfa.recoveryCodes", 1)
	CmdMFADelete        = command("mfa.delete", 1)
)

// Login is the payload of CmdLogin: the new API session, and whether the
// identity's run of failed attempts ends with it (no further factor due).
type Login struct {
	Session       *store.APISession `json:"session"`
	ResetFailures bool              `json:"resetFailures"`
}

// LoginFailed is the payload of CmdLoginFailed.
type LoginFailed struct {
	IdentityID string    `json:"identityId"`
	At         time.Time `json:"at"`
	// Method and Reason describe the failure for its event.
	Method string `json:"method,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// MFARecoveryCodes is the payload of CmdMFARecoveryCodes: the code that
// authorized the change and the new codes.
type MFARecoveryCodes struct {
	Use   store.MFAUse         `json:"use"`
	Codes []store.RecoveryCode `json:"codes"`
}

// MFADelete is the payload of CmdMFADelete.
type MFADelete struct {
	IdentityID string `json:"identityId"`
	// OnlyUnverified refuses a verified enrollment (the owner sent no code).
	OnlyUnverified bool `json:"onlyUnverified"`
}

func registerMFA(f *FSM) {
	on(f, CmdLogin, func(tx *store.Tx, p *Login) (any, error) { return nil, tx.Login(p.Session, p.ResetFailures) })
	on(f, CmdLoginFailed, func(tx *store.Tx, p *LoginFailed) (any, error) {
		r, err := tx.RecordLoginFailure(p.IdentityID, p.At)
		if err != nil || r == nil {
			return r, err
		}
		return &loginFailedResult{LoginFailed: *r, payload: *p}, nil
	})
	on(f, CmdLoginFailedAudit, func(tx *store.Tx, p *LoginFailed) (any, error) {
		if !tx.Exists(store.KindIdentity, p.IdentityID) {
			return nil, nil // deleted meanwhile: nothing to say of it
		}
		return &loginFailedResult{payload: *p}, nil
	})
	on(f, CmdMFACreate, func(tx *store.Tx, m *store.MFA) (any, error) { return nil, tx.CreateMFA(m) })
	on(f, CmdMFAVerify, func(tx *store.Tx, u *store.MFAUse) (any, error) { return nil, tx.VerifyMFA(u) })
	on(f, CmdMFAAccept, func(tx *store.Tx, u *store.MFAUse) (any, error) { return nil, tx.AcceptMFACode(u) })
	on(f, CmdMFARecoveryCodes, func(tx *store.Tx, p *MFARecoveryCodes) (any, error) {
		return nil, tx.ReplaceRecoveryCodes(&p.Use, p.Codes)
	})
	on(f, CmdMFADelete, func(tx *store.Tx, p *MFADelete) (any, error) {
		return nil, tx.DeleteMFA(p.IdentityID, p.OnlyUnverified)
	})
}

// loginFailedResult is what CmdLoginFailed's handler returns: the outcome
// for the proposer (encoded as store.LoginFailed) and the payload for the
// command's events.
type loginFailedResult struct {
	store.LoginFailed
	payload LoginFailed
}
