package fsm

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"edgectl/store"

	"github.com/hashicorp/raft"
)

// readFrom serves ApplyCommitted's reads from entries (indexes contiguous).
func readFrom(entries []*raft.Log) func(from, to uint64) ([]*raft.Log, error) {
	return func(from, to uint64) ([]*raft.Log, error) {
		first := entries[0].Index
		if from < first || to >= first+uint64(len(entries)) {
			return nil, fmt.Errorf("entries %d..%d not held", from, to)
		}
		return entries[from-first : to-first+1], nil
	}
}

// TestApplyCommitted_RaftsLaterDeliveryChangesNothing: entries applied
// ahead of raft leave the model raft's own delivery would; when raft then
// hands them over with the ones after, only those after are applied.
func TestApplyCommitted_RaftsLaterDeliveryChangesNothing(t *testing.T) {
	t.Parallel()
	want := eventsOn(t)
	wantEntries := batchEntries(t)
	wantRes := want.ApplyBatch(wantEntries)

	f := eventsOn(t)
	entries := batchEntries(t) // 4..15
	before := dump(t, f.Store().Read())
	if ahead, err := f.ApplyCommitted(9, func(uint64, uint64) ([]*raft.Log, error) { return nil, errors.New("not here") }); ahead || err == nil {
		t.Fatalf("a failed read: %v, %v", ahead, err)
	}
	if f.AppliedIndex() != 3 || !bytes.Equal(dump(t, f.Store().Read()), before) {
		t.Fatal("a failed read changed the model")
	}
	results := map[uint64]any{}
	f.OnApplied(func(logs []*raft.Log, res []any) {
		for i, l := range logs {
			if _, again := results[l.Index]; again {
				t.Errorf("entry %d passed on twice", l.Index)
			}
			if f.AppliedIndex() >= l.Index {
				t.Errorf("entry %d passed on after the applied index moved past it", l.Index)
			}
			results[l.Index] = res[i]
		}
	})
	if ahead, err := f.ApplyCommitted(9, readFrom(entries)); !ahead || err != nil {
		t.Fatalf("apply ahead to 9: %v, %v", ahead, err)
	}
	// The results passed on are raft's delivery's (a forwarded write
	// answered at commit takes its result from there): checked below.
	if len(results) != 6 {
		t.Fatalf("%d entries passed on ahead, want 6 (4..9)", len(results))
	}
	if f.AppliedIndex() != 9 || !f.Store().Read().Exists(store.KindIdentity, "i1") {
		t.Fatalf("applied %d after applying ahead to 9", f.AppliedIndex())
	}
	if ahead, err := f.ApplyCommitted(7, readFrom(entries)); ahead || err != nil {
		t.Fatalf("apply ahead to 7 after 9: %v, %v", ahead, err)
	}
	got := f.ApplyBatch(entries)
	if len(results) != len(entries) {
		t.Fatalf("%d entries passed on in all, want %d, each once", len(results), len(entries))
	}
	for i, l := range wantEntries {
		if got, want := fmt.Sprint(results[l.Index]), fmt.Sprint(wantRes[i]); got != want {
			t.Errorf("entry %d's result passed on: %s, raft's delivery alone: %s", l.Index, got, want)
		}
	}
	for i, l := range entries {
		if l.Index <= 9 && got[i] != nil {
			t.Errorf("entry %d, applied ahead, applied again: %s", l.Index, got[i])
		}
	}
	if err := resultErr(t, got[len(got)-1]); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("entry 15's result: %v, want its conflict", err)
	}
	if f.AppliedIndex() != 15 {
		t.Fatalf("applied %d, want 15", f.AppliedIndex())
	}
	if a, b := dump(t, want.Store().Read()), dump(t, f.Store().Read()); !bytes.Equal(a, b) {
		t.Fatalf("the models differ:\nraft's delivery alone:\n%s\nahead, then raft's:\n%s", a, b)
	}
	for _, ns := range []string{"entity", "cluster"} {
		if a, b := want.EventsEmitted()[ns], f.EventsEmitted()[ns]; a != b {
			t.Errorf("%s events: %d by raft's delivery alone, %d ahead then raft's", ns, a, b)
		}
	}

	// A no-op entry (never handed to the FSM) moves the index.
	noop := []*raft.Log{{Index: 16, Term: 1, Type: raft.LogNoop}}
	if ahead, err := f.ApplyCommitted(16, readFrom(noop)); !ahead || err != nil || f.AppliedIndex() != 16 {
		t.Fatalf("a no-op ahead: %v, %v, applied %d", ahead, err, f.AppliedIndex())
	}
}

// TestSnapshot_OfAModelAppliedAheadOfRaft: a snapshot taken while the model
// is ahead of raft's index records the model's index, and the node restored
// from it skips the entries raft hands over again.
func TestSnapshot_OfAModelAppliedAheadOfRaft(t *testing.T) {
	t.Parallel()
	want := eventsOn(t)
	want.ApplyBatch(batchEntries(t))

	f := eventsOn(t)
	entries := batchEntries(t)
	if _, err := f.ApplyCommitted(9, readFrom(entries)); err != nil {
		t.Fatal(err)
	}
	g := snapshotRoundTrip(t, f) // raft files it under an index before 9: what raft had applied
	if g.AppliedIndex() != 9 {
		t.Fatalf("restored at %d, want 9", g.AppliedIndex())
	}
	for i, res := range g.ApplyBatch(entries[2:]) { // raft replays from its own snapshot index, 6
		if l := entries[2+i]; l.Index <= 9 && res != nil {
			t.Errorf("entry %d, in the snapshot, applied again: %s", l.Index, res)
		}
	}
	if a, b := dump(t, want.Store().Read()), dump(t, g.Store().Read()); !bytes.Equal(a, b) {
		t.Fatalf("the models differ:\nraft's delivery alone:\n%s\nrestored, then raft's:\n%s", a, b)
	}
}

// TestApplyCommitted_BesideRaftsDelivery: applies ahead of raft racing
// raft's own batches leave the model the batches alone leave.
func TestApplyCommitted_BesideRaftsDelivery(t *testing.T) {
	t.Parallel()
	var entries []*raft.Log
	for i := range 300 {
		id := fmt.Sprintf("r%03d", i)
		entries = append(entries, entry(t, uint64(4+i), CmdIdentityCreate, IdentityCreate{Identity: identity(id, "name-"+id)}))
	}
	want := eventsOn(t)
	want.ApplyBatch(entries)

	f := eventsOn(t)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // raft's delivery, in batches of 7
		defer wg.Done()
		for i := 0; i < len(entries); i += 7 {
			for _, res := range f.ApplyBatch(entries[i:min(i+7, len(entries))]) {
				if err := resultErr(t, res); err != nil {
					t.Errorf("raft's delivery: %v", err) // applied twice: a conflict
				}
			}
		}
	}()
	go func() { // forwarded writes answered, ahead of it
		defer wg.Done()
		for i := 2; i < len(entries); i += 11 {
			if _, err := f.ApplyCommitted(entries[i].Index, readFrom(entries)); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	if f.AppliedIndex() != entries[len(entries)-1].Index {
		t.Fatalf("applied %d", f.AppliedIndex())
	}
	if a, b := dump(t, want.Store().Read()), dump(t, f.Store().Read()); !bytes.Equal(a, b) {
		t.Fatal("the models differ")
	}
	if a, b := want.EventsEmitted()["entity"], f.EventsEmitted()["entity"]; a != b {
		t.Fatalf("entity events: %d, want %d", b, a)
	}
}
