package fsm

import (
	"errors"
	"testing"
	"time"

	"edgectl/store"
)

// lockoutFSM makes identity i1 under a policy with maxAttempts 3 and the given duration.
func lockoutFSM(t *testing.T, minutes int) *FSM {
	t.Helper()
	f := bootstrapped(t)
	p := &store.AuthPolicy{Base: store.Base{ID: "p1", CreatedAt: t0}, Named: store.Named{Name: "p"}}
	p.Primary.Updb.Allowed, p.Primary.Updb.MaxAttempts, p.Primary.Updb.LockoutDurationMinutes = true, 3, minutes
	applyOK(t, f, 2, CmdAuthPolicyCreate, p)
	i := identity("i1", "one")
	i.AuthPolicyID = "p1"
	applyOK(t, f, 3, CmdIdentityCreate, IdentityCreate{Identity: i})
	return f
}

func session(id, identityID string, queries ...store.AuthQuery) *store.APISession {
	return &store.APISession{Base: store.Base{ID: id, CreatedAt: t0}, TokenHash: "h-" + id, IdentityID: identityID,
		IsMfaRequired: len(queries) > 0, AuthQueries: queries}
}

func TestApply_FailuresLockAtMaxAttemptsAndALoginResetsTheRun(t *testing.T) {
	f := lockoutFSM(t, 10)
	applyOK(t, f, 4, CmdLoginFailed, LoginFailed{IdentityID: "i1", At: t0})
	applyOK(t, f, 5, CmdLoginFailed, LoginFailed{IdentityID: "i1", At: t0})
	if n := f.Store().Read().LoginFailureCount("i1"); n != 2 {
		t.Fatalf("count %d, want 2", n)
	}
	applyOK(t, f, 6, CmdLogin, Login{Session: session("s1", "i1"), ResetFailures: true})
	if n := f.Store().Read().LoginFailureCount("i1"); n != 0 {
		t.Fatalf("a complete login left %d failures", n)
	}
	// A partial login (MFA due) does not end the run.
	applyOK(t, f, 7, CmdLoginFailed, LoginFailed{IdentityID: "i1", At: t0})
	applyOK(t, f, 8, CmdLogin, Login{Session: session("s2", "i1"), ResetFailures: false})
	applyOK(t, f, 9, CmdLoginFailed, LoginFailed{IdentityID: "i1", At: t0})
	at := t0.Add(time.Minute)
	applyOK(t, f, 10, CmdLoginFailed, LoginFailed{IdentityID: "i1", At: at})
	tx := f.Store().Read()
	i, _ := store.GetAs[*store.Identity](tx, store.KindIdentity, "i1")
	if !i.Disabled || i.DisabledUntil == nil || !i.DisabledUntil.Equal(at.Add(10*time.Minute)) || tx.LoginFailureCount("i1") != 0 {
		t.Fatalf("after 3 failures: disabled=%v until=%v count=%d", i.Disabled, i.DisabledUntil, tx.LoginFailureCount("i1"))
	}
	if tx.IdentitySessionCount("i1") != 0 {
		t.Fatal("a lockout keeps the identity's API sessions")
	}
	// A login proposed before the lock was seen is refused by the log.
	late := session("s3", "i1")
	late.CreatedAt = at.Add(time.Second)
	if err := resultErr(t, f.Apply(entry(t, 12, CmdLogin, Login{Session: late, ResetFailures: true}))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("login of a locked identity: %v", err)
	}
	// While locked nothing more is counted.
	applyOK(t, f, 13, CmdLoginFailed, LoginFailed{IdentityID: "i1", At: at.Add(time.Minute)})
	if n := f.Store().Read().LoginFailureCount("i1"); n != 0 {
		t.Fatalf("counted %d failures while locked", n)
	}
}

func TestApply_LockoutZeroDurationIsUntilEnabledAndTheDefaultAdminIsNeverLocked(t *testing.T) {
	f := lockoutFSM(t, 0)
	for i := uint64(0); i < 3; i++ {
		applyOK(t, f, 4+i, CmdLoginFailed, LoginFailed{IdentityID: "i1", At: t0})
	}
	i, _ := store.GetAs[*store.Identity](f.Store().Read(), store.KindIdentity, "i1")
	if !i.Disabled || i.DisabledUntil != nil {
		t.Fatalf("duration 0: disabled=%v until=%v, want disabled until enabled", i.Disabled, i.DisabledUntil)
	}
	applyOK(t, f, 10, CmdAuthPolicyUpdate, Update{ID: "default", Patch: store.Patch{"primary": []byte(`{"updb":{"maxAttempts":1}}`)}, At: t0})
	applyOK(t, f, 11, CmdLoginFailed, LoginFailed{IdentityID: "admin", At: t0})
	a, _ := store.GetAs[*store.Identity](f.Store().Read(), store.KindIdentity, "admin")
	if a.Disabled {
		t.Fatal("the default admin was locked out")
	}
}

func mfa(identityID string, verified bool, codes ...string) *store.MFA {
	m := &store.MFA{Base: store.Base{ID: "m-" + identityID, CreatedAt: t0}, IdentityID: identityID, IsVerified: verified, SecretSealed: "sealed"}
	for _, c := range codes {
		m.RecoveryCodes = append(m.RecoveryCodes, store.RecoveryCode{Hash: c, Sealed: "s-" + c})
	}
	return m
}

func TestApply_MFACodesAreAcceptedOnceAndCompleteTheSession(t *testing.T) {
	f := bootstrapped(t)
	applyOK(t, f, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")})
	applyOK(t, f, 3, CmdMFACreate, mfa("i1", false, "r1", "r2"))
	applyOK(t, f, 4, CmdLogin, Login{Session: session("s1", "i1", store.AuthQuery{TypeID: store.AuthQueryMFA})})
	if err := resultErr(t, f.Apply(entry(t, 5, CmdMFAAccept, store.MFAUse{IdentityID: "i1", Step: 100, SessionID: "s1", At: t0}))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a code of an unverified enrollment: %v", err)
	}
	applyOK(t, f, 6, CmdMFAVerify, store.MFAUse{IdentityID: "i1", Step: 100, SessionID: "s1", At: t0})
	s, _ := store.GetAs[*store.APISession](f.Store().Read(), store.KindAPISession, "s1")
	if !s.IsMfaComplete || s.LastMfaAt == nil || !s.LastMfaAt.Equal(t0) || len(s.AuthQueries) != 0 {
		t.Fatalf("verify did not complete the session: %+v", s)
	}
	if err := resultErr(t, f.Apply(entry(t, 7, CmdMFAVerify, store.MFAUse{IdentityID: "i1", Step: 101, At: t0}))); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("verify twice: %v", err)
	}
	// Replays: the same step, an earlier one, a used recovery code.
	for n, u := range []store.MFAUse{{Step: 100}, {Step: 99}} {
		u.IdentityID, u.At = "i1", t0
		if err := resultErr(t, f.Apply(entry(t, uint64(8+n), CmdMFAAccept, u))); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("replayed step %d: %v", u.Step, err)
		}
	}
	later := t0.Add(time.Minute)
	applyOK(t, f, 10, CmdMFAAccept, store.MFAUse{IdentityID: "i1", Step: 102, SessionID: "s1", At: later})
	applyOK(t, f, 11, CmdMFAAccept, store.MFAUse{IdentityID: "i1", RecoveryHash: "r1", At: later})
	if err := resultErr(t, f.Apply(entry(t, 12, CmdMFAAccept, store.MFAUse{IdentityID: "i1", RecoveryHash: "r1", At: later}))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("recovery code twice: %v", err)
	}
	tx := f.Store().Read()
	m := tx.MFAOf("i1")
	s, _ = store.GetAs[*store.APISession](tx, store.KindAPISession, "s1")
	if m.LastStep != 102 || len(m.RecoveryCodes) != 1 || m.RecoveryCodes[0].Hash != "r2" || !s.LastMfaAt.Equal(later) {
		t.Fatalf("after uses: step %d codes %v lastMfaAt %v", m.LastStep, m.RecoveryCodes, s.LastMfaAt)
	}
	// New recovery codes replace all, and the authorizing code is used up.
	applyOK(t, f, 13, CmdMFARecoveryCodes, MFARecoveryCodes{Use: store.MFAUse{IdentityID: "i1", Step: 103, At: later},
		Codes: []store.RecoveryCode{{Hash: "n1"}, {Hash: "n2"}}})
	if m := f.Store().Read().MFAOf("i1"); m.LastStep != 103 || len(m.RecoveryCodes) != 2 {
		t.Fatalf("regenerate: %+v", m)
	}
	// A verified enrollment is neither replaced nor removed without a code.
	if err := resultErr(t, f.Apply(entry(t, 14, CmdMFACreate, mfa("i1", false)))); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("re-enroll over a verified one: %v", err)
	}
	if err := resultErr(t, f.Apply(entry(t, 15, CmdMFADelete, MFADelete{IdentityID: "i1", OnlyUnverified: true}))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("delete verified without code: %v", err)
	}
	applyOK(t, f, 16, CmdMFADelete, MFADelete{IdentityID: "i1"})
	if err := resultErr(t, f.Apply(entry(t, 17, CmdMFADelete, MFADelete{IdentityID: "i1"}))); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestApply_MFAAndFailureStateSurviveASnapshot(t *testing.T) {
	f := lockoutFSM(t, 10)
	applyOK(t, f, 4, CmdMFACreate, mfa("i1", false, "r1"))
	applyOK(t, f, 5, CmdLoginFailed, LoginFailed{IdentityID: "i1", At: t0})
	g := snapshotRoundTrip(t, f)
	tx := g.Store().Read()
	if m := tx.MFAOf("i1"); m == nil || len(m.RecoveryCodes) != 1 || tx.LoginFailureCount("i1") != 1 {
		t.Fatalf("restored: mfa %+v failures %d", m, tx.LoginFailureCount("i1"))
	}
}
