package fsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"edgectl/cluster"
	"edgectl/store"

	"github.com/hashicorp/raft"
)

// lossyProposer stands for a proposal whose answer was lost: the command
// reaches the log and f (when committed is true) and the proposer still
// reports ErrOutcomeUnknown, as a forward whose connection broke does.
type lossyProposer struct {
	f         *FSM
	index     uint64
	committed bool
	calls     int
}

func (p *lossyProposer) Apply(_ context.Context, cmd []byte) ([]byte, uint64, error) {
	p.calls++
	if p.committed {
		p.index++
		p.f.Apply(&raft.Log{Index: p.index, Term: 1, Type: raft.LogCommand, Data: cmd})
	}
	return nil, 0, fmt.Errorf("cluster: apply: %w: the connection to the leader was lost", cluster.ErrOutcomeUnknown)
}

func lossyWriter(t *testing.T, committed bool, barrier func(context.Context) error) (*Writer, *lossyProposer, *FSM) {
	f := bootstrapped(t)
	p := &lossyProposer{f: f, index: 10, committed: committed}
	w := NewWriter(p, nil)
	if barrier == nil {
		barrier = func(context.Context) error { return nil }
	}
	w.ResolveUnknownOutcomes(f, barrier)
	return w, p, f
}

// A command whose proposal ended with an unknown outcome but which was
// committed gets its own result, the FSM's error included, after the
// barrier; it is proposed once.
func TestWriter_AnUnknownOutcomeThatCommittedIsLookedUp(t *testing.T) {
	t.Parallel()
	w, p, f := lossyWriter(t, true, nil)
	ctx := context.Background()
	if _, err := w.Do(ctx, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")}); err != nil {
		t.Fatalf("a committed create: %v", err)
	}
	if !f.Store().Read().Exists(store.KindIdentity, "i1") || p.calls != 1 {
		t.Fatalf("identity stored: %v, proposals %d (want 1)", f.Store().Read().Exists(store.KindIdentity, "i1"), p.calls)
	}
	_, err := w.Do(ctx, CmdIdentityCreate, IdentityCreate{Identity: identity("i2", "one")})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a committed create that the FSM refused: %v, want its conflict", err)
	}
}

// One that never reached the log stays unknown, and is not proposed again:
// it may still be on its way to a leader.
func TestWriter_AnUnknownOutcomeNotFoundStaysUnknown(t *testing.T) {
	t.Parallel()
	w, p, _ := lossyWriter(t, false, nil)
	_, err := w.Do(context.Background(), CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")})
	if !errors.Is(err, cluster.ErrOutcomeUnknown) || p.calls != 1 {
		t.Fatalf("err %v after %d proposals, want the unknown outcome after 1", err, p.calls)
	}
	// Nor is anything concluded without a barrier.
	w, _, _ = lossyWriter(t, true, func(context.Context) error { return cluster.ErrNoLeader })
	if _, err := w.Do(context.Background(), CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")}); !errors.Is(err, cluster.ErrOutcomeUnknown) {
		t.Fatalf("without a barrier: %v, want the unknown outcome", err)
	}
}

// A restore of the node's FSM between the proposal and the lookup empties
// the outcomes it kept: the outcome stays unknown.
func TestWriter_NoConclusionAcrossARestore(t *testing.T) {
	t.Parallel()
	var f *FSM
	w, _, f := lossyWriter(t, true, func(context.Context) error {
		snap, err := f.Snapshot()
		if err != nil {
			return err
		}
		sink := &memSink{}
		if err := snap.Persist(sink); err != nil {
			return err
		}
		return f.Restore(io.NopCloser(bytes.NewReader(sink.Bytes())))
	})
	_, err := w.Do(context.Background(), CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")})
	if !errors.Is(err, cluster.ErrOutcomeUnknown) || f.Restores() != 1 {
		t.Fatalf("err %v after %d restores, want the unknown outcome after 1", err, f.Restores())
	}
}

// The FSM keeps the last keptOutcomes results with a request id; an entry
// applied again (a batch re-applied after an abort) takes no second place.
func TestOutcomes_TheLatestAreKept(t *testing.T) {
	t.Parallel()
	var o outcomes
	o.record("first", []byte("1"))
	o.record("first", []byte("1"))
	for i := range keptOutcomes - 1 {
		o.record(fmt.Sprint("r", i), nil)
	}
	if _, ok := o.byID["first"]; !ok || len(o.byID) != keptOutcomes {
		t.Fatalf("first kept: %v; %d kept, want %d", ok, len(o.byID), keptOutcomes)
	}
	o.record("last", nil)
	if _, ok := o.byID["first"]; ok || len(o.byID) != keptOutcomes {
		t.Fatalf("the oldest outlived the ring: %d kept", len(o.byID))
	}
}
