// Package controller assembles one node of the controller: data directory,
// node identity and certificates, the Raft node, the FSM and model, the HTTPS
// APIs and the background maintenance, and runs them until shutdown.
//
// It owns the start-up sequence (first start bootstraps a one-node cluster
// with the bootstrap records; a later start resumes) and the files under the
// data dir that live outside Raft. It holds no request logic.
package controller
