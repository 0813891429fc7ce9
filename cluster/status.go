package cluster

import (
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Read-only views of the node's raft state.

// Addr is the advertised cluster address (host:port).
func (n *Node) Addr() string { return n.advertise }

// ID is this node's raft server ID.
func (n *Node) ID() string { return n.id }

// IsLeader reports whether this node currently is the raft leader.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Leader returns the current leader's ID and cluster address as this node
// knows them ("" when unknown).
func (n *Node) Leader() (id, addr string) {
	a, i := n.raft.LeaderWithID()
	return string(i), string(a)
}

// Stats is a point-in-time view of this node's raft state.
type Stats struct {
	State             string // Follower, Candidate, Leader, Shutdown
	Term              uint64
	LastLogIndex      uint64
	CommitIndex       uint64
	AppliedIndex      uint64 // the FSM's, see FSM.AppliedIndex
	LastSnapshotIndex uint64
	// SnapshotsWriting is how many snapshots are being written now (taken
	// by this node or installed from the leader); SnapshotsWritten how many
	// were written since the node started.
	SnapshotsWriting int
	SnapshotsWritten uint64
	LastContact      time.Time // last contact from the leader (zero on the leader)
	LeaderID         string
	LeaderAddr       string
	// The writes this node forwarded to the leader since it started, by how
	// it came to have applied them before answering: applied already when
	// the leader's answer came (by raft, or ahead of raft for another
	// write), applied ahead of raft for this write (as soon as this node's
	// log held the entry the leader said was committed), or waited for
	// raft's delivery (the leader's log no longer held the entry, or this
	// node's log holding another entry there).
	ForwardedApplied uint64
	ForwardedAhead   uint64
	ForwardedWaited  uint64
	// The same writes by the leader's answer: at commit, the result being
	// this node's own FSM's (cluster.apply_commit), or after the leader's
	// apply, with the leader's result (a follower far behind).
	ForwardedAtCommit   uint64
	ForwardedAfterApply uint64
	// As the leader, the forwarded writes it answered at commit, by who
	// sent the answer: raft's apply goroutine, with the commit, or the
	// request's handler, woken by it (the connection was busy, or its
	// peer slow to acknowledge what it was sent).
	CommitAnswersSentWithCommit uint64
	CommitAnswersSentByHandler  uint64
}

// Stats returns the node's raft state.
func (n *Node) Stats() Stats {
	id, addr := n.Leader()
	s := Stats{
		State:        n.raft.State().String(),
		Term:         n.raft.CurrentTerm(),
		LastLogIndex: n.raft.LastIndex(),
		CommitIndex:  n.raft.CommitIndex(),
		AppliedIndex: n.fsm.AppliedIndex(),
		LeaderID:     id,
		LeaderAddr:   addr,

		SnapshotsWriting: int(n.snaps.activity.writing.Load()),
		SnapshotsWritten: n.snaps.activity.written.Load(),

		ForwardedApplied: n.forwarded[forwardApplied].Load(),
		ForwardedAhead:   n.forwarded[forwardAhead].Load(),
		ForwardedWaited:  n.forwarded[forwardWaited].Load(),

		ForwardedAtCommit:   n.answeredAtCommit.Load(),
		ForwardedAfterApply: n.answeredAfterApply.Load(),

		CommitAnswersSentWithCommit: n.waits.sentWithCommit.Load(),
		CommitAnswersSentByHandler:  n.waits.sentByHandler.Load(),
	}
	if !n.IsLeader() {
		s.LastContact = n.raft.LastContact()
	}
	if !n.closed.Load() {
		s.LastSnapshotIndex, _ = strconv.ParseUint(n.raft.Stats()["last_snapshot_index"], 10, 64)
	}
	return s
}

// signal is a broadcast: wait returns a channel that is closed by the next
// fire. Cheaper than a sync.Cond when waiters also need select/timeouts.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) init() { s.ch = make(chan struct{}) }

func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	close(s.ch)
	s.ch = make(chan struct{})
	s.mu.Unlock()
}

// SetSnapshotThreshold changes how many log entries raft lets pass between
// automatic snapshots, at run time.
func (n *Node) SetSnapshotThreshold(entries uint64) error {
	rc := n.raft.ReloadableConfig()
	if rc.SnapshotThreshold == entries {
		return nil
	}
	rc.SnapshotThreshold = entries
	return n.raft.ReloadConfig(rc)
}

// SnapshotThreshold is the current number of entries between automatic snapshots.
func (n *Node) SnapshotThreshold() uint64 { return n.raft.ReloadableConfig().SnapshotThreshold }
