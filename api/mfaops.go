package api

import (
	"errors"
	"net/http"

	"edgectl/fsm"
	"edgectl/store"
)

// verifyMFA completes the caller's enrollment with a TOTP code. The session
// that verifies has passed MFA: a partial session of an identity that had to
// enroll becomes fully authenticated.
func (s *Server) verifyMFA(c *call) error {
	m, err := ownMFA(c)
	if err != nil {
		return err
	}
	if m.IsVerified {
		return &apiError{status: http.StatusConflict, code: codeConflict, message: "the MFA enrollment is already verified",
			cause: fieldCause{Field: "isVerified", Reason: "already verified", Value: true}}
	}
	use, err := s.matchBodyCode(c, m, false)
	if err != nil {
		return err
	}
	use.SessionID = c.session.ID
	return s.mfaDo(c, fsm.CmdMFAVerify, use)
}

// deleteOwnMFA removes the caller's enrollment with a valid code in the
// mfa-validation-code header (or body); an unverified enrollment may be
// removed with an empty one.
func (s *Server) deleteOwnMFA(c *call) error {
	m, err := ownMFA(c)
	if err != nil {
		return err
	}
	code, err := headerCode(c)
	if err != nil {
		return err
	}
	if code == "" {
		if m.IsVerified {
			return invalidAuth()
		}
		return s.mfaDo(c, fsm.CmdMFADelete, fsm.MFADelete{IdentityID: m.IdentityID, OnlyUnverified: true})
	}
	if _, err := s.mfaMatch(c, m, code, s.now(), true, true); err != nil {
		if errors.Is(err, errBadCode) {
			return invalidAuth()
		}
		return err
	}
	return s.mfaDo(c, fsm.CmdMFADelete, fsm.MFADelete{IdentityID: m.IdentityID})
}

// getRecoveryCodes shows the unused recovery codes to the holder of a valid
// code. It is a read: the code is not used up.
func (s *Server) getRecoveryCodes(c *call) error {
	m, err := ownMFA(c)
	if err != nil {
		return err
	}
	code, err := headerCode(c)
	if err != nil {
		return err
	}
	if code == "" {
		return invalidField("code", "a valid code is required in the mfa-validation-code header or the body", nil)
	}
	if _, err := s.mfaMatch(c, m, code, s.now(), false, true); err != nil {
		if errors.Is(err, errBadCode) {
			return invalidAuth()
		}
		return err
	}
	codes, err := s.openRecoveryCodes(c.tx, m)
	if err != nil {
		return err
	}
	c.ok(map[string]any{"recoveryCodes": codes})
	return nil
}

// matchBodyCode checks the code of the request body against the caller's
// enrollment: a fresh TOTP code, or also a recovery code with recovery. A
// wrong code is a 401.
func (s *Server) matchBodyCode(c *call, m *store.MFA, recovery bool) (*store.MFAUse, error) {
	code, err := bodyCode(c, true)
	if err != nil {
		return nil, err
	}
	use, err := s.mfaMatch(c, m, code, s.now(), true, recovery)
	if errors.Is(err, errBadCode) {
		return nil, invalidAuth()
	}
	return use, err
}

// regenerateRecoveryCodes replaces every recovery code; the code that
// authorizes it is used up like a login code.
func (s *Server) regenerateRecoveryCodes(c *call) error {
	m, err := ownMFA(c)
	if err != nil {
		return err
	}
	use, err := s.matchBodyCode(c, m, true)
	if err != nil {
		return err
	}
	box, err := s.secretBox(c.tx)
	if err != nil {
		return err
	}
	codes, err := newRecoveryCodes(box, m)
	if err != nil {
		return err
	}
	if err := s.mfaDo(c, fsm.CmdMFARecoveryCodes, fsm.MFARecoveryCodes{Use: *use, Codes: codes}); err != nil {
		return err
	}
	n := *m
	n.RecoveryCodes = codes
	shown, err := s.openRecoveryCodes(c.tx, &n)
	if err != nil {
		return err
	}
	c.ok(map[string]any{"recoveryCodes": shown})
	return nil
}

// removeIdentityMFA is the admin's removal of an identity's MFA (a lost
// device): 404 when the identity or its enrollment does not exist.
func (s *Server) removeIdentityMFA(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindIdentity, id) {
		return notFound("identity", id)
	}
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdMFADelete, fsm.MFADelete{IdentityID: id})
	return err
}

// mfaEnabled reports whether the identity has a verified MFA enrollment.
func mfaEnabled(tx *store.Tx, identityID string) bool {
	m := tx.MFAOf(identityID)
	return m != nil && m.IsVerified
}
