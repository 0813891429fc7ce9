package fsm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Proposer replicates an encoded command and returns the FSM's result once
// this node applied it. cluster.Node implements it.
type Proposer interface {
	Apply(ctx context.Context, cmd []byte) (resp []byte, index uint64, err error)
}

// Writer is the one write path: encode, propose, wait, decode.
type Writer struct {
	p Proposer
}

// NewWriter returns a Writer that proposes through p.
func NewWriter(p Proposer) *Writer { return &Writer{p: p} }

// Do proposes a command and returns its result data, a *store.Error for a
// domain error, or the cluster's error (no leader, shutdown).
func (w *Writer) Do(ctx context.Context, t CommandType, payload any) (json.RawMessage, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("fsm: encode %s: %w", t, err)
	}
	cmd, err := json.Marshal(Command{Type: t, Payload: raw, At: time.Now().UTC()})
	if err != nil {
		return nil, fmt.Errorf("fsm: encode %s: %w", t, err)
	}
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
