package cluster

// Speed-tuned: the follower's apply-ahead. A write this node forwarded is
// answered by the leader as soon as it commits; the follower then applies
// its own log up to that entry (the FSM's ApplyCommitted) instead of
// waiting for raft to tell it of the commit with a later AppendEntries.
// Design note: docs/design/apply-ahead.md. Setting: Config.NoApplyAhead
// (edgectl run --apply-ahead=false).
//
// Guarded by
//
//	speed:       bash bench/sidebyside.sh 64 10 1 (followers' writes against the leader's, and
//	             edgectl_raft_forwarded_writes_total{how}; docs/performance-history.md, issue 16 part 10);
//	             no go benchmark covers it. The apply itself: go test -run '^$' -bench 'ApplyBatch_IdentityCreate' ./fsm/
//	correctness: TestForward_AFollowerAppliesItsWriteAheadOfRaft, TestForward_AFollowerAppliesItsWriteBeforeItsOwnFsync,
//	             TestCommittedEntries_OnlyTheLeadersEntries, TestCommittedEntries_TakesTheBatchBeingStored,
//	             TestForward_WithApplyAheadOffAFollowerWaitsForRaft (./cluster/);
//	             TestApplyCommitted_* (./fsm/)
//
// A change must keep: only entries known to be the leader's are applied
// (the entry at the index has the term the leader gave; by the Log Matching
// Property so do those before it); never more than maxApplyAhead at once;
// on any doubt (no term, another term here, a read error) it waits for raft.

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// maxApplyAhead bounds the entries a follower applies ahead of raft for one
// write (awaitForwarded): a node further behind than that is catching up,
// and raft's own delivery, in larger batches, is the faster way.
const maxApplyAhead = 256

// CommittedApplier is an FSM that can apply committed entries ahead of
// raft's delivery (fsm.FSM.ApplyCommitted), and tell when its applied index
// moves.
type CommittedApplier interface {
	ApplyCommitted(last uint64, read func(from, to uint64) ([]*raft.Log, error)) (bool, error)
	// AppliedSignal returns the applied index and a channel closed when it
	// next moves.
	AppliedSignal() (uint64, <-chan struct{})
}

// EntriesAhead is the common part of an ApplyCommitted: it reads the
// entries after applied up to last with read and returns those an FSM
// applies (commands and configuration entries; no-ops and barriers only
// move the index), failing unless read returned each of them, in order.
// Nothing to apply (applied is at last already) is ok false.
func EntriesAhead(applied, last uint64, read func(from, to uint64) ([]*raft.Log, error)) (entries []*raft.Log, ok bool, err error) {
	from := applied + 1
	if from > last {
		return nil, false, nil
	}
	logs, err := read(from, last)
	if err != nil {
		return nil, false, err
	}
	if len(logs) != int(last-from+1) {
		return nil, false, fmt.Errorf("apply committed: %d entries read for %d..%d", len(logs), from, last)
	}
	entries = make([]*raft.Log, 0, len(logs))
	for i, l := range logs {
		if l == nil || l.Index != from+uint64(i) {
			return nil, false, fmt.Errorf("apply committed: entry %d missing", from+uint64(i))
		}
		if l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			entries = append(entries, l)
		}
	}
	return entries, true, nil
}

// awaitForwarded waits until this node's FSM has applied index, the entry
// of term term that the leader answered a forwarded write committed. A
// follower learns that an entry is committed from raft only with a later
// AppendEntries, handled after every one queued before it, each with its
// fsync; the leader's answer says so first. So as soon as that entry (the
// same index and term) has reached this node's log, stored or in the batch
// being stored (which raft hands to the log store only after checking that
// it follows the leader's log), it applies its log up to it itself: by the
// Log Matching Property the entries up to it are the leader's, and they are
// committed. Until then it waits for the entry to arrive or for raft to
// deliver it, whichever comes first. Without a term (the leader's log no
// longer held the entry), with an FSM that cannot apply ahead, or when the
// entry here turns out to be another (a term that differs: this
// node's log still holds an old leader's entries there) or too far ahead, it
// waits for raft.
func (n *Node) awaitForwarded(ctx context.Context, index, term uint64) error {
	ca, ok := n.fsm.(CommittedApplier)
	if !ok || term == 0 || n.cfg.NoApplyAhead {
		n.forwarded[forwardWaited].Add(1)
		return n.WaitForApplied(ctx, index)
	}
	how := forwardApplied
	for {
		var stored <-chan struct{} // nil once only raft's delivery is awaited
		if how != forwardWaited {
			stored = n.store.stored.wait()
		}
		applied, moved := ca.AppliedSignal()
		if applied >= index {
			n.forwarded[how].Add(1)
			return nil
		}
		if how != forwardWaited && n.store.lastArrived() >= index {
			ahead, err := ca.ApplyCommitted(index, n.committedEntries(term))
			switch {
			case err != nil:
				how = forwardWaited // raft's delivery only
			case ahead:
				how = forwardAhead
			}
			continue
		}
		select {
		case <-stored:
		case <-moved:
		case <-ctx.Done():
			n.forwarded[forwardWaited].Add(1)
			return ctx.Err()
		}
	}
}

// committedEntries reads this node's log entries from..to for
// ApplyCommitted, if the entry at to has the term term. Entries of the
// batch being stored are taken from it: an entry the leader says is
// committed is final whether or not this node's copy has reached its disk
// yet (a majority has it), so waiting for the local fsync would only delay
// the answer.
func (n *Node) committedEntries(term uint64) func(from, to uint64) ([]*raft.Log, error) {
	return func(from, to uint64) ([]*raft.Log, error) {
		if to-from >= maxApplyAhead {
			return nil, errors.New("too far behind")
		}
		// Read once: entries before the batch are stored, and an entry
		// the caller saw arriving that is not in it has been stored since.
		batch := n.store.arriving()
		get := func(i uint64) (*raft.Log, error) {
			if len(batch) > 0 && i >= batch[0].Index && i-batch[0].Index < uint64(len(batch)) {
				return batch[i-batch[0].Index], nil
			}
			l := new(raft.Log)
			return l, n.logs.GetLog(i, l)
		}
		logs := make([]*raft.Log, to-from+1)
		// The last entry first: once it is here with the leader's term, the
		// entries before it are the leader's and stay (they are committed).
		last, err := get(to)
		switch {
		case err != nil:
			return nil, err
		case last.Term != term:
			return nil, fmt.Errorf("entry %d is of term %d here, not %d", to, last.Term, term)
		}
		logs[len(logs)-1] = last
		for i := from; i < to; i++ {
			if logs[i-from], err = get(i); err != nil {
				return nil, err
			}
		}
		return logs, nil
	}
}

// How a follower came to have applied a write it forwarded (Stats).
const (
	forwardApplied = iota // applied already when the answer came (by raft, or ahead of it for another write)
	forwardAhead          // applied ahead of raft (awaitForwarded)
	forwardWaited         // waited for raft's delivery
	forwardKinds
)
