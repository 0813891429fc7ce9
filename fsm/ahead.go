package fsm

// Speed-tuned: the apply of committed entries ahead of raft's delivery
// (ApplyCommitted), which the cluster's Node calls for a write this
// follower forwarded (cluster/applyahead.go; design note:
// docs/design/apply-ahead.md; off with cluster.Config.NoApplyAhead).
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'ApplyBatch_IdentityCreate' ./fsm/
//	correctness: TestApplyCommitted_RaftsLaterDeliveryChangesNothing, TestApplyCommitted_BesideRaftsDelivery,
//	             TestSnapshot_OfAModelAppliedAheadOfRaft (./fsm/)
//
// A change must keep: every change of the model and of the applied index
// under applyMu; entries at or below the applied index are never applied
// twice (ApplyBatch and StoreConfiguration skip them); the entries are
// applied as raft would hand them over (commands and configuration
// entries; no-ops and barriers only move the index).

import (
	"edgectl/cluster"

	"github.com/hashicorp/raft"
)

// ApplyCommitted applies this node's log entries after the applied index up
// to and including last, which the caller knows the cluster has committed,
// without waiting for raft to hand them over: a follower learns that its
// forwarded write committed from the leader's answer, while raft tells it
// only with a later AppendEntries, queued behind the ones before it, each
// with its fsync.
//
// read returns the entries from..to of this node's log. They must be known
// to be the leader's (the cluster's Node.awaitForwarded checks that the
// entry at to has the term the leader gave: by the Log Matching Property,
// every entry before it then is the leader's too); on an error nothing is
// applied. The entries are applied as raft would hand them over (commands
// and configuration entries; no-ops and barriers only move the index), and
// raft's later delivery of them is skipped (ApplyBatch). A snapshot of a
// model applied ahead of raft's index records the model's own index
// (Snapshot), so a restore from it skips them too. It reports whether it
// applied anything (false: the FSM had applied last already).
func (f *FSM) ApplyCommitted(last uint64, read func(from, to uint64) ([]*raft.Log, error)) (bool, error) {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	entries, ok, err := cluster.EntriesAhead(f.applied.Load(), last, read)
	if !ok {
		return false, err
	}
	f.applyBatch(entries, make([]any, len(entries)))
	f.setApplied(last)
	return true, nil
}
