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

// The FSM notes only the results a writer of this node waits for, until it
// stops waiting; a restore forgets them.
func TestOutcomes_OnlyThoseWaitedForAreKept(t *testing.T) {
	t.Parallel()
	f := New(store.New())
	f.outcomes.record("other node's", []byte("1"))
	if len(f.outcomes.waiting) != 0 {
		t.Fatalf("a result nobody here waits for was kept: %d", len(f.outcomes.waiting))
	}
	f.outcomes.watch("mine")
	if _, ok := f.Outcome("mine"); ok {
		t.Fatal("an outcome before the command was applied")
	}
	f.outcomes.record("mine", []byte("2"))
	f.outcomes.record("mine", []byte("2")) // a batch re-applied after an abort
	if res, ok := f.Outcome("mine"); !ok || string(res.([]byte)) != "2" {
		t.Fatalf("outcome %v %v, want 2", res, ok)
	}
	f.outcomes.reset()
	if _, ok := f.Outcome("mine"); ok || f.Restores() != 1 {
		t.Fatalf("a restore kept the outcome (%v) or was not counted (%d)", ok, f.Restores())
	}
	f.outcomes.forget("mine")
	if len(f.outcomes.waiting) != 0 {
		t.Fatal("forget kept the id")
	}
}
