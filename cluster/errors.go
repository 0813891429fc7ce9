package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// Sentinel errors. Test them with errors.Is, never by comparing strings; an
// error may wrap several (ErrOutcomeUnknown with ErrShutdown or
// raft.ErrLeadershipLost, ErrNoLeader with context.DeadlineExceeded). Errors
// produced on another
// node travel as a numeric code next to the message, so a forwarded write that
// failed with ErrNoLeader on the leader is still errors.Is(err, ErrNoLeader)
// on the follower that forwarded it.
var (
	// ErrNoLeader: no leader was known within Config.LeaderWait (or before
	// the caller's context ended).
	ErrNoLeader = errors.New("cluster: no leader")
	// ErrNotLeader: a leader-only operation reached a node that is not the
	// leader. Node's own methods forward instead of returning it; it shows up
	// from CallRPC or from handlers that choose to return it.
	ErrNotLeader = errors.New("cluster: not the leader")
	// ErrSnapshotRunning: Node.Snapshot was called while another user
	// snapshot of this node was still being taken.
	ErrSnapshotRunning = errors.New("cluster: snapshot already running")
	// ErrShutdown: the node (or the remote node) is shut down.
	ErrShutdown = errors.New("cluster: node is shut down")
	// ErrUnknownRPC: the remote node has no handler for the RPC name
	// (typically a version skew between nodes).
	ErrUnknownRPC = errors.New("cluster: unknown rpc")
	// ErrOutcomeUnknown: the operation may or may not have taken effect
	// (leadership was lost while the entry was in flight, or the connection
	// to the leader broke after the request was sent). It is not retried
	// automatically because commands need not be idempotent; callers may
	// retry idempotent commands or re-read the state.
	ErrOutcomeUnknown = errors.New("cluster: outcome unknown")
)

// Wire error codes (one byte in a response frame). Values are part of the
// protocol between nodes: never renumber, only append.
const (
	codeOK                 byte = 0
	codeError              byte = 1 // generic; message only
	codeNoLeader           byte = 2
	codeNotLeader          byte = 3
	codeSnapshotRunning    byte = 4
	codeShutdown           byte = 5
	codeUnknownRPC         byte = 6
	codeDeadline           byte = 7
	codeCanceled           byte = 8
	codeLeadershipLost     byte = 9
	codeTransferInProgress byte = 10
	codeUnauthorized       byte = 11
	// codeRefused: the node is shutting down and did not run the handler at
	// all. Unlike codeShutdown (which a handler may return after it already
	// proposed an entry) this one is always safe to retry elsewhere.
	codeRefused        byte = 12
	codeOutcomeUnknown byte = 13
)

// errUnauthorized is returned to peers without a client certificate calling an
// internal RPC (only possible when the TLS config does not require one).
var errUnauthorized = errors.New("cluster: client certificate required")

// codeSentinels maps a wire code to the sentinels a remote error unwraps to.
var codeSentinels = map[byte][]error{
	codeNoLeader:           {ErrNoLeader},
	codeNotLeader:          {ErrNotLeader},
	codeSnapshotRunning:    {ErrSnapshotRunning},
	codeShutdown:           {ErrShutdown},
	codeUnknownRPC:         {ErrUnknownRPC},
	codeDeadline:           {context.DeadlineExceeded},
	codeCanceled:           {context.Canceled},
	codeLeadershipLost:     {raft.ErrLeadershipLost, ErrOutcomeUnknown},
	codeTransferInProgress: {raft.ErrLeadershipTransferInProgress},
	codeUnauthorized:       {errUnauthorized},
	codeRefused:            {ErrShutdown},
	codeOutcomeUnknown:     {ErrOutcomeUnknown},
}

// errorCode picks the wire code for err. The order matters only for errors
// wrapping several sentinels; the more specific raft conditions come first.
func errorCode(err error) byte {
	switch {
	case err == nil:
		return codeOK
	case errors.Is(err, ErrNoLeader):
		return codeNoLeader
	case errors.Is(err, ErrNotLeader), errors.Is(err, raft.ErrNotLeader):
		return codeNotLeader
	case errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return codeTransferInProgress
	case errors.Is(err, raft.ErrLeadershipLost):
		return codeLeadershipLost
	case errors.Is(err, ErrOutcomeUnknown):
		return codeOutcomeUnknown
	case errors.Is(err, ErrSnapshotRunning):
		return codeSnapshotRunning
	case errors.Is(err, ErrShutdown), errors.Is(err, raft.ErrRaftShutdown):
		return codeShutdown
	case errors.Is(err, ErrUnknownRPC):
		return codeUnknownRPC
	case errors.Is(err, errUnauthorized):
		return codeUnauthorized
	case errors.Is(err, context.DeadlineExceeded):
		return codeDeadline
	case errors.Is(err, context.Canceled):
		return codeCanceled
	}
	return codeError
}

// RemoteError is an error returned by another node's RPC handler. Message is
// the remote error text; errors.Is works against the sentinel the remote
// error wrapped (ErrNoLeader, ErrNotLeader, ErrSnapshotRunning, ErrShutdown,
// ErrUnknownRPC, ErrOutcomeUnknown, context.DeadlineExceeded,
// context.Canceled, raft.ErrLeadershipLost,
// raft.ErrLeadershipTransferInProgress). Other errors keep only their text.
type RemoteError struct {
	Addr    string // node that produced the error
	Code    byte   // wire code
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("cluster: remote %s: %s", e.Addr, e.Message)
}

// Unwrap returns the sentinels that the remote error wrapped, if any.
func (e *RemoteError) Unwrap() []error { return codeSentinels[e.Code] }

// mapRaftErr turns raft's errors into this package's sentinels where one
// exists, keeping raft's error in the chain for callers who care.
func mapRaftErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("cluster: %s: %w", op, ErrShutdown)
	case errors.Is(err, raft.ErrNotLeader):
		return fmt.Errorf("cluster: %s: %w", op, ErrNotLeader)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		// Never proposed; report it like any other expired deadline.
		return fmt.Errorf("cluster: %s: %w: %w", op, err, context.DeadlineExceeded)
	}
	return fmt.Errorf("cluster: %s: %w", op, err)
}

// retryable reports whether an operation failed in a way that guarantees it
// was not carried out, so that it is safe to try again on the (new) leader.
// ErrOutcomeUnknown (raft.ErrLeadershipLost, a connection lost after the
// request was written) is deliberately absent: the entry may still commit.
func retryable(err error) bool {
	var ns *notSentError
	switch {
	case errors.As(err, &ns):
		return true
	case errors.Is(err, ErrNotLeader), errors.Is(err, raft.ErrNotLeader),
		errors.Is(err, ErrNoLeader),
		errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return true
	}
	// A remote node that was shutting down refused the request without
	// running its handler.
	var re *RemoteError
	return errors.As(err, &re) && re.Code == codeRefused
}

// notSentError marks transport failures where the request never left this
// node (dial failure, connection already closed), which makes a retry safe.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }
