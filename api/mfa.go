package api

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"time"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/store"
)

// mfaCodeHeader carries the code of the MFA operations that have no body.
const mfaCodeHeader = "mfa-validation-code"

// errBadCode: the code is wrong, replayed or used up; the API answers 401.
var errBadCode = errors.New("the MFA code is not valid")

// bodyCode reads the MFA validation request {code}; required says whether
// an absent code is a 400.
func bodyCode(c *call, required bool) (string, error) {
	var b struct {
		Code *string `json:"code"`
	}
	if err := decodeInto(c.r, &b); err != nil {
		return "", err
	}
	if b.Code == nil {
		if required {
			return "", invalidField("code", "is required", nil)
		}
		return "", nil
	}
	return *b.Code, nil
}

// headerCode is the mfa-validation-code header, else the body's code.
func headerCode(c *call) (string, error) {
	if v := c.r.Header.Get(mfaCodeHeader); v != "" {
		return v, nil
	}
	return bodyCode(c, false)
}

// ownMFA is the caller's MFA enrollment, or 404.
// ownMFAAndCode is the caller's MFA enrollment and the code the request
// carries in the mfa-validation-code header (or body), "" when none.
func ownMFAAndCode(c *call) (*store.MFA, string, error) {
	m, err := ownMFA(c)
	if err != nil {
		return nil, "", err
	}
	code, err := headerCode(c)
	return m, code, err
}

func ownMFA(c *call) (*store.MFA, error) {
	if m := c.tx.MFAOf(c.identity.ID); m != nil {
		return m, nil
	}
	return nil, notFound("MFA enrollment", c.identity.ID)
}

// mfaMatch checks a code against an enrollment: a TOTP code of the current
// window (±1 step; with fresh, only a step later than the last accepted
// one), or, with recovery, an unused recovery code. Failures take a token of
// the identity's MFA bucket.
func (s *Server) mfaMatch(c *call, m *store.MFA, code string, now time.Time, fresh, recovery bool) (*store.MFAUse, error) {
	key := map[string]auth.Limit{"mfa:" + m.IdentityID: limitMFA}
	if err := s.throttled(c, now, key); err != nil {
		return nil, err
	}
	box, err := s.secretBox(c.tx)
	if err != nil {
		return nil, err
	}
	secret, err := box.Open(m.SecretSealed, m.IdentityID)
	if err != nil {
		return nil, err
	}
	use := &store.MFAUse{IdentityID: m.IdentityID, At: now}
	if step, ok := auth.MatchTOTP(secret, code, now); ok && (!fresh || step > m.LastStep) {
		use.Step = step
		return use, nil
	}
	if recovery && auth.LooksLikeRecoveryCode(code) {
		h := auth.RecoveryCodeHash(m.ID, code)
		for _, rc := range m.RecoveryCodes {
			if subtle.ConstantTimeCompare([]byte(rc.Hash), []byte(h)) == 1 {
				use.RecoveryHash = h
				return use, nil
			}
		}
	}
	s.failed(now, key)
	return nil, errBadCode
}

// mfaDo proposes a command that uses a code; a use the log refused (the code
// was used meanwhile, on any node) is a bad code like any other.
func (s *Server) mfaDo(c *call, t fsm.CommandType, payload any) error {
	_, err := s.Writer.Do(c.r.Context(), t, payload)
	var de *store.Error
	if errors.As(err, &de) && errors.Is(err, store.ErrInvalid) && de.Field == "code" {
		return invalidAuth()
	}
	return err
}

// authenticateMFA answers the MFA auth query of the caller's session with a
// TOTP or recovery code. On a session that is already complete it records a
// fresh TOTP (lastMfaAt), which MFA posture checks ask for after a wake or
// unlock. Wrong codes count toward the lockout of the identity's policy.
func (s *Server) authenticateMFA(c *call) error {
	code, err := bodyCode(c, true)
	if err != nil {
		return err
	}
	m := c.tx.MFAOf(c.identity.ID)
	if (m == nil || !m.IsVerified) && c.rejudge() {
		return s.authenticateMFA(c)
	}
	if m == nil || !m.IsVerified {
		return notFound("verified MFA enrollment", c.identity.ID)
	}
	now := s.now()
	use, err := s.mfaMatch(c, m, code, now, true, true)
	if errors.Is(err, errBadCode) && c.rejudge() {
		return s.authenticateMFA(c)
	}
	if errors.Is(err, errBadCode) {
		s.recordFailure(c.r.Context(), c.identity.ID, "totp", "the code does not match", now)
		return invalidAuth()
	}
	if err != nil {
		return err
	}
	use.SessionID = c.session.ID
	return s.mfaDo(c, fsm.CmdMFAAccept, use)
}

// enrollMFA starts a TOTP enrollment: 201, then GET shows the provisioning
// URL and recovery codes until it is verified. An unverified enrollment is
// replaced by a new one; a verified one is 409.
func (s *Server) enrollMFA(c *call) error {
	if m := c.tx.MFAOf(c.identity.ID); m != nil && m.IsVerified {
		return &apiError{status: http.StatusConflict, code: codeConflict,
			message: "MFA is already enrolled and verified: remove it first", cause: fieldCause{Field: "isVerified", Reason: "already verified", Value: true}}
	}
	box, err := s.secretBox(c.tx)
	if err != nil {
		return err
	}
	secret, err := auth.NewTOTPSecret()
	if err != nil {
		return err
	}
	now := s.now()
	m := &store.MFA{Base: store.Base{ID: auth.NewID(), CreatedAt: now, UpdatedAt: now}, IdentityID: c.identity.ID}
	if m.SecretSealed, err = box.Seal(secret, m.IdentityID); err != nil {
		return err
	}
	if m.RecoveryCodes, err = newRecoveryCodes(box, m); err != nil {
		return err
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdMFACreate, m); err != nil {
		return err
	}
	c.write(http.StatusCreated, map[string]any{"data": map[string]any{"id": m.ID, "_links": mfaLinks()}, "meta": meta(nil)})
	return nil
}

// newRecoveryCodes draws RecoveryCodeCount codes, hashed (to match) and sealed (to show).
func newRecoveryCodes(box *auth.SecretBox, m *store.MFA) ([]store.RecoveryCode, error) {
	codes, err := auth.NewRecoveryCodes(auth.RecoveryCodeCount)
	if err != nil {
		return nil, err
	}
	out := make([]store.RecoveryCode, len(codes))
	for i, code := range codes {
		sealed, err := box.Seal(code, m.IdentityID)
		if err != nil {
			return nil, err
		}
		out[i] = store.RecoveryCode{Hash: auth.RecoveryCodeHash(m.ID, code), Sealed: sealed}
	}
	return out, nil
}

// openRecoveryCodes returns the unused recovery codes in clear.
func (s *Server) openRecoveryCodes(tx *store.Tx, m *store.MFA) ([]string, error) {
	box, err := s.secretBox(tx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(m.RecoveryCodes))
	for _, rc := range m.RecoveryCodes {
		code, err := box.Open(rc.Sealed, m.IdentityID)
		if err != nil {
			return nil, err
		}
		out = append(out, code)
	}
	return out, nil
}

func mfaLinks() map[string]any {
	return map[string]any{"self": map[string]string{"href": "./current-identity/mfa"},
		"qr-code":        map[string]string{"href": "./current-identity/mfa/qr-code"},
		"recovery-codes": map[string]string{"href": "./current-identity/mfa/recovery-codes"},
		"verify":         map[string]string{"href": "./current-identity/mfa/verify"}}
}

// getMFA shows the enrollment; its secret (provisioningUrl) and recovery
// codes only while it is not verified.
func (s *Server) getMFA(c *call) error {
	m, err := ownMFA(c)
	if err != nil {
		return err
	}
	v := map[string]any{"_links": mfaLinks(), "id": m.ID, "createdAt": m.CreatedAt, "updatedAt": m.UpdatedAt,
		"tags": tagsOrEmpty(m.Tags), "isVerified": m.IsVerified, "provisioningUrl": "", "recoveryCodes": []string{}}
	if !m.IsVerified {
		secret, err := s.openSecret(c.tx, m)
		if err != nil {
			return err
		}
		if v["provisioningUrl"], err = auth.ProvisioningURL(c.identity.Name, secret); err != nil {
			return err
		}
		if v["recoveryCodes"], err = s.openRecoveryCodes(c.tx, m); err != nil {
			return err
		}
	}
	c.ok(v)
	return nil
}

func (s *Server) openSecret(tx *store.Tx, m *store.MFA) (string, error) {
	box, err := s.secretBox(tx)
	if err != nil {
		return "", err
	}
	return box.Open(m.SecretSealed, m.IdentityID)
}

// mfaQRCode is the PNG QR code of the provisioning URL, while unverified.
func (s *Server) mfaQRCode(c *call) error {
	m, err := ownMFA(c)
	if err != nil {
		return err
	}
	if m.IsVerified {
		return notFound("unverified MFA enrollment", c.identity.ID)
	}
	secret, err := s.openSecret(c.tx, m)
	if err != nil {
		return err
	}
	img, err := auth.ProvisioningQR(c.identity.Name, secret, 256)
	if err != nil {
		return err
	}
	c.wrote = true
	c.w.Header().Set("Content-Type", "image/png")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(img)
	return nil
}

// mfaRoutes are the MFA operations.
func (s *Server) mfaRoutes() []route {
	return []route{
		{bothAPIs, post, "/authenticate/mfa", "authenticateMfa", "Authentication, MFA", partial, s.authenticateMFA},
		// A partial session may enroll: an identity whose policy requires TOTP enrolls before it can log in fully.
		{bothAPIs, post, "/current-identity/mfa", "enrollMfa", "Current Identity, MFA", partial, s.enrollMFA},
		{bothAPIs, get, "/current-identity/mfa", "detailMfa", "Current Identity, MFA", partial, s.getMFA},
		{bothAPIs, get, "/current-identity/mfa/qr-code", "detailMfaQrCode", "Current Identity, MFA", partial, s.mfaQRCode},
		{bothAPIs, post, "/current-identity/mfa/verify", "verifyMfa", "Current Identity, MFA", partial, s.verifyMFA},
		{bothAPIs, del, "/current-identity/mfa", "deleteMfa", "Current Identity, MFA", full, s.deleteOwnMFA},
		{bothAPIs, get, "/current-identity/mfa/recovery-codes", "detailMfaRecoveryCodes", "Current Identity, MFA", full, s.getRecoveryCodes},
		{bothAPIs, post, "/current-identity/mfa/recovery-codes", "createMfaRecoveryCodes", "Current Identity, MFA", full, s.regenerateRecoveryCodes},
		{managementAPI, del, "/identities/:id/mfa", "removeIdentityMfa", "Identity, MFA", admin, s.removeIdentityMFA},
	}
}

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
	m, code, err := ownMFAAndCode(c)
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
	m, code, err := ownMFAAndCode(c)
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
