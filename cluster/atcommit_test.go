package cluster

import (
	"testing"

	"github.com/hashicorp/raft"
)

// TestForwardWaits_TheFirstApplyOfTheEntryGivesTheResult: a forwarded
// write's result is the one its entry got when this node first applied it
// (raft's later delivery of an entry applied ahead has none); an entry this
// node never applied itself (a snapshot restored past it) has no result.
func TestForwardWaits_TheFirstApplyOfTheEntryGivesTheResult(t *testing.T) {
	t.Parallel()
	var w forwardWaits
	id, other := w.expectResult(), w.expectResult()
	entry := func(index, id uint64) *raft.Log {
		return &raft.Log{Index: index, Term: 2, Type: raft.LogCommand, Extensions: forwardIDExtension(id)}
	}
	if _, ok := w.result(id, 7); ok {
		t.Fatal("a result before the entry was applied")
	}
	w.applied([]*raft.Log{entry(6, other), entry(7, id), {Index: 8, Type: raft.LogCommand}}, []any{[]byte("a"), []byte("b"), []byte("c")})
	w.applied([]*raft.Log{entry(7, id)}, []any{nil}) // raft's delivery after the apply ahead
	if res, ok := w.result(id, 7); !ok || string(res.([]byte)) != "b" {
		t.Fatalf("result of entry 7: %v, %v; want b", res, ok)
	}
	if _, ok := w.result(id, 9); ok {
		t.Fatal("a result for an index the write's entry is not at")
	}
	w.dropResult(id)
	w.dropResult(other)
	if n := w.waiting.Load(); n != 0 {
		t.Fatalf("%d waits left after dropping both", n)
	}
	restored := w.expectResult()
	if _, ok := w.result(restored, 12); ok {
		t.Fatal("a result for an entry never applied here")
	}
	w.dropResult(restored)

	ch := w.expectCommit(42)
	w.committed([]*raft.Log{entry(11, 41), entry(12, 42)})
	if c := <-ch; c != (commitPoint{12, 2}) {
		t.Fatalf("commit point %+v, want index 12 term 2", c)
	}
	w.dropCommit(42)
	if n := w.waiting.Load(); n != 0 {
		t.Fatalf("%d waits left", n)
	}
}
