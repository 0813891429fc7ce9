package fsm

import (
	"time"

	"edgectl/store"
)

// Commands of the Client API enrollment and certificate flows. Each flow is
// one command, so it happens whole or not at all. Added, never renamed or reused.
var (
	CmdEnrollmentConsume = command("enrollment.consume", 1)
	CmdEnrollCA          = command("enrollment.ca", 1)
	CmdRouterEnroll      = command("router.enroll", 1)
	CmdRouterExtend      = command("router.extend", 1)
	// CmdRouterExtendPending and CmdRouterExtendVerify are the control
	// channel's certificate extension: the new certificate is kept aside
	// until the router shows it has it (command version 6).
	CmdRouterExtendPending       = command("router.extendPending", 6)
	CmdRouterExtendVerify        = command("router.extendVerify", 6)
	CmdAPISessionCertCreate      = command("apiSessionCertificate.create", 1)
	CmdAPISessionCertDelete      = command("apiSessionCertificate.delete", 1)
	CmdAuthenticatorExtend       = command("authenticator.extend", 1)
	CmdAuthenticatorExtendVerify = command("authenticator.extendVerify", 1)
)

// EnrollmentConsume is the payload of CmdEnrollmentConsume: the enrollment
// (with the token the client sent) and the authenticator that replaces it.
// At is the time of the request, against which expiry is judged.
type EnrollmentConsume struct {
	EnrollmentID  string               `json:"enrollmentId"`
	Token         string               `json:"token"`
	Authenticator *store.Authenticator `json:"authenticator"`
	At            time.Time            `json:"at"`
}

// EnrollCA is the payload of CmdEnrollCA: the identity and cert
// authenticator made for a certificate that the CA signed.
type EnrollCA struct {
	CaID          string               `json:"caId"`
	Identity      *store.Identity      `json:"identity"`
	Authenticator *store.Authenticator `json:"authenticator"`
}

// RouterCert is the payload of CmdRouterEnroll and CmdRouterExtend. Kind is
// the table of the router (edgeRouters or routers). Token is the enrollment
// token (enroll); OldFingerprint the certificate the request used (extend).
type RouterCert struct {
	Kind           string    `json:"kind"`
	ID             string    `json:"id"`
	Token          string    `json:"token,omitempty"`
	OldFingerprint string    `json:"oldFingerprint,omitempty"`
	CertPem        string    `json:"certPem"`
	Fingerprint    string    `json:"fingerprint"`
	At             time.Time `json:"at"`
}

// APISessionCertDelete is the payload of CmdAPISessionCertDelete.
type APISessionCertDelete struct {
	ID           string `json:"id"`
	APISessionID string `json:"apiSessionId"`
}

// ExtendVerify is the payload of CmdAuthenticatorExtendVerify.
type ExtendVerify struct {
	ID          string    `json:"id"`
	IdentityID  string    `json:"identityId"`
	Fingerprint string    `json:"fingerprint"`
	At          time.Time `json:"at"`
}

// registerEnroll registers the commands of the enrollment and certificate flows.
func registerEnroll(f *FSM) {
	on(f, CmdEnrollmentConsume, func(tx *store.Tx, p *EnrollmentConsume) (any, error) {
		return nil, tx.ConsumeEnrollment(p.EnrollmentID, p.Token, p.Authenticator, p.At)
	})
	on(f, CmdEnrollCA, func(tx *store.Tx, p *EnrollCA) (any, error) {
		return nil, tx.EnrollCA(p.CaID, p.Identity, p.Authenticator)
	})
	on(f, CmdRouterEnroll, func(tx *store.Tx, p *RouterCert) (any, error) {
		return nil, tx.EnrollRouter(p.Kind, p.ID, p.Token, p.CertPem, p.Fingerprint, p.At)
	})
	on(f, CmdRouterExtend, func(tx *store.Tx, p *RouterCert) (any, error) {
		return nil, tx.ExtendRouter(p.Kind, p.ID, p.OldFingerprint, p.CertPem, p.Fingerprint, p.At)
	})
	on(f, CmdRouterExtendPending, func(tx *store.Tx, p *RouterCert) (any, error) {
		return nil, tx.ExtendRouterPending(p.Kind, p.ID, p.OldFingerprint, p.CertPem, p.Fingerprint, p.At)
	})
	on(f, CmdRouterExtendVerify, func(tx *store.Tx, p *RouterCert) (any, error) {
		return nil, tx.VerifyRouterExtension(p.Kind, p.ID, p.Fingerprint, p.At)
	})
	on(f, CmdAPISessionCertCreate, func(tx *store.Tx, c *store.APISessionCertificate) (any, error) {
		return nil, tx.CreateAPISessionCertificate(c)
	})
	on(f, CmdAPISessionCertDelete, func(tx *store.Tx, p *APISessionCertDelete) (any, error) {
		return nil, tx.DeleteAPISessionCertificate(p.ID, p.APISessionID)
	})
	on(f, CmdAuthenticatorExtend, func(tx *store.Tx, x *store.CertExtension) (any, error) {
		return nil, tx.ExtendAuthenticator(x)
	})
	on(f, CmdAuthenticatorExtendVerify, func(tx *store.Tx, p *ExtendVerify) (any, error) {
		return nil, tx.VerifyAuthenticatorExtension(p.ID, p.IdentityID, p.Fingerprint, p.At)
	})
}
