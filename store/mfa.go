package store

import (
	"time"

	"github.com/hashicorp/go-memdb"
)

// MFA is the TOTP enrollment of an identity (one at most). The secret and
// the recovery codes are sealed by the API (AES-GCM under a key derived from
// the cluster PKI) before they are proposed; the model never holds them in
// clear and never decides whether a code is good: it records what the API
// accepted, so a code or a recovery code works once on every node.
type MFA struct {
	Base
	IdentityID string `json:"identityId"`
	IsVerified bool   `json:"isVerified"`
	// SecretSealed is the sealed TOTP secret (base32 text once opened).
	SecretSealed string `json:"secretSealed"`
	// RecoveryCodes are the unused recovery codes.
	RecoveryCodes []RecoveryCode `json:"recoveryCodes"`
	// LastStep is the TOTP time step (Unix time / 30 s) of the last code
	// accepted: a code of that step or an earlier one is a replay.
	LastStep int64 `json:"lastStep"`
}

// RecoveryCode is one unused recovery code: its hash, which decides a match,
// and the sealed code, which the owner may view with a valid TOTP code.
type RecoveryCode struct {
	Hash   string `json:"hash"`
	Sealed string `json:"sealed"`
}

// KindMFA holds the MFA enrollments, one per identity.
var KindMFA = &Kind{Table: "mfas", Entity: "MFA",
	new:     func() Record { return &MFA{} },
	indexes: []*memdb.IndexSchema{strIndex("identity", "IdentityID")},
	Fields:  baseFields(nil)}

// MFAOf returns the MFA enrollment of an identity, or nil.
func (tx *Tx) MFAOf(identityID string) *MFA {
	r := tx.First(KindMFA, "identity", identityID)
	if r == nil {
		return nil
	}
	return r.(*MFA)
}

// CreateMFA starts an MFA enrollment. An unverified enrollment of the
// identity is replaced (the client lost the first QR code); a verified one is
// a conflict: it must be removed first.
func (tx *Tx) CreateMFA(m *MFA) error {
	if !tx.Exists(KindIdentity, m.IdentityID) {
		return Invalid("identityId", "no identity with this id", m.IdentityID)
	}
	if old := tx.MFAOf(m.IdentityID); old != nil {
		if old.IsVerified {
			return Conflict("isVerified", true, "the identity already has a verified MFA enrollment: remove it first")
		}
		if err := tx.Remove(KindMFA, old.ID); err != nil {
			return err
		}
	}
	m.IsVerified, m.LastStep = false, 0
	return tx.Insert(KindMFA, m)
}

// MFAUse is a code the API accepted: a TOTP code of Step, or the recovery
// code whose hash is RecoveryHash. SessionID, when set, is the API session
// that the code completes (isMfaComplete, lastMfaAt).
type MFAUse struct {
	IdentityID   string    `json:"identityId"`
	Step         int64     `json:"step,omitempty"`
	RecoveryHash string    `json:"recoveryHash,omitempty"`
	SessionID    string    `json:"sessionId,omitempty"`
	At           time.Time `json:"at"`
}

// consume records the use of a code on m (a copy is returned): a TOTP step
// must be later than the last accepted one, a recovery code must still be
// unused and is removed. Both checks happen here, in log order, so two nodes
// accepting the same code at once still let only one use through.
func (tx *Tx) consume(u *MFAUse) (*MFA, error) {
	m := tx.MFAOf(u.IdentityID)
	if m == nil {
		return nil, NotFound(KindMFA.Entity, u.IdentityID)
	}
	n := *m
	switch {
	case u.RecoveryHash != "":
		kept := make([]RecoveryCode, 0, len(m.RecoveryCodes))
		for _, c := range m.RecoveryCodes {
			if c.Hash != u.RecoveryHash {
				kept = append(kept, c)
			}
		}
		if len(kept) == len(m.RecoveryCodes) {
			return nil, Invalid("code", "the recovery code was already used", nil)
		}
		n.RecoveryCodes = kept
	case u.Step > m.LastStep:
		n.LastStep = u.Step
	default:
		return nil, Invalid("code", "the code was already used", nil)
	}
	n.UpdatedAt = u.At
	return &n, nil
}

// AcceptMFACode records an accepted TOTP or recovery code of a verified
// enrollment and, when the use names an API session, completes it: the MFA
// auth query is answered, isMfaComplete is true and lastMfaAt moves. An
// accepted code also ends a run of failed attempts of the identity.
func (tx *Tx) AcceptMFACode(u *MFAUse) error {
	n, err := tx.consume(u)
	if err != nil {
		return err
	}
	if !n.IsVerified {
		return Invalid("code", "the MFA enrollment is not verified yet", nil)
	}
	if err := tx.Replace(KindMFA, n); err != nil {
		return err
	}
	return tx.completeSessionMFA(u)
}

// VerifyMFA completes an enrollment with its first TOTP code; the session
// that verified it counts as having passed MFA.
func (tx *Tx) VerifyMFA(u *MFAUse) error {
	m := tx.MFAOf(u.IdentityID)
	if m == nil {
		return NotFound(KindMFA.Entity, u.IdentityID)
	}
	if m.IsVerified {
		return Conflict("isVerified", true, "the MFA enrollment is already verified")
	}
	if u.RecoveryHash != "" {
		return Invalid("code", "an enrollment is verified with a TOTP code, not a recovery code", nil)
	}
	n, err := tx.consume(u)
	if err != nil {
		return err
	}
	n.IsVerified = true
	if err := tx.Replace(KindMFA, n); err != nil {
		return err
	}
	return tx.completeSessionMFA(u)
}

func (tx *Tx) completeSessionMFA(u *MFAUse) error {
	if err := tx.resetLoginFailures(u.IdentityID); err != nil {
		return err
	}
	if u.SessionID == "" {
		return nil
	}
	s, err := GetAs[*APISession](tx, KindAPISession, u.SessionID)
	if err != nil || s.IdentityID != u.IdentityID {
		// The session ended meanwhile: the code is used up all the same.
		return nil
	}
	n := *s
	n.IsMfaComplete = true
	at := u.At
	n.LastMfaAt = &at
	n.AuthQueries = nil
	for _, q := range s.AuthQueries {
		if q.TypeID != AuthQueryMFA {
			n.AuthQueries = append(n.AuthQueries, q)
		}
	}
	n.UpdatedAt = u.At
	return tx.Replace(KindAPISession, &n)
}

// AuthQueryMFA is the typeId of the TOTP auth query of an API session.
const AuthQueryMFA = "MFA"

// ReplaceRecoveryCodes replaces every recovery code of an enrollment, with
// the use of the code that authorized it (recorded like any other use).
func (tx *Tx) ReplaceRecoveryCodes(u *MFAUse, codes []RecoveryCode) error {
	n, err := tx.consume(u)
	if err != nil {
		return err
	}
	n.RecoveryCodes = codes
	return tx.Replace(KindMFA, n)
}

// DeleteMFA removes the MFA enrollment of an identity. With onlyUnverified
// (the owner sent no code), a verified enrollment is refused: the check is
// made here so an enrollment verified meanwhile cannot be removed without one.
func (tx *Tx) DeleteMFA(identityID string, onlyUnverified bool) error {
	m := tx.MFAOf(identityID)
	if m == nil {
		return NotFound(KindMFA.Entity, identityID)
	}
	if onlyUnverified && m.IsVerified {
		return Invalid("code", "a verified MFA enrollment is removed only with a valid code", nil)
	}
	return tx.Remove(KindMFA, m.ID)
}
