package fsm

import (
	"errors"
	"testing"
	"time"

	"edgectl/store"
)

// enrollApply applies a command and checks that it fails with want (nil: succeeds).
func enrollApply(t *testing.T, f *FSM, index uint64, typ CommandType, payload any, want error) {
	t.Helper()
	err := resultErr(t, f.Apply(entry(t, index, typ, payload)))
	if (want == nil && err != nil) || (want != nil && !errors.Is(err, want)) {
		t.Fatalf("%s (entry %d): got %v, want %v", typ, index, err, want)
	}
}

func enrollCertAuth(id, identityID, fp string) *store.Authenticator {
	return &store.Authenticator{Base: store.Base{ID: id, CreatedAt: t0}, IdentityID: identityID, Method: "cert", CertPem: "pem-" + fp, Fingerprint: fp}
}

func TestApply_ConsumeEnrollmentIsOneTimeAndJudgesExpiryByTheCommandsTime(t *testing.T) {
	f := bootstrapped(t)
	applyOK(t, f, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")})
	applyOK(t, f, 3, CmdEnrollmentCreate, EnrollmentCreate{Enrollment: authnEnrollment("e1", "i1", "ott", t0.Add(time.Hour)), At: t0})
	u := authnEnrollment("e2", "i1", "updb", t0.Add(time.Hour))
	u.Username = strp("user1")
	applyOK(t, f, 4, CmdEnrollmentCreate, EnrollmentCreate{Enrollment: u, At: t0})

	a := enrollCertAuth("c1", "i1", "fp1")
	enrollApply(t, f, 5, CmdEnrollmentConsume, EnrollmentConsume{EnrollmentID: "e1", Token: "wrong", Authenticator: a, At: t0}, store.ErrNotFound)
	enrollApply(t, f, 6, CmdEnrollmentConsume, EnrollmentConsume{EnrollmentID: "e1", Token: "tok-e1", Authenticator: a, At: t0.Add(time.Hour)}, store.ErrNotFound)
	wrongMethod := &store.Authenticator{Base: store.Base{ID: "c1"}, IdentityID: "i1", Method: "updb", Username: "x"}
	enrollApply(t, f, 7, CmdEnrollmentConsume, EnrollmentConsume{EnrollmentID: "e1", Token: "tok-e1", Authenticator: wrongMethod, At: t0}, store.ErrInvalid)
	if !f.Store().Read().Exists(store.KindEnrollment, "e1") {
		t.Fatal("a refused consume removed the enrollment")
	}
	enrollApply(t, f, 8, CmdEnrollmentConsume, EnrollmentConsume{EnrollmentID: "e1", Token: "tok-e1", Authenticator: a, At: t0}, nil)
	tx := f.Store().Read()
	if tx.Exists(store.KindEnrollment, "e1") || !tx.Exists(store.KindAuthenticator, "c1") {
		t.Fatal("consume did not swap the enrollment for the authenticator")
	}
	a2 := enrollCertAuth("c2", "i1", "fp2")
	enrollApply(t, f, 9, CmdEnrollmentConsume, EnrollmentConsume{EnrollmentID: "e1", Token: "tok-e1", Authenticator: a2, At: t0}, store.ErrNotFound)

	// updb: the enrollment's own username reservation does not block it, another username is refused.
	pw := &store.Authenticator{Base: store.Base{ID: "p1", CreatedAt: t0}, IdentityID: "i1", Method: "updb", Username: "other", PasswordHash: "h"}
	enrollApply(t, f, 10, CmdEnrollmentConsume, EnrollmentConsume{EnrollmentID: "e2", Token: "tok-e2", Authenticator: pw, At: t0}, store.ErrInvalid)
	pw.Username = "user1"
	enrollApply(t, f, 11, CmdEnrollmentConsume, EnrollmentConsume{EnrollmentID: "e2", Token: "tok-e2", Authenticator: pw, At: t0}, nil)
}

func TestApply_EnrollCANumbersTakenNamesAndRefusesAnEnrolledCertificate(t *testing.T) {
	f := bootstrapped(t)
	ca := &store.CA{Base: store.Base{ID: "ca1", CreatedAt: t0}, Named: store.Named{Name: "ca"}, Fingerprint: "cafp",
		IsAutoCaEnrollmentEnabled: true, IdentityRoles: []string{"r"}}
	applyOK(t, f, 2, CmdCACreate, ca)
	dev := func(id string) *store.Identity {
		i := identity(id, "ca-dev")
		i.TypeID = "Device"
		return i
	}
	// Not verified yet: the CA cannot enroll.
	enrollApply(t, f, 3, CmdEnrollCA, EnrollCA{CaID: "ca1", Identity: dev("d1"), Authenticator: enrollCertAuth("c1", "d1", "fp1")}, store.ErrNotFound)
	applyOK(t, f, 4, CmdCAVerify, CAVerify{ID: "ca1", At: t0})
	enrollApply(t, f, 5, CmdEnrollCA, EnrollCA{CaID: "ca1", Identity: dev("d1"), Authenticator: enrollCertAuth("c1", "d1", "fp1")}, nil)
	enrollApply(t, f, 6, CmdEnrollCA, EnrollCA{CaID: "ca1", Identity: dev("d2"), Authenticator: enrollCertAuth("c2", "d2", "fp2")}, nil)
	enrollApply(t, f, 7, CmdEnrollCA, EnrollCA{CaID: "ca1", Identity: dev("d3"), Authenticator: enrollCertAuth("c3", "d3", "fp1")}, store.ErrConflict)
	tx := f.Store().Read()
	d2, _ := store.GetAs[*store.Identity](tx, store.KindIdentity, "d2")
	if d2 == nil || d2.Name != "ca-dev000001" || tx.Exists(store.KindIdentity, "d3") {
		t.Fatalf("second identity %+v; d3 exists %v", d2, tx.Exists(store.KindIdentity, "d3"))
	}
}

func TestApply_RouterEnrollOnceThenExtendMovesTheFingerprint(t *testing.T) {
	f := bootstrapped(t)
	tok, exp := "tok-r", t0.Add(time.Hour)
	r := &store.EdgeRouter{Base: store.Base{ID: "r1", CreatedAt: t0}, Named: store.Named{Name: "r1"},
		RouterEnrollment: store.RouterEnrollment{EnrollmentToken: &tok, EnrollmentJwt: strp("jwt"), EnrollmentExpiresAt: &exp}}
	applyOK(t, f, 2, CmdEdgeRouterCreate, r)
	k := store.KindEdgeRouter.Table
	enrollApply(t, f, 3, CmdRouterEnroll, RouterCert{Kind: k, ID: "r1", Token: "other", CertPem: "p", Fingerprint: "fp1", At: t0}, store.ErrNotFound)
	enrollApply(t, f, 4, CmdRouterEnroll, RouterCert{Kind: k, ID: "r1", Token: tok, CertPem: "p", Fingerprint: "fp1", At: exp}, store.ErrNotFound)
	enrollApply(t, f, 5, CmdRouterEnroll, RouterCert{Kind: k, ID: "r1", Token: tok, CertPem: "p", Fingerprint: "fp1", At: t0}, nil)
	got, _ := store.GetAs[*store.EdgeRouter](f.Store().Read(), store.KindEdgeRouter, "r1")
	if !got.IsVerified || *got.Fingerprint != "fp1" || got.EnrollmentToken != nil || got.EnrollmentJwt != nil || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("after enroll: %+v", got.RouterEnrollment)
	}
	enrollApply(t, f, 6, CmdRouterEnroll, RouterCert{Kind: k, ID: "r1", Token: tok, CertPem: "p", Fingerprint: "fp9", At: t0}, store.ErrNotFound)

	enrollApply(t, f, 7, CmdRouterExtend, RouterCert{Kind: k, ID: "r1", OldFingerprint: "stale", CertPem: "p2", Fingerprint: "fp2", At: t0}, store.ErrConflict)
	enrollApply(t, f, 8, CmdRouterExtend, RouterCert{Kind: k, ID: "r1", OldFingerprint: "fp1", CertPem: "p2", Fingerprint: "fp2", At: t0}, nil)
	tx := f.Store().Read()
	if tx.First(store.KindEdgeRouter, "fingerprint", "fp1") != nil || tx.First(store.KindEdgeRouter, "fingerprint", "fp2") == nil {
		t.Fatal("extend did not move the fingerprint index")
	}
	enrollApply(t, f, 9, CmdRouterExtend, RouterCert{Kind: k, ID: "r1", OldFingerprint: "fp1", CertPem: "p3", Fingerprint: "fp3", At: t0}, store.ErrConflict)
}

func TestApply_SessionCertificatesEndWithTheirAPISession(t *testing.T) {
	f := bootstrapped(t)
	applyOK(t, f, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")})
	for i, id := range []string{"s1", "s2"} {
		applyOK(t, f, uint64(3+i), CmdAPISessionCreate, &store.APISession{Base: store.Base{ID: id, CreatedAt: t0}, TokenHash: "h" + id, IdentityID: "i1"})
	}
	cert := func(id, session string) *store.APISessionCertificate {
		return &store.APISessionCertificate{Base: store.Base{ID: id, CreatedAt: t0}, APISessionID: session, IdentityID: "i1", Fingerprint: "fp" + id}
	}
	applyOK(t, f, 5, CmdAPISessionCertCreate, cert("c1", "s1"))
	applyOK(t, f, 6, CmdAPISessionCertCreate, cert("c2", "s1"))
	applyOK(t, f, 7, CmdAPISessionCertCreate, cert("c3", "s2"))
	enrollApply(t, f, 8, CmdAPISessionCertCreate, cert("c4", "gone"), store.ErrInvalid)
	enrollApply(t, f, 9, CmdAPISessionCertDelete, APISessionCertDelete{ID: "c3", APISessionID: "s1"}, store.ErrNotFound)
	enrollApply(t, f, 10, CmdAPISessionCertDelete, APISessionCertDelete{ID: "c2", APISessionID: "s1"}, nil)
	applyOK(t, f, 11, CmdAPISessionsDelete, DeleteMany{IDs: []string{"s1"}})
	tx := f.Store().Read()
	if tx.Exists(store.KindAPISessionCertificate, "c1") || !tx.Exists(store.KindAPISessionCertificate, "c3") || tx.Count(store.KindAPISessionCertificate) != 1 {
		t.Fatalf("after the session ended: %d certificates", tx.Count(store.KindAPISessionCertificate))
	}
}

func TestApply_AuthenticatorExtensionIsPendingUntilVerified(t *testing.T) {
	f := bootstrapped(t)
	applyOK(t, f, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one"), Authenticators: []*store.Authenticator{enrollCertAuth("c1", "i1", "old")}})
	applyOK(t, f, 3, CmdIdentityCreate, IdentityCreate{Identity: identity("i2", "two")})
	applyOK(t, f, 4, CmdAuthenticatorRequestExtend, AuthenticatorExtendRequest{ID: "c1", RollKeys: true, At: t0})
	ext := func(identityID, oldFP, fp string) *store.CertExtension {
		return &store.CertExtension{Base: store.Base{ID: "c1", CreatedAt: t0}, IdentityID: identityID, OldFingerprint: oldFP, CertPem: "pem-" + fp, Fingerprint: fp}
	}
	enrollApply(t, f, 5, CmdAuthenticatorExtend, ext("i2", "old", "new"), store.ErrNotFound)
	enrollApply(t, f, 6, CmdAuthenticatorExtend, ext("i1", "stale", "new"), store.ErrConflict)
	enrollApply(t, f, 7, CmdAuthenticatorExtendVerify, ExtendVerify{ID: "c1", IdentityID: "i1", Fingerprint: "new", At: t0}, store.ErrInvalid)
	enrollApply(t, f, 8, CmdAuthenticatorExtend, ext("i1", "old", "new"), nil)
	if a, _ := store.GetAs[*store.Authenticator](f.Store().Read(), store.KindAuthenticator, "c1"); a.Fingerprint != "old" {
		t.Fatal("extend replaced the certificate before verify")
	}
	enrollApply(t, f, 9, CmdAuthenticatorExtendVerify, ExtendVerify{ID: "c1", IdentityID: "i1", Fingerprint: "other", At: t0}, store.ErrInvalid)
	enrollApply(t, f, 10, CmdAuthenticatorExtendVerify, ExtendVerify{ID: "c1", IdentityID: "i1", Fingerprint: "new", At: t0.Add(time.Minute)}, nil)
	tx := f.Store().Read()
	a, _ := store.GetAs[*store.Authenticator](tx, store.KindAuthenticator, "c1")
	if a.Fingerprint != "new" || a.CertPem != "pem-new" || a.IsExtendRequested || a.IsKeyRollRequested || a.ExtendRequestedAt != nil ||
		tx.Exists(store.KindCertExtension, "c1") || tx.First(store.KindAuthenticator, "fingerprint", "old") != nil {
		t.Fatalf("after verify: %+v", a)
	}
}
