// Package fsm applies replicated commands to the model. A command is a JSON
// envelope {"type", "payload"}; each type has one handler, registered in an
// explicit table built by New. Apply decodes, calls one model method, and
// returns the encoded result; it never reads the clock, draws randomness or
// does I/O, so every node reaches the same state from the same log.
//
// Writer is the one write path the API uses: build a command, propose it
// through the cluster (which forwards to the leader and waits until this node
// applied it), and turn the result back into a value or a domain error.
package fsm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/cluster"
	"edgectl/store"

	"github.com/hashicorp/raft"
)

// CommandType names a command. Types are added, never renamed or reused:
// the log keeps them forever.
type CommandType string

// Command is the envelope of every replicated write.
type Command struct {
	Type    CommandType     `json:"type"`
	Payload json.RawMessage `json:"payload"`
	// At is when the proposer made the command; Apply uses it as the time of
	// the change (change markers), never the clock of the applying node.
	At time.Time `json:"at,omitempty"`
	// Actor is who asked for the command, for its events (nil for the
	// node's own commands).
	Actor *store.EventActor `json:"actor,omitempty"`
}

// result is what Apply returns, encoded, to the proposer.
type result struct {
	Data  json.RawMessage `json:"data,omitempty"`
	Error *store.Error    `json:"error,omitempty"`
}

// cmdHeader is a command's envelope without its payload.
type cmdHeader struct {
	Type  CommandType       `json:"type"`
	At    time.Time         `json:"at,omitempty"`
	Actor *store.EventActor `json:"actor,omitempty"`
	// RID is the request id of a command proposed by a Writer (outcomes.go).
	RID string `json:"rid,omitempty"`
}

// A handler decodes a whole entry, envelope and payload in one pass (the
// JSON decoder walks every byte twice per call, and an envelope decoded
// first into a RawMessage would walk the payload twice more), and returns
// the envelope and what applies the command.
type handler func(entry []byte) (cmdHeader, func(tx *store.Tx) (any, error), error)

// FSM is the raft.FSM of the controller.
type FSM struct {
	store    *store.Store
	handlers map[CommandType]handler

	// applyMu orders every change of the model and of applied: raft's
	// deliveries, the applies ahead of raft (ApplyCommitted), restores, and
	// the snapshots that must see the model and its index together.
	applyMu sync.Mutex
	applied atomic.Uint64
	emitted sync.Map // event namespace → *atomic.Uint64: events recorded by this node's FSM
	mu      sync.Mutex
	notify  chan struct{} // closed and replaced whenever applied moves

	outcomes outcomes // results by request id (outcomes.go)

	// onApplied, if set (OnApplied), gets the entries this FSM applies and
	// their results before its applied index moves past them.
	onApplied func(logs []*raft.Log, results []any)

	// watcher, if set (Watch), gets the record changes of every command
	// applied; pending holds those of the batch being applied, committed
	// the length of pending that is in a committed transaction.
	watcher   Watcher
	pending   []Changes
	committed int
}

// Changes are the record changes one log entry made.
type Changes struct {
	Index   uint64
	Changes []store.Change
}

// Watcher follows the model's changes: Applied gets the changes of each
// batch once it is committed to the model, before the applied index moves
// past it, in log order; Restored is called after a snapshot replaced the
// model (whose changes are not passed: the watcher must start over from the
// model as it is). Both run under the FSM's apply lock: they must not block.
type Watcher interface {
	Applied(sets []Changes)
	Restored(index uint64)
}

// Watch sets the model's watcher; it sees the changes applied from then on.
func (f *FSM) Watch(w Watcher) {
	f.applyMu.Lock()
	f.watcher = w
	f.applyMu.Unlock()
}

// OnApplied sets a function that gets every batch of entries this FSM
// applies, by raft's delivery or ahead of it, with their results as
// ApplyBatch returns them, before the applied index moves past them (so a
// waiter that sees the index sees the results noted). Entries applied
// ahead are not passed again when raft hands them over; a restore passes
// nothing. Set it before the FSM applies anything (the cluster's Node does,
// for the writes it forwards: cluster/atcommit.go).
func (f *FSM) OnApplied(fn func(logs []*raft.Log, results []any)) {
	f.applyMu.Lock()
	f.onApplied = fn
	f.applyMu.Unlock()
}

// New returns an FSM that applies commands to s.
func New(s *store.Store) *FSM {
	f := &FSM{store: s, handlers: map[CommandType]handler{}, notify: make(chan struct{})}
	registerBootstrap(f)
	registerIdentities(f)
	registerAPISessions(f)
	registerAuthn(f)
	registerMFA(f)
	registerServices(f)
	registerPolicies(f)
	registerMaintenance(f)
	registerCluster(f)
	registerEvents(f)
	registerClusterEvents(f)
	registerClientSessions(f)
	registerPosture(f)
	registerRouters(f)
	registerRouterEvents(f)
	registerEnroll(f)
	return f
}

// register adds the handler of a command type; a type registered twice is a programming error.
func (f *FSM) register(t CommandType, h handler) {
	if _, dup := f.handlers[t]; dup {
		panic(fmt.Sprintf("fsm: command %q registered twice", t))
	}
	f.handlers[t] = h
}

// on registers a handler whose payload decodes into P.
func on[P any](f *FSM, t CommandType, fn func(tx *store.Tx, p *P) (any, error)) {
	fast, _ := fastEntryDecoders[t].(func([]byte, *entryOf[P]) bool) // fastdecode.go
	f.register(t, func(entry []byte) (cmdHeader, func(*store.Tx) (any, error), error) {
		var c entryOf[P]
		if fast == nil || !decodeFast(fast, entry, &c) {
			c = entryOf[P]{}
			// store.DecodeJSON: encoding/json/v2 with v1's semantics, about
			// half the time of encoding/json on every node for every command
			// (BenchmarkDecodeEntry_IdentityCreate).
			if err := store.DecodeJSON(entry, &c); err != nil {
				return cmdHeader{}, nil, fmt.Errorf("entry of %s: %v", t, err)
			}
		}
		if c.Payload == nil { // "payload": null or none: the zero payload
			c.Payload = new(P)
		}
		return c.cmdHeader, func(tx *store.Tx) (any, error) { return fn(tx, c.Payload) }, nil
	})
}

// entryOf is a whole entry whose payload decodes into P.
type entryOf[P any] struct {
	cmdHeader
	Payload *P `json:"payload"`
}

// commandType reads the type of an entry without decoding it: the envelope
// begins with it (writer.go's envelope, and json.Marshal of Command in
// earlier releases). An entry of another shape is decoded for it.
func commandType(entry []byte) (CommandType, error) {
	if rest, ok := bytes.CutPrefix(entry, []byte(`{"type":"`)); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
			return CommandType(rest[:i]), nil
		}
	}
	var h cmdHeader
	err := json.Unmarshal(entry, &h)
	return h.Type, err
}

var errCorrupt = errors.New("corrupt log entry")

// Apply applies one committed entry (raft applies them in batches,
// ApplyBatch; this is the same for a single command).
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		f.setApplied(l.Index)
		return nil
	}
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies the command and configuration entries raft hands over
// together in one write transaction of the model: the radix path copies,
// the commit and the readers' new view are paid once per batch instead of
// once per command. Each command still succeeds or fails alone. A command
// that fails before writing leaves nothing to undo; one that fails after it
// wrote is undone by starting over: the entries before it are applied again
// to a fresh transaction (deterministic: the same model and the same
// entries give the same writes) and committed, and the batch goes on after
// the failed command.
//
// Entries this FSM already applied ahead of raft (ApplyCommitted) are not
// applied again; their results are nil. No future waits for them: a node
// applies ahead only entries another leader committed, below any index it
// could propose at as a leader itself.
func (f *FSM) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	first := 0
	for applied := f.applied.Load(); first < len(logs) && logs[first].Index <= applied; first++ {
	}
	f.applyBatch(logs[first:], out[first:])
	return out
}

// applyBatch applies logs in one write transaction and puts their results
// in out; f.applyMu is held.
func (f *FSM) applyBatch(logs []*raft.Log, out []any) {
	if len(logs) == 0 {
		return
	}
	tx := f.store.Write()
	var recorded []*store.Event
	start := 0 // the first entry applied to tx
	f.pending, f.committed = f.pending[:0], 0
	for i, l := range logs {
		w := tx.Writes()
		res, events, failed := f.applyEntry(tx, l)
		out[i] = res
		if !failed {
			recorded = append(recorded, events...)
			continue
		}
		if tx.Writes() == w {
			continue
		}
		tx.Abort()
		f.pending = f.pending[:f.committed]
		if i > start {
			tx = f.store.Write()
			for _, again := range logs[start:i] {
				f.applyEntry(tx, again)
			}
			tx.Commit()
		}
		f.committed = len(f.pending)
		tx = f.store.Write()
		start = i + 1
	}
	tx.Commit()
	f.countEvents(recorded)
	if f.watcher != nil && len(f.pending) > 0 {
		f.watcher.Applied(f.pending)
		f.pending = nil // the watcher keeps them
	}
	if f.onApplied != nil {
		f.onApplied(logs, out)
	}
	f.setApplied(logs[len(logs)-1].Index)
}

// applyEntry applies one entry to tx: a command (its encoded result, its
// events, and whether it failed, in which case tx holds whatever it wrote
// before failing) or a configuration entry (its membership events).
func (f *FSM) applyEntry(tx *store.Tx, l *raft.Log) (res any, events []*store.Event, failed bool) {
	switch l.Type {
	case raft.LogCommand:
		return f.applyCommand(tx, l)
	case raft.LogConfiguration:
		events, err := configurationEvents(tx, l.Index, raft.DecodeConfiguration(l.Data))
		return nil, events, err != nil
	}
	return nil, nil, false
}

func (f *FSM) applyCommand(tx *store.Tx, l *raft.Log) (res any, events []*store.Event, failed bool) {
	t, err := commandType(l.Data)
	if err != nil {
		// Every node would fail here alike: an undecodable entry is a corrupt log, and going on would diverge.
		panic(fmt.Sprintf("fsm: entry %d: %v: %v", l.Index, errCorrupt, err))
	}
	h, ok := f.handlers[t]
	if !ok {
		panic(fmt.Sprintf("fsm: entry %d: %v: unknown command type %q (is this node older than the cluster?)", l.Index, errCorrupt, t))
	}
	c, run, err := h(l.Data)
	if err == nil && c.Type != t {
		err = fmt.Errorf("the envelope names type %q and then %q", t, c.Type)
	}
	if err != nil {
		panic(fmt.Sprintf("fsm: entry %d: %v: %v", l.Index, errCorrupt, err))
	}
	if c.RID != "" {
		defer func() { f.outcomes.record(c.RID, res) }()
	}
	tx.SetTime(c.At)
	on := tx.EventsOn()
	tx.TrackChanges(on || f.watcher != nil)
	data, err := run(tx)
	if err == nil {
		err = tx.Finish()
	}
	if err == nil && f.watcher != nil {
		if ch := tx.Changes(); len(ch) > 0 {
			f.pending = append(f.pending, Changes{Index: l.Index, Changes: ch})
		}
	}
	if err == nil && on {
		events, err = appendCommandEvents(tx, c.Type, data, l.Index, c.At, c.Actor)
	}
	if err != nil {
		var de *store.Error
		if !errors.As(err, &de) {
			if errors.Is(err, errCorrupt) {
				panic(fmt.Sprintf("fsm: entry %d: %v", l.Index, err))
			}
			de = &store.Error{Kind: "internal", Message: err.Error()}
		}
		return encode(result{Error: de}), nil, true
	}
	if data == nil {
		return nil, events, false
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return encode(result{Error: &store.Error{Kind: "internal", Message: err.Error()}}), events, false
	}
	return encode(result{Data: raw}), events, false
}

func encode(r result) []byte {
	b, _ := json.Marshal(r)
	return b
}

func (f *FSM) setApplied(i uint64) {
	f.mu.Lock()
	if i > f.applied.Load() {
		f.applied.Store(i)
		close(f.notify)
		f.notify = make(chan struct{})
	}
	f.mu.Unlock()
}

// StoreConfiguration counts configuration entries as applied, so waiting for
// an index that is a membership change does not hang, and records the
// membership events once the cluster namespace is on (when raft applies
// entries one by one; ApplyBatch does the same for those in a batch).
func (f *FSM) StoreConfiguration(index uint64, c raft.Configuration) {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if index <= f.applied.Load() {
		return // applied ahead of raft (ApplyCommitted)
	}
	defer f.setApplied(index)
	tx := f.store.Write()
	events, err := configurationEvents(tx, index, c)
	if err != nil {
		tx.Abort() // deterministic on every member: the same model, the same entry
		return
	}
	tx.Commit()
	f.countEvents(events)
}

// configurationEvents records the membership events of a configuration
// entry once the cluster namespace is on.
func configurationEvents(tx *store.Tx, index uint64, c raft.Configuration) ([]*store.Event, error) {
	if st := tx.Events(); !st.Enabled || !st.Cluster {
		return nil, nil
	}
	events, err := membershipEvents(tx, c, index)
	if err == nil {
		err = tx.AppendEvents(events, tx.EventsClock())
	}
	return events, err
}

func (f *FSM) countEvents(events []*store.Event) {
	for _, e := range events {
		c, ok := f.emitted.Load(e.Namespace)
		if !ok {
			c, _ = f.emitted.LoadOrStore(e.Namespace, new(atomic.Uint64))
		}
		c.(*atomic.Uint64).Add(1)
	}
}

// EventsEmitted counts the events this FSM recorded since the process
// started, by namespace.
func (f *FSM) EventsEmitted() map[string]uint64 {
	out := map[string]uint64{}
	f.emitted.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return out
}

// AppliedIndex is the index of the last entry this FSM applied.
func (f *FSM) AppliedIndex() uint64 { return f.applied.Load() }

// AppliedSignal returns the applied index and a channel closed when it next
// moves.
func (f *FSM) AppliedSignal() (uint64, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied.Load(), f.notify
}

// WaitApplied blocks until the FSM applied index or ctx ends.
func (f *FSM) WaitApplied(ctx context.Context, index uint64) error {
	for {
		f.mu.Lock()
		if f.applied.Load() >= index {
			f.mu.Unlock()
			return nil
		}
		ch := f.notify
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Store returns the model the FSM writes to.
func (f *FSM) Store() *store.Store { return f.store }

var _ raft.FSM = (*FSM)(nil)
var _ raft.ConfigurationStore = (*FSM)(nil)
var _ raft.BatchingFSM = (*FSM)(nil)

// The cluster's node applies a forwarded write ahead of raft and takes its
// result from this FSM (cluster/forward.go, cluster/atcommit.go).
var (
	_ cluster.CommittedApplier = (*FSM)(nil)
	_ cluster.ResultNoter      = (*FSM)(nil)
)
