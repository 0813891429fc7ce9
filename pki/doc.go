// Package pki owns the controller's internal certificate authority: the
// root and intermediate CA chain, issuing server and client certificates,
// signing and verifying enrollment JWTs, and checking the proofs an admin
// supplies when registering a third-party CA.
//
// Everything here is pure computation over values. The package never stores
// anything, never touches the network and never reads the clock: every
// time-dependent function takes the current time as a `now` argument. That
// matters because the CA keys live in the Raft-replicated model and FSM apply
// must be deterministic, so callers do the random work (keys, serials,
// certificates) with this package before proposing a command and replicate
// only the plain serializable results.
package pki

import "errors"

// Sentinel errors. Functions wrap them with %w (often together with the
// underlying library error), so test with errors.Is, never by message.
var (
	// ErrBadPEM means input was not PEM, held no block of the expected type,
	// or a block failed to parse.
	ErrBadPEM = errors.New("pki: bad PEM")

	// ErrInvalidState means a State failed validation in Load: a missing
	// field, a key that does not match its certificate, or a broken chain.
	ErrInvalidState = errors.New("pki: invalid CA state")

	// ErrKeyMismatch means a private key does not belong to its certificate.
	// It is wrapped together with ErrInvalidState by Load.
	ErrKeyMismatch = errors.New("pki: private key does not match certificate")

	// ErrUnsupportedKey means a public or private key type is not RSA,
	// ECDSA or Ed25519.
	ErrUnsupportedKey = errors.New("pki: unsupported key type")

	// ErrBadCSR means a certificate request could not be parsed or its
	// self-signature did not verify.
	ErrBadCSR = errors.New("pki: bad certificate request")

	// ErrBadRequest means an argument was unusable (empty name, non-positive
	// validity, unknown usage).
	ErrBadRequest = errors.New("pki: bad request")

	// ErrCANotValid means the issuing CA is not valid at the requested time,
	// so anything it signed would be useless.
	ErrCANotValid = errors.New("pki: CA certificate not valid at this time")

	// ErrInvalidToken means an enrollment JWT failed verification for any
	// reason other than expiry (signature, algorithm, kid, malformed).
	ErrInvalidToken = errors.New("pki: invalid enrollment token")

	// ErrTokenExpired means an enrollment JWT was well-signed but expired.
	ErrTokenExpired = errors.New("pki: enrollment token expired")

	// ErrProofNotSigned means a CA verification proof was not signed by the
	// CA being verified.
	ErrProofNotSigned = errors.New("pki: proof certificate not signed by CA")

	// ErrProofWrongCN means a CA verification proof's subject common name
	// differs from the verification token.
	ErrProofWrongCN = errors.New("pki: proof certificate common name does not match token")

	// ErrNotCA means a certificate offered as a CA lacks the CA basic
	// constraint.
	ErrNotCA = errors.New("pki: certificate is not a CA")

	// ErrNoCertSign means a CA certificate lacks the certificate-signing key
	// usage.
	ErrNoCertSign = errors.New("pki: CA certificate lacks cert-sign key usage")

	// ErrUntrustedChain means a client certificate chain did not verify
	// against the given roots for client authentication.
	ErrUntrustedChain = errors.New("pki: certificate chain not trusted")
)

// Usage selects the extended key usages of a certificate issued from a CSR.
type Usage int

const (
	// UsageClient issues a client-auth certificate (identities, routers
	// dialing the controller).
	UsageClient Usage = iota
	// UsageServer issues a server-auth certificate (a router's listener).
	UsageServer
	// UsageClientServer issues a certificate valid for both.
	UsageClientServer
)

// String names the usage for logs and errors.
func (u Usage) String() string {
	switch u {
	case UsageClient:
		return "client"
	case UsageServer:
		return "server"
	case UsageClientServer:
		return "client+server"
	default:
		return "unknown"
	}
}
