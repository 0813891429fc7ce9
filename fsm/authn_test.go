package fsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"edgectl/store"
)

func strp(s string) *string { return &s }

// applyOK applies a command and fails the test on a domain error.
func applyOK(t *testing.T, f *FSM, index uint64, typ CommandType, payload any) {
	t.Helper()
	if err := resultErr(t, f.Apply(entry(t, index, typ, payload))); err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
}

func authnSigner(id, issuer string) *store.ExternalJWTSigner {
	return &store.ExternalJWTSigner{Base: store.Base{ID: id, CreatedAt: t0}, Named: store.Named{Name: id},
		Issuer: issuer, JwksEndpoint: strp("https://" + id + "/keys"), ClaimsProperty: "sub"}
}

func authnEnrollment(id, identityID, method string, expires time.Time) *store.Enrollment {
	return &store.Enrollment{Base: store.Base{ID: id, CreatedAt: t0}, IdentityID: identityID, Method: method,
		Token: "tok-" + id, JWT: "jwt-" + id, ExpiresAt: expires}
}

func TestApply_AuthPolicyPatchMergesNestedFieldsAndChecksSigners(t *testing.T) {
	f := bootstrapped(t)
	applyOK(t, f, 2, CmdExtJWTSignerCreate, authnSigner("s1", "iss1"))
	p := &store.AuthPolicy{Base: store.Base{ID: "p1", CreatedAt: t0}, Named: store.Named{Name: "p"}}
	p.Primary.Updb.MinPasswordLength, p.Primary.Updb.MaxAttempts, p.Primary.Cert.Allowed = 8, 3, true
	p.Primary.ExtJwt.AllowedSigners = []string{"s1"}
	applyOK(t, f, 3, CmdAuthPolicyCreate, p)

	patch := store.Patch{"primary": json.RawMessage(`{"updb":{"maxAttempts":7}}`)}
	applyOK(t, f, 4, CmdAuthPolicyUpdate, Update{ID: "p1", Patch: patch, At: t0.Add(time.Minute)})
	got, _ := store.GetAs[*store.AuthPolicy](f.Store().Read(), store.KindAuthPolicy, "p1")
	if got.Primary.Updb.MaxAttempts != 7 || got.Primary.Updb.MinPasswordLength != 8 || !got.Primary.Cert.Allowed ||
		len(got.Primary.ExtJwt.AllowedSigners) != 1 || !got.UpdatedAt.Equal(t0.Add(time.Minute)) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("merge lost fields: %+v", got)
	}

	bad := store.Patch{"secondary": json.RawMessage(`{"requireExtJwtSigner":"missing"}`)}
	err := resultErr(t, f.Apply(entry(t, 5, CmdAuthPolicyUpdate, Update{ID: "p1", Patch: bad, At: t0})))
	var de *store.Error
	if !errors.As(err, &de) || !errors.Is(err, store.ErrInvalid) || de.Field != "secondary.requireExtJwtSigner" {
		t.Fatalf("want invalid secondary.requireExtJwtSigner, got %v", err)
	}
	if err := resultErr(t, f.Apply(entry(t, 6, CmdExtJWTSignerDelete, Delete{ID: "s1"}))); !errors.Is(err, store.ErrReferenced) {
		t.Fatalf("delete of a signer in use: want referenced, got %v", err)
	}
	if err := resultErr(t, f.Apply(entry(t, 7, CmdAuthPolicyDelete, Delete{ID: "default"}))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("delete default: want invalid, got %v", err)
	}
	f.Apply(entry(t, 8, CmdIdentityCreate, IdentityCreate{Identity: &store.Identity{Base: store.Base{ID: "i1", CreatedAt: t0},
		Named: store.Named{Name: "one"}, TypeID: "User", AuthPolicyID: "p1"}}))
	if err := resultErr(t, f.Apply(entry(t, 9, CmdAuthPolicyDelete, Delete{ID: "p1"}))); !errors.Is(err, store.ErrReferenced) {
		t.Fatalf("delete of a policy in use: want referenced, got %v", err)
	}
}

func TestApply_EnrollmentRulesUseTheProposersTime(t *testing.T) {
	f := bootstrapped(t)
	f.Apply(entry(t, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")}))
	applyOK(t, f, 3, CmdEnrollmentCreate, EnrollmentCreate{Enrollment: authnEnrollment("e1", "i1", "ott", t0.Add(time.Hour)), At: t0})

	// Outstanding at the command's time: a second cert enrollment is a conflict, ott or ottca alike.
	err := resultErr(t, f.Apply(entry(t, 4, CmdEnrollmentCreate, EnrollmentCreate{Enrollment: authnEnrollment("e2", "i1", "ott", t0.Add(2*time.Hour)), At: t0})))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	// Once e1 expired (by the time in the command), a new one replaces it in the same command.
	applyOK(t, f, 5, CmdEnrollmentCreate, EnrollmentCreate{Enrollment: authnEnrollment("e3", "i1", "ott", t0.Add(3*time.Hour)), At: t0.Add(90 * time.Minute)})
	tx := f.Store().Read()
	if tx.Exists(store.KindEnrollment, "e1") || !tx.Exists(store.KindEnrollment, "e3") || tx.Count(store.KindEnrollment) != 1 {
		t.Fatalf("expired enrollment not replaced: count %d", tx.Count(store.KindEnrollment))
	}
	applyOK(t, f, 6, CmdEnrollmentRefresh, EnrollmentRefresh{ID: "e3", Token: "new", JWT: "newjwt", ExpiresAt: t0.Add(5 * time.Hour), At: t0.Add(2 * time.Hour)})
	tx = f.Store().Read()
	if tx.First(store.KindEnrollment, "token", "tok-e3") != nil || tx.First(store.KindEnrollment, "token", "new") == nil {
		t.Fatal("refresh left the old token usable or lost the new one")
	}
	// An ottca enrollment needs a verified CA that allows it.
	e := authnEnrollment("e4", "i1", "ottca", t0.Add(time.Hour))
	e.CaID = strp("nope")
	applyOK(t, f, 7, CmdEnrollmentDelete, Delete{ID: "e3"})
	if err := resultErr(t, f.Apply(entry(t, 8, CmdEnrollmentCreate, EnrollmentCreate{Enrollment: e, At: t0}))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("ottca with unknown CA: want invalid, got %v", err)
	}
}

func TestApply_ReEnrollIsAllOrNothing(t *testing.T) {
	f := bootstrapped(t)
	f.Apply(entry(t, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one"),
		Authenticators: []*store.Authenticator{{Base: store.Base{ID: "a1x", CreatedAt: t0}, IdentityID: "i1", Method: "updb", Username: "user1", PasswordHash: "h"}}}))
	applyOK(t, f, 3, CmdEnrollmentCreate, EnrollmentCreate{Enrollment: authnEnrollment("e1", "i1", "ott", t0.Add(time.Hour)), At: t0})
	// The replacing enrollment conflicts (an ott is outstanding): the authenticator must stay.
	err := resultErr(t, f.Apply(entry(t, 4, CmdAuthenticatorReEnroll, AuthenticatorReEnroll{ID: "a1x", Enrollment: authnEnrollment("e2", "i1", "ott", t0.Add(time.Hour)), At: t0})))
	if !errors.Is(err, store.ErrConflict) || !f.Store().Read().Exists(store.KindAuthenticator, "a1x") {
		t.Fatalf("failed re-enroll: err %v, authenticator kept %v", err, f.Store().Read().Exists(store.KindAuthenticator, "a1x"))
	}
	e := authnEnrollment("e3", "i1", "updb", t0.Add(time.Hour))
	e.Username = strp("user1")
	applyOK(t, f, 5, CmdAuthenticatorReEnroll, AuthenticatorReEnroll{ID: "a1x", Enrollment: e, At: t0})
	tx := f.Store().Read()
	if tx.Exists(store.KindAuthenticator, "a1x") || !tx.Exists(store.KindEnrollment, "e3") {
		t.Fatal("re-enroll did not swap the authenticator for the enrollment")
	}
}

func TestApply_CADeleteTakesItsOttcaEnrollmentsAndListedCertAuthenticators(t *testing.T) {
	f := bootstrapped(t)
	ca := &store.CA{Base: store.Base{ID: "ca1", CreatedAt: t0}, Named: store.Named{Name: "ca"}, Fingerprint: "fp", VerificationToken: "tok"}
	applyOK(t, f, 2, CmdCACreate, ca)
	dup := *ca
	dup.ID, dup.Name = "ca2", "other"
	if err := resultErr(t, f.Apply(entry(t, 3, CmdCACreate, &dup))); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("same fingerprint: want conflict, got %v", err)
	}
	applyOK(t, f, 4, CmdCAVerify, CAVerify{ID: "ca1", At: t0})
	if err := resultErr(t, f.Apply(entry(t, 5, CmdCAVerify, CAVerify{ID: "ca1", At: t0}))); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("verify twice: want conflict, got %v", err)
	}
	applyOK(t, f, 6, CmdCAUpdate, Update{ID: "ca1", Patch: store.Patch{"isOttCaEnrollmentEnabled": json.RawMessage(`true`), "isVerified": json.RawMessage(`false`)}, At: t0})
	f.Apply(entry(t, 7, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one"),
		Authenticators: []*store.Authenticator{{Base: store.Base{ID: "c1", CreatedAt: t0}, IdentityID: "i1", Method: "cert", Fingerprint: "leaf"}}}))
	f.Apply(entry(t, 8, CmdIdentityCreate, IdentityCreate{Identity: identity("i2", "two")}))
	e := authnEnrollment("e1", "i2", "ottca", t0.Add(time.Hour))
	e.CaID = strp("ca1")
	applyOK(t, f, 9, CmdEnrollmentCreate, EnrollmentCreate{Enrollment: e, At: t0})
	applyOK(t, f, 10, CmdCADelete, CADelete{ID: "ca1", AuthenticatorIDs: []string{"c1", "gone", "a1"}})
	tx := f.Store().Read()
	if tx.Exists(store.KindCA, "ca1") || tx.Exists(store.KindEnrollment, "e1") || tx.Exists(store.KindAuthenticator, "c1") {
		t.Fatal("CA delete left the CA or its dependents")
	}
	if !tx.Exists(store.KindAuthenticator, "a1") {
		t.Fatal("CA delete removed a listed authenticator that is not a cert one")
	}
}

func TestSnapshot_RoundTripKeepsTheAuthnKinds(t *testing.T) {
	f := bootstrapped(t)
	applyOK(t, f, 2, CmdExtJWTSignerCreate, authnSigner("s1", "iss1"))
	p := &store.AuthPolicy{Base: store.Base{ID: "p1", CreatedAt: t0}, Named: store.Named{Name: "p"}}
	p.Secondary.RequireExtJwtSigner = strp("s1")
	applyOK(t, f, 3, CmdAuthPolicyCreate, p)
	applyOK(t, f, 4, CmdCACreate, &store.CA{Base: store.Base{ID: "ca1", CreatedAt: t0}, Named: store.Named{Name: "ca"},
		Fingerprint: "fp", IdentityRoles: []string{"r"}, ExternalIDClaim: &store.ExternalIDClaim{Location: "COMMON_NAME", Matcher: "ALL", Parser: "NONE"}})
	f.Apply(entry(t, 5, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one"),
		Authenticators: []*store.Authenticator{{Base: store.Base{ID: "c1", CreatedAt: t0}, IdentityID: "i1", Method: "cert", Fingerprint: "leaf"}}}))
	applyOK(t, f, 6, CmdAuthenticatorRequestExtend, AuthenticatorExtendRequest{ID: "c1", RollKeys: true, At: t0})
	applyOK(t, f, 7, CmdEnrollmentCreate, EnrollmentCreate{Enrollment: authnEnrollment("e1", "i1", "updb", t0.Add(time.Hour)), At: t0})

	g := snapshotRoundTrip(t, f)
	if a, b := dump(t, f.Store().Read()), dump(t, g.Store().Read()); !bytes.Equal(a, b) {
		t.Fatal("restored model differs from the snapshotted one")
	}
	tx := g.Store().Read()
	if tx.First(store.KindCA, "fingerprint", "fp") == nil || tx.First(store.KindExternalJWTSigner, "issuer", "iss1") == nil ||
		tx.First(store.KindEnrollment, "token", "tok-e1") == nil {
		t.Fatal("secondary indexes of the authn kinds not rebuilt")
	}
	ap, _ := store.GetAs[*store.AuthPolicy](tx, store.KindAuthPolicy, "p1")
	a, _ := store.GetAs[*store.Authenticator](tx, store.KindAuthenticator, "c1")
	ca, _ := store.GetAs[*store.CA](tx, store.KindCA, "ca1")
	if ap == nil || *ap.Secondary.RequireExtJwtSigner != "s1" || a == nil || !a.IsExtendRequested || !a.IsKeyRollRequested ||
		ca == nil || ca.ExternalIDClaim == nil || ca.ExternalIDClaim.Matcher != "ALL" {
		t.Fatalf("restored records lost fields: %+v %+v %+v", ap, a, ca)
	}
	// Rules that read other kinds still hold after a restore.
	if err := resultErr(t, g.Apply(entry(t, 8, CmdExtJWTSignerDelete, Delete{ID: "s1"}))); !errors.Is(err, store.ErrReferenced) {
		t.Fatalf("restored signer reference not enforced: %v", err)
	}
}
