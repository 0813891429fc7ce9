// Package auth owns credentials: Argon2id password hashes, session tokens,
// and (as they land) certificates, external JWTs, TOTP, auth policies and
// lockout. It decides whether a credential is good; it never writes to the
// model itself: callers propose what it decides through the FSM.
package auth
