package store

import (
	"fmt"
	"time"
)

// The enrollment flows of the Client API: an outstanding enrollment becomes
// an authenticator, a CA-signed certificate becomes an identity, a router's
// one-time token becomes its certificate. Each is one method here, called by
// one command, so a flow is all or nothing and a token works once.

// enrollmentGone is the answer for a token that no longer finds an
// outstanding enrollment: unknown, used already, or expired. The three are
// not told apart, so a token's history does not leak.
func enrollmentGone() *Error {
	return NotFound("enrollment", "with this token (unknown, used or expired)")
}

// ConsumeEnrollment turns the outstanding enrollment id (still holding token
// and not expired at at) into the authenticator a: the enrollment is removed
// and a inserted, in this one transaction. The proposer made a from the
// enrollment it read; the checks here catch a change in between (another use
// of the token, a refresh, a delete).
func (tx *Tx) ConsumeEnrollment(id, token string, a *Authenticator, at time.Time) error {
	e, err := GetAs[*Enrollment](tx, KindEnrollment, id)
	if err != nil || e.Token != token || !e.ExpiresAt.After(at) {
		return enrollmentGone()
	}
	if e.IdentityID != a.IdentityID {
		return Invalid("identityId", "the authenticator is not for the enrollment's identity", a.IdentityID)
	}
	if credentialOf(e.Method) != a.Method {
		return Invalid("method", fmt.Sprintf("a %s enrollment yields a %s authenticator", e.Method, credentialOf(e.Method)), a.Method)
	}
	if e.Method == "updb" && (e.Username == nil || *e.Username != a.Username) {
		return Invalid("username", "the authenticator's username is not the enrollment's", a.Username)
	}
	if e.Method == "ottca" {
		if err := tx.checkOttCA(e.CaID); err != nil {
			return err
		}
	}
	// The enrollment goes first: an updb enrollment reserves its own username.
	if err := tx.Remove(KindEnrollment, id); err != nil {
		return err
	}
	return tx.insertAuthenticator(a)
}

// EnrollCA creates the identity i with the cert authenticator a for a
// certificate that the CA caID signed (CA auto enrollment). The CA must still
// be verified and allow auto enrollment; a certificate already bound to an
// authenticator is a conflict. When i's name is taken, a counter is appended
// ("name000001", ...): the name comes from the CA's format, not from the
// client, so a clash is no reason to refuse the enrollment.
func (tx *Tx) EnrollCA(caID string, i *Identity, a *Authenticator) error {
	ca, err := GetAs[*CA](tx, KindCA, caID)
	if err != nil || !ca.IsVerified || !ca.IsAutoCaEnrollmentEnabled {
		return NotFound("CA", caID)
	}
	if tx.First(KindAuthenticator, "fingerprint", a.Fingerprint) != nil {
		return Conflict("certificate", a.Fingerprint, "the certificate with fingerprint %s is already enrolled", a.Fingerprint)
	}
	n := *i
	for k := 1; tx.ByName(KindIdentity, n.Name) != nil; k++ {
		n.Name = fmt.Sprintf("%s%06d", i.Name, k)
	}
	return tx.CreateIdentity(&n, nil, []*Authenticator{a})
}

// routerEnrollmentOf returns the enrollment part of an edge router or router.
func routerEnrollmentOf(r Record) *RouterEnrollment {
	switch v := r.(type) {
	case *EdgeRouter:
		return &v.RouterEnrollment
	case *Router:
		return &v.RouterEnrollment
	}
	return nil
}

// withRouterEnrollment returns a copy of the edge router or router r with
// its enrollment part changed by fn and updatedAt set to at.
func withRouterEnrollment(r Record, at time.Time, fn func(e *RouterEnrollment)) Record {
	switch v := r.(type) {
	case *EdgeRouter:
		n := *v
		fn(&n.RouterEnrollment)
		n.UpdatedAt = at
		return &n
	case *Router:
		n := *v
		fn(&n.RouterEnrollment)
		n.UpdatedAt = at
		return &n
	}
	return nil
}

// routerKind returns the kind of a router kind's table name: edgeRouters or routers.
func routerKind(table string) (*Kind, error) {
	switch table {
	case KindEdgeRouter.Table:
		return KindEdgeRouter, nil
	case KindRouter.Table:
		return KindRouter, nil
	}
	return nil, fmt.Errorf("store: %q is not a router kind", table)
}

// routerOf reads the router id of the kind table names, with its enrollment.
func (tx *Tx) routerOf(table, id string) (*Kind, Record, *RouterEnrollment, error) {
	k, err := routerKind(table)
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := tx.Get(k, id)
	if err != nil {
		return nil, nil, nil, err
	}
	return k, r, routerEnrollmentOf(r), nil
}

// checkRouterFingerprint keeps a client certificate bound to one router at most.
func (tx *Tx) checkRouterFingerprint(fp, self string) error {
	for _, k := range []*Kind{KindEdgeRouter, KindRouter} {
		if other := tx.First(k, "fingerprint", fp); other != nil && other.GetID() != self {
			return Conflict("fingerprint", fp, "the certificate with fingerprint %s belongs to %s %s", fp, k.Entity, other.GetID())
		}
	}
	return nil
}

// EnrollRouter completes the one-time enrollment of the edge router or
// router id (table names its kind): the token must still be its outstanding,
// unexpired one. The router becomes verified with the client certificate
// certPem (fingerprint fp), and the token and JWT are cleared, so they work once.
func (tx *Tx) EnrollRouter(table, id, token, certPem, fp string, at time.Time) error {
	k, err := routerKind(table)
	if err != nil {
		return err
	}
	r, err := tx.Get(k, id)
	if err != nil {
		return enrollmentGone()
	}
	e := routerEnrollmentOf(r)
	if e.EnrollmentToken == nil || *e.EnrollmentToken != token || (e.EnrollmentExpiresAt != nil && !e.EnrollmentExpiresAt.After(at)) {
		return enrollmentGone()
	}
	if err := tx.checkRouterFingerprint(fp, id); err != nil {
		return err
	}
	return tx.Replace(k, withRouterEnrollment(r, at, func(e *RouterEnrollment) {
		*e = RouterEnrollment{IsVerified: true, Fingerprint: &fp, CertPem: &certPem}
	}))
}

// ExtendRouter replaces the client certificate of a verified router whose
// current fingerprint is oldFP (the certificate the request was made with).
// The old certificate stops identifying the router in this transaction.
func (tx *Tx) ExtendRouter(table, id, oldFP, certPem, fp string, at time.Time) error {
	return tx.extendRouter(table, id, oldFP, fp, at, func(e *RouterEnrollment) {
		e.Fingerprint, e.CertPem = &fp, &certPem
	})
}

// ExtendRouterPending keeps a router's new client certificate as
// unverified, while oldFP is still its current one: the control channel's
// extension, where the router proves it holds the certificate before the
// controller switches to it (VerifyRouterExtension).
func (tx *Tx) ExtendRouterPending(table, id, oldFP, certPem, fp string, at time.Time) error {
	return tx.extendRouter(table, id, oldFP, fp, at, func(e *RouterEnrollment) {
		e.UnverifiedFingerprint, e.UnverifiedCertPem = &fp, &certPem
	})
}

// extendRouter applies set to a verified router whose current certificate
// is oldFP and to which no other router's certificate fp belongs.
func (tx *Tx) extendRouter(table, id, oldFP, fp string, at time.Time, set func(*RouterEnrollment)) error {
	k, r, e, err := tx.routerOf(table, id)
	if err != nil {
		return err
	}
	if !e.IsVerified || e.Fingerprint == nil || *e.Fingerprint != oldFP {
		return Conflict("fingerprint", oldFP, "the %s's certificate changed since the request was made", k.Entity)
	}
	if err := tx.checkRouterFingerprint(fp, id); err != nil {
		return err
	}
	return tx.Replace(k, withRouterEnrollment(r, at, set))
}

// VerifyRouterExtension makes the router's unverified certificate, whose
// fingerprint must be fp, its current one.
func (tx *Tx) VerifyRouterExtension(table, id, fp string, at time.Time) error {
	k, r, e, err := tx.routerOf(table, id)
	if err != nil {
		return err
	}
	if !e.IsVerified || e.UnverifiedFingerprint == nil || *e.UnverifiedFingerprint != fp || e.UnverifiedCertPem == nil {
		return Conflict("fingerprint", fp, "the %s has no pending certificate with this fingerprint", k.Entity)
	}
	if err := tx.checkRouterFingerprint(fp, id); err != nil {
		return err
	}
	pem := *e.UnverifiedCertPem
	return tx.Replace(k, withRouterEnrollment(r, at, func(e *RouterEnrollment) {
		e.Fingerprint, e.CertPem = &fp, &pem
		e.UnverifiedFingerprint, e.UnverifiedCertPem = nil, nil
	}))
}

// freshEnrollment keeps only the enrollment part of e: a router that is to
// enroll has no certificate, verified or not.
func freshEnrollment(e RouterEnrollment) RouterEnrollment {
	return RouterEnrollment{
		EnrollmentToken: e.EnrollmentToken, EnrollmentJwt: e.EnrollmentJwt,
		EnrollmentCreatedAt: e.EnrollmentCreatedAt, EnrollmentExpiresAt: e.EnrollmentExpiresAt,
	}
}
