package fsm

import (
	"time"

	"edgectl/store"
)

// Commands of the authentication family: auth policies, authenticators, CAs,
// external JWT signers and enrollments. Added, never renamed or reused.
var (
	CmdAuthPolicyCreate           = command("authPolicy.create", 1)
	CmdAuthPolicyUpdate           = command("authPolicy.update", 1)
	CmdAuthPolicyDelete           = command("authPolicy.delete", 1)
	CmdAuthenticatorUpdate        = command("authenticator.update", 1)
	CmdAuthenticatorDelete        = command("authenticator.delete", 1)
	CmdAuthenticatorReEnroll      = command("authenticator.reEnroll", 1)
	CmdAuthenticatorRequestExtend = command("authenticator.requestExtend", 1)
	CmdCACreate                   = command("ca.create", 1)
	CmdCAUpdate                   = command("ca.update", 1)
	CmdCAVerify                   = command("ca.verify", 1)
	CmdCADelete                   = command("ca.delete", 1)
	CmdExtJWTSignerCreate         = command("externalJwtSigner.create", 1)
	CmdExtJWTSignerUpdate         = command("externalJwtSigner.update", 1)
	CmdExtJWTSignerDelete         = command("externalJwtSigner.delete", 1)
	CmdEnrollmentCreate           = command("enrollment.create", 1)
	CmdEnrollmentRefresh          = command("enrollment.refresh", 1)
	CmdEnrollmentDelete           = command("enrollment.delete", 1)
)

// EnrollmentCreate is the payload of CmdEnrollmentCreate. At is the time of
// the request: enrollments that expired by then no longer block a new one.
type EnrollmentCreate struct {
	Enrollment *store.Enrollment `json:"enrollment"`
	At         time.Time         `json:"at"`
}

// EnrollmentRefresh is the payload of CmdEnrollmentRefresh.
type EnrollmentRefresh struct {
	ID        string    `json:"id"`
	Token     string    `json:"token"`
	JWT       string    `json:"jwt"`
	ExpiresAt time.Time `json:"expiresAt"`
	At        time.Time `json:"at"`
}

// AuthenticatorReEnroll is the payload of CmdAuthenticatorReEnroll: the authenticator to
// delete and the enrollment that replaces it.
type AuthenticatorReEnroll struct {
	ID         string            `json:"id"`
	Enrollment *store.Enrollment `json:"enrollment"`
	At         time.Time         `json:"at"`
}

// AuthenticatorExtendRequest is the payload of CmdAuthenticatorRequestExtend.
type AuthenticatorExtendRequest struct {
	ID       string    `json:"id"`
	RollKeys bool      `json:"rollKeys"`
	At       time.Time `json:"at"`
}

// CAVerify is the payload of CmdCAVerify.
type CAVerify struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// CADelete is the payload of CmdCADelete: the CA and the cert authenticators
// whose certificates it signed (found by the proposer).
type CADelete struct {
	ID               string   `json:"id"`
	AuthenticatorIDs []string `json:"authenticatorIds"`
}

func registerAuthn(f *FSM) {
	on(f, CmdAuthPolicyCreate, func(tx *store.Tx, p *store.AuthPolicy) (any, error) { return nil, tx.CreateAuthPolicy(p) })
	on(f, CmdAuthPolicyUpdate, func(tx *store.Tx, p *Update) (any, error) { return nil, tx.UpdateAuthPolicy(p.ID, p.Patch, p.At) })
	on(f, CmdAuthPolicyDelete, func(tx *store.Tx, p *Delete) (any, error) { return nil, tx.DeleteAuthPolicy(p.ID) })

	on(f, CmdAuthenticatorUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateAuthenticator(p.ID, p.Patch, p.At)
	})
	on(f, CmdAuthenticatorDelete, func(tx *store.Tx, p *Delete) (any, error) { return nil, tx.DeleteAuthenticator(p.ID) })
	on(f, CmdAuthenticatorReEnroll, func(tx *store.Tx, p *AuthenticatorReEnroll) (any, error) {
		return nil, tx.ReEnrollAuthenticator(p.ID, p.Enrollment, p.At)
	})
	on(f, CmdAuthenticatorRequestExtend, func(tx *store.Tx, p *AuthenticatorExtendRequest) (any, error) {
		return nil, tx.RequestExtendAuthenticator(p.ID, p.RollKeys, p.At)
	})

	on(f, CmdCACreate, func(tx *store.Tx, ca *store.CA) (any, error) { return nil, tx.CreateCA(ca) })
	on(f, CmdCAUpdate, func(tx *store.Tx, p *Update) (any, error) { return nil, tx.UpdateCA(p.ID, p.Patch, p.At) })
	on(f, CmdCAVerify, func(tx *store.Tx, p *CAVerify) (any, error) { return nil, tx.VerifyCA(p.ID, p.At) })
	on(f, CmdCADelete, func(tx *store.Tx, p *CADelete) (any, error) { return nil, tx.DeleteCA(p.ID, p.AuthenticatorIDs) })

	on(f, CmdExtJWTSignerCreate, func(tx *store.Tx, s *store.ExternalJWTSigner) (any, error) {
		return nil, tx.CreateExternalJWTSigner(s)
	})
	on(f, CmdExtJWTSignerUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateExternalJWTSigner(p.ID, p.Patch, p.At)
	})
	on(f, CmdExtJWTSignerDelete, func(tx *store.Tx, p *Delete) (any, error) { return nil, tx.DeleteExternalJWTSigner(p.ID) })

	on(f, CmdEnrollmentCreate, func(tx *store.Tx, p *EnrollmentCreate) (any, error) {
		return nil, tx.CreateEnrollment(p.Enrollment, p.At)
	})
	on(f, CmdEnrollmentRefresh, func(tx *store.Tx, p *EnrollmentRefresh) (any, error) {
		return nil, tx.RefreshEnrollment(p.ID, p.Token, p.JWT, p.ExpiresAt, p.At)
	})
	on(f, CmdEnrollmentDelete, func(tx *store.Tx, p *Delete) (any, error) { return nil, tx.DeleteEnrollment(p.ID) })
}
