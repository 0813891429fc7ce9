package fsm

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"edgectl/cluster"
	"edgectl/store"
)

// Proposer replicates an encoded command and returns the FSM's result once
// this node applied it. cluster.Node implements it.
type Proposer interface {
	Apply(ctx context.Context, cmd []byte) (resp []byte, index uint64, err error)
}

// Writer is the one write path: encode, propose, wait, decode.
type Writer struct {
	p   Proposer
	now func() time.Time
	// gate, when set, is asked before a command newer than version 1 is
	// proposed (see versions.go).
	gate func(CommandType) error
	// fsm and barrier, when set, look up the outcome of a command whose
	// proposal ended with cluster.ErrOutcomeUnknown (see resolve).
	fsm     *FSM
	barrier func(context.Context) error
}

// ResolveUnknownOutcomes makes Do look up, after a barrier, the outcome of
// a command whose proposal ended with cluster.ErrOutcomeUnknown (a forward
// whose connection was lost after sending, a leader that lost its
// leadership with the command in flight): f is this node's FSM, barrier
// the cluster's (cluster.Node.Barrier). Call it before the Writer is used.
func (w *Writer) ResolveUnknownOutcomes(f *FSM, barrier func(context.Context) error) {
	w.fsm, w.barrier = f, barrier
}

// SetGate installs the check that refuses commands some member cannot
// apply. Call it before the Writer is used.
func (w *Writer) SetGate(gate func(CommandType) error) { w.gate = gate }

// NewWriter returns a Writer that proposes through p, stamping commands with
// now (nil: time.Now), the same clock the API judges requests with.
func NewWriter(p Proposer, now func() time.Time) *Writer {
	if now == nil {
		now = time.Now
	}
	return &Writer{p: p, now: now}
}

// proposalsKey is the context key of WatchProposals.
type proposalsKey struct{}

// WatchProposals returns a context under which every Do (whatever its
// outcome) sets the returned flag: a caller can tell whether work it ran
// tried to change the model.
func WatchProposals(ctx context.Context) (context.Context, *atomic.Bool) {
	var flag atomic.Bool
	return context.WithValue(ctx, proposalsKey{}, &flag), &flag
}

// Do proposes a command and returns its result data, a *store.Error for a
// domain error, or the cluster's error (no leader, shutdown).
func (w *Writer) Do(ctx context.Context, t CommandType, payload any) (json.RawMessage, error) {
	if flag, ok := ctx.Value(proposalsKey{}).(*atomic.Bool); ok {
		flag.Store(true)
	}
	if w.gate != nil && VersionOf(t) > 1 {
		if err := w.gate(t); err != nil {
			return nil, err
		}
	}
	raw, err := store.MarshalJSON(payload) // encoding/json's bytes, in two thirds of its time
	if err != nil {
		return nil, fmt.Errorf("fsm: encode %s: %w", t, err)
	}
	rid := newRequestID()
	cmd := envelope(t, raw, w.now().UTC(), actorOf(ctx), rid)
	var restores uint64
	if w.fsm != nil {
		w.fsm.outcomes.watch(rid)
		defer w.fsm.outcomes.forget(rid)
		restores = w.fsm.Restores()
	}
	resp, _, err := w.p.Apply(ctx, cmd)
	if err != nil && w.fsm != nil && errors.Is(err, cluster.ErrOutcomeUnknown) {
		if r, ok := w.resolve(ctx, rid, restores); ok {
			resp, err = r, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if len(resp) == 0 {
		return nil, nil
	}
	var r result
	if err := json.Unmarshal(resp, &r); err != nil {
		return nil, fmt.Errorf("fsm: decode result of %s: %w", t, err)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Data, nil
}

// resolve looks up the outcome of the command rid after a barrier
// (raft.Barrier on the leader: an entry of the leader's log, then this
// node's FSM up to the leader's). A command that was in the leader's log
// before the barrier has been applied here when it returns, so a result
// found is the command's own, applied once. One not found stays unknown: the
// proposal may still be on its way to a leader (a frame in a socket's
// buffer), so proposing again could apply the command twice. A restore of
// this node's FSM since the proposal empties what it kept: then nothing is
// concluded.
func (w *Writer) resolve(ctx context.Context, rid string, restores uint64) ([]byte, bool) {
	if err := w.barrier(ctx); err != nil {
		return nil, false
	}
	res, ok := w.fsm.Outcome(rid)
	if !ok || w.fsm.Restores() != restores {
		return nil, false
	}
	b, _ := res.([]byte) // the FSM's results are encoded results or nil
	return b, true
}

// newRequestID is the id a command's envelope carries so that its outcome
// can be looked up (96 random bits).
func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// envelope encodes a Command. It is json.Marshal(Command{...}) without the
// second pass over the payload that RawMessage costs: t is one of the
// constants (plain characters) and raw was just encoded by json.Marshal.
func envelope(t CommandType, raw json.RawMessage, at time.Time, actor *store.EventActor, rid string) []byte {
	var a []byte
	if actor != nil {
		a, _ = json.Marshal(actor)
	}
	buf := make([]byte, 0, len(raw)+len(t)+len(a)+len(rid)+90) // the envelope's own bytes and the time: 84 at most
	buf = append(buf, `{"type":"`...)
	buf = append(buf, t...)
	buf = append(buf, `","payload":`...)
	buf = append(buf, raw...)
	buf = append(buf, `,"at":"`...)
	buf = at.AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, '"')
	if actor != nil {
		buf = append(buf, `,"actor":`...)
		buf = append(buf, a...)
	}
	if rid != "" { // URL-safe base64: nothing to escape
		buf = append(buf, `,"rid":"`...)
		buf = append(buf, rid...)
		buf = append(buf, '"')
	}
	return append(buf, '}')
}
