package cluster

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
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
// (docs/performance-history.md, Issue 16, part 12).

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
// (fsm.FSM.OnApplied). Every node's FSM is one (FSM): the node sets
// forwardWaits.applied as that function.
type ResultNoter interface {
	OnApplied(func(logs []*raft.Log, results []any))
}

// commitPoint is where a forwarded write's entry committed, and whether
// its answer was sent already (forwardWaits.committed).
type commitPoint struct {
	index, term uint64
	answered    bool
}

// commitWait is a leader's cluster.apply_commit handler waiting for its
// entry's commit: the channel that tells it, the RPC's reply, and the
// follower's applied index and how far behind it that may be for an
// answer at commit (applyAtCommit).
type commitWait struct {
	ch      chan<- commitPoint
	reply   *rpcReply // nil: the handler answers
	applied uint64
	within  uint64
}

// atCommit reports whether the write committed at index may be answered
// at commit: its follower is at most w.within entries behind it.
func (w commitWait) atCommit(index uint64) bool {
	return index < w.applied || index-w.applied <= w.within
}

// atCommitAnswer is the answer to a cluster.apply_commit at commit: the
// entry's index and term, and resultHere.
func atCommitAnswer(index, term uint64) []byte {
	out := make([]byte, 0, 17)
	out = binary.BigEndian.AppendUint64(out, index)
	out = binary.BigEndian.AppendUint64(out, term)
	return append(out, resultHere)
}

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
	commits map[uint64]commitWait
	results map[uint64]*resultSlot

	// On a leader, the answers at commit sent by committed, with the
	// commit, and by the handlers (Stats).
	sentWithCommit, sentByHandler atomic.Uint64
}

// expectCommit registers a leader's handler for the commit of the entry
// with the id; the channel gets one commit point. The handler's RPC reply
// (nil: none), the follower's applied index and how far behind the entry
// it may be are cw's.
func (w *forwardWaits) expectCommit(id uint64, cw commitWait) <-chan commitPoint {
	ch := make(chan commitPoint, 1)
	cw.ch = ch
	w.mu.Lock()
	if w.commits == nil {
		w.commits = make(map[uint64]commitWait)
	}
	w.commits[id] = cw
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
// to the FSM, so committed) where they committed. It runs on raft's FSM
// goroutine, before the entries are applied, and sends the answers at
// commit itself, one flush per connection, when it can without waiting
// (frameWriter.writeNow): woken instead, the handlers would each wait for
// a processor, behind the requests the node is serving, to send them.
// Measured with bench/sidebyside.sh, followers' rates went from
// 0.78-0.83x to 0.82-0.88x the leader's (docs/performance-history.md, Issue 16, part 13).
// Otherwise, each handler answers.
func (w *forwardWaits) committed(logs []*raft.Log) {
	if w.waiting.Load() == 0 {
		return
	}
	type answer struct {
		cw commitWait
		at commitPoint
	}
	type conn struct {
		w       *frameWriter
		frames  [][]byte
		answers []answer
	}
	var conns []conn // few: one per follower
	w.mu.Lock()
	for _, l := range logs {
		id := forwardID(l)
		cw, ok := w.commits[id]
		if id == 0 || !ok {
			continue
		}
		drop(w, w.commits, id)
		at := commitPoint{index: l.Index, term: l.Term}
		if cw.reply == nil || !cw.atCommit(l.Index) {
			cw.ch <- at
			continue
		}
		i := slices.IndexFunc(conns, func(c conn) bool { return c.w == cw.reply.w })
		if i < 0 {
			i = len(conns)
			conns = append(conns, conn{w: cw.reply.w})
		}
		conns[i].frames = append(conns[i].frames, cw.reply.frame(atCommitAnswer(l.Index, l.Term)))
		conns[i].answers = append(conns[i].answers, answer{cw, at})
	}
	w.mu.Unlock()
	for _, c := range conns {
		sent := c.w.writeNow(c.frames)
		if sent {
			w.sentWithCommit.Add(uint64(len(c.answers)))
		}
		for _, a := range c.answers {
			if sent {
				a.cw.reply.sent.Store(true)
				a.at.answered = true
			}
			a.cw.ch <- a.at
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
