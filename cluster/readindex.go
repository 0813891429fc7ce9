package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// rpcReadIndex asks the leader for a read index (see ReadIndex).
const rpcReadIndex = "cluster.read_index"

// ReadIndex makes a following read linearizable without writing to the log:
// when it returns nil, this node's FSM reflects every write that any node
// had acknowledged before ReadIndex was called. The leader takes its commit
// index, proves with one round of questions to a quorum that it still leads
// (confirmterm.go; not raft's VerifyLeader, which stale answers satisfy),
// and hands back the index of the last command at or
// below that commit index; the reading node then waits until its own FSM has
// applied it. A follower asks the leader over the cluster port.
//
// An old leader that was paused or cut off fails the quorum round and never
// answers from its own state; without a leader the call fails with an error
// wrapping ErrNoLeader after Config.LeaderWait (or when ctx ends).
//
// It returns the index it waited for: a read view taken when the FSM had
// applied at least that index was already current.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	idx, err := n.readIndex(ctx)
	if err != nil {
		return 0, err
	}
	return idx, n.WaitForApplied(ctx, idx)
}

// AppliedIndex is the index of the last command this node's FSM applied.
func (n *Node) AppliedIndex() uint64 { return n.fsm.AppliedIndex() }

// readIndex returns the FSM index a linearizable read must wait for.
func (n *Node) readIndex(ctx context.Context) (uint64, error) {
	out, err := n.leaderCall(ctx, rpcReadIndex, nil, true, n.readIndexLocal)
	if err != nil {
		return 0, err
	}
	if len(out) != 8 {
		return 0, errors.New("cluster: malformed read index response")
	}
	return binary.BigEndian.Uint64(out), nil
}

// readIndexLocal runs on the leader. Two subtleties:
//
//   - A new leader's commit index may still trail entries that the previous
//     leader committed, until an entry of its own term commits. One raft
//     Barrier per term (an entry of the term, applied before it returns)
//     settles that; later reads of the term skip it.
//   - The FSM sees commands and configuration entries but not raft's no-op
//     and barrier entries, so FSM.AppliedIndex may never reach a commit index
//     that points at one. The answer is the last entry at or below the commit
//     index that the FSM does see (logIndexForFSM).
func (n *Node) readIndexLocal(ctx context.Context) ([]byte, error) {
	if n.raft.State() != raft.Leader {
		return nil, ErrNotLeader
	}
	term := n.raft.CurrentTerm()
	if n.readTerm.Load() != term {
		if err := n.raft.Barrier(timeoutOf(ctx)).Error(); err != nil {
			return nil, mapCommitErr("read index", err)
		}
		n.readTerm.Store(term)
	}
	commit := n.raft.CommitIndex()
	if err := n.confirmTerm(ctx, term); err != nil {
		return nil, err
	}
	if n.raft.CurrentTerm() != term {
		return nil, fmt.Errorf("cluster: read index: %w (the term changed)", ErrNotLeader)
	}
	return binary.BigEndian.AppendUint64(nil, n.logIndexForFSM(commit)), nil
}

// logIndexForFSM is the index of the last log entry at or below index that
// reaches the FSM (a command or a configuration), or the FSM's applied index
// when every entry between the two does not. Normally the entry at index
// itself is a command, so this is one read of the log cache.
func (n *Node) logIndexForFSM(index uint64) uint64 {
	applied := n.fsm.AppliedIndex()
	var l raft.Log
	for i := index; i > applied; i-- {
		if err := n.logs.GetLog(i, &l); err != nil {
			// Compacted: a snapshot covers it, and a snapshot is only taken
			// of what the FSM applied.
			return i
		}
		if l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			return i
		}
	}
	return applied
}

// CaughtUp reports whether this node's FSM has applied every command up to
// the commit index it knows of (on a follower: what the leader last told it
// it had committed), waiting until ctx ends for it to get there. It returns
// the FSM's applied index and the index it had to reach.
func (n *Node) CaughtUp(ctx context.Context) (applied, target uint64, ok bool) {
	target = n.CommitTarget()
	if n.WaitForApplied(ctx, target) != nil {
		return n.fsm.AppliedIndex(), target, false
	}
	return n.fsm.AppliedIndex(), target, true
}

// CommitTarget is the index of the last command at or below the commit
// index this node knows of: the FSM index it has to apply to be current.
func (n *Node) CommitTarget() uint64 { return n.logIndexForFSM(n.raft.CommitIndex()) }
