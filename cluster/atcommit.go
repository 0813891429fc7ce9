package cluster

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Forwarded writes answered at commit (cluster.apply_commit).
//
// A follower's forwarded write needs two things before the follower
// answers: the entry committed, and applied on the follower. The leader's
// own apply of it adds nothing to either: the FSM is deterministic, so the
// follower's apply gives the same result. So the follower draws an id for
// the write, the leader proposes the command with that id in the entry's
// Extensions and answers with the entry's index and term as soon as raft
// hands the entry to the FSM (it is committed then), before applying it;
// the follower applies its log up to the entry (awaitForwarded) and takes
// the result its own FSM gave that entry: the FSM passes each entry it
// applies, by raft's delivery or ahead of it, with its result, to
// forwardWaits.applied before its applied index moves past the entry
// (ResultNoter), which notes the results by the id. Measured with
// bench/sidebyside.sh: the leader's apply and its answer after it were
// 1.5 ms of a follower's 3.5 ms more than the leader's own writes at p50
// (docs/performance.md, part 12).

// extForwardID tags an entry's Extensions as a forwarded write's id: the
// tag byte, then the id (8 bytes, big-endian).
const extForwardID byte = 1

func forwardIDExtension(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{extForwardID}, id)
}

// forwardID is the id in l's Extensions, or 0.
func forwardID(l *raft.Log) uint64 {
	if len(l.Extensions) != 9 || l.Extensions[0] != extForwardID {
		return 0
	}
	return binary.BigEndian.Uint64(l.Extensions[1:])
}

// ResultNoter is an FSM that passes the entries it applies, with their
// results, to a function, before its applied index moves past them
// (fsm.FSM.OnApplied). A node forwards writes as cluster.apply_commit only
// with such an FSM, and sets forwardWaits.applied as that function.
type ResultNoter interface {
	OnApplied(func(logs []*raft.Log, results []any))
}

// commitPoint is where a forwarded write's entry committed.
type commitPoint struct{ index, term uint64 }

// resultSlot holds the result this node's FSM gave a forwarded write's
// entry and the entry's index, 0 until it is applied here (guarded by
// forwardWaits.mu).
type resultSlot struct {
	index uint64
	res   any
}

// forwardWaits are the forwarded writes waiting on this node: on a leader,
// the cluster.apply_commit handlers waiting for their entry's commit; on a
// follower, the writes it forwarded, waiting for their entry's result here.
type forwardWaits struct {
	waiting atomic.Int32 // entries in both maps: ApplyBatch skips the lock when none
	mu      sync.Mutex
	commits map[uint64]chan<- commitPoint
	results map[uint64]*resultSlot
}

// expectCommit registers a leader's handler for the commit of the entry
// with the id; the channel gets one commit point.
func (w *forwardWaits) expectCommit(id uint64) <-chan commitPoint {
	ch := make(chan commitPoint, 1)
	w.mu.Lock()
	if w.commits == nil {
		w.commits = make(map[uint64]chan<- commitPoint)
	}
	w.commits[id] = ch
	w.waiting.Add(1)
	w.mu.Unlock()
	return ch
}

func (w *forwardWaits) dropCommit(id uint64) {
	w.mu.Lock()
	drop(w, w.commits, id)
	w.mu.Unlock()
}

// drop removes id from m, one of w's maps; w.mu is held.
func drop[V any](w *forwardWaits, m map[uint64]V, id uint64) {
	if _, ok := m[id]; ok {
		delete(m, id)
		w.waiting.Add(-1)
	}
}

// expectResult draws an id for a write this node forwards and registers
// it, so that the result of its entry is noted when this node applies it.
func (w *forwardWaits) expectResult() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.results == nil {
		w.results = make(map[uint64]*resultSlot)
	}
	for {
		id := rand.Uint64()
		if _, taken := w.results[id]; id != 0 && !taken {
			w.results[id] = new(resultSlot)
			w.waiting.Add(1)
			return id
		}
	}
}

// result returns the result noted for the entry at index of the write
// with the id; ok is false if this node did not apply that entry itself
// (it restored a snapshot past it).
func (w *forwardWaits) result(id, index uint64) (res any, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.results[id]
	if s == nil || s.index != index {
		return nil, false
	}
	return s.res, true
}

func (w *forwardWaits) dropResult(id uint64) {
	w.mu.Lock()
	drop(w, w.results, id)
	w.mu.Unlock()
}

// committed tells the leader's handlers waiting for these entries (handed
// to the FSM, so committed) where they committed.
func (w *forwardWaits) committed(logs []*raft.Log) {
	if w.waiting.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range logs {
		if id := forwardID(l); id != 0 {
			if ch, ok := w.commits[id]; ok {
				ch <- commitPoint{l.Index, l.Term}
				drop(w, w.commits, id)
			}
		}
	}
}

// applied notes the results this node's FSM gave the entries of the
// writes it forwarded (ResultNoter). Only the first apply of an entry
// counts.
func (w *forwardWaits) applied(logs []*raft.Log, results []any) {
	if w.waiting.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, l := range logs {
		if id := forwardID(l); id != 0 {
			if s, ok := w.results[id]; ok && s.index == 0 {
				s.index, s.res = l.Index, results[i]
			}
		}
	}
}

// resultFSM is the FSM raft is given: the node's FSM, with the leader's
// handlers told of their entries' commits as raft hands entries over.
type resultFSM struct {
	FSM
	waits *forwardWaits
}

// ApplyBatch tells the waiting handlers that the entries committed, then
// applies them (in one call if the FSM takes batches, else one by one as
// raft would).
func (f resultFSM) ApplyBatch(logs []*raft.Log) []any {
	f.waits.committed(logs)
	var out []any
	if b, ok := f.FSM.(raft.BatchingFSM); ok {
		out = b.ApplyBatch(logs)
	} else {
		out = make([]any, len(logs))
		cs, _ := f.FSM.(raft.ConfigurationStore)
		for i, l := range logs {
			switch l.Type {
			case raft.LogCommand:
				out[i] = f.FSM.Apply(l)
			case raft.LogConfiguration:
				if cs != nil {
					cs.StoreConfiguration(l.Index, raft.DecodeConfiguration(l.Data))
				}
			}
		}
	}
	return out
}
