package fsm

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

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
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("fsm: encode %s: %w", t, err)
	}
	cmd := envelope(t, raw, w.now().UTC(), actorOf(ctx))
	resp, _, err := w.p.Apply(ctx, cmd)
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

// envelope encodes a Command. It is json.Marshal(Command{...}) without the
// second pass over the payload that RawMessage costs: t is one of the
// constants (plain characters) and raw was just encoded by json.Marshal.
func envelope(t CommandType, raw json.RawMessage, at time.Time, actor *store.EventActor) []byte {
	var a []byte
	if actor != nil {
		a, _ = json.Marshal(actor)
	}
	buf := make([]byte, 0, len(raw)+len(t)+len(a)+80) // the envelope's own bytes and the time: 74 at most
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
	return append(buf, '}')
}
