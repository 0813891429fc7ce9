// Package api serves the Client API (/edge/client/v1) and the Management API
// (/edge/management/v1) over HTTPS: routing, the response envelope, errors,
// authentication of requests, lists, and one file per resource family.
//
// Handlers read from a store view and write only through fsm.Writer; they
// never touch Raft. Everything random or time-dependent (ids, timestamps,
// tokens, hashes) is decided here, before a command is proposed.
package api
