// Package auth owns credentials: Argon2id password hashes, API session
// tokens and the key that signs them, certificate authentication, external
// JWTs, TOTP (with sealed secrets), the throttle of failed attempts and the
// API sessions' activity and expiry. It decides whether a credential is good; it never writes to the
// model itself: callers propose what it decides through the FSM.
package auth
