package fsm

import (
	"testing"

	"github.com/hashicorp/raft"
)

// BenchmarkApplyBatch_IdentityCreate is the FSM's share of a write on every
// node: batches of 16 identity creates (with role attributes and an OTT
// enrollment, events on), as raft hands them over, encoded by the writer's
// envelope with an actor.
func BenchmarkApplyBatch_IdentityCreate(b *testing.B) {
	withoutCrossCheck(b)
	t := &testing.T{}
	f := eventsOn(t)
	const perBatch = 16
	index := uint64(10)
	n := 0
	batch := make([]*raft.Log, perBatch)
	b.ReportAllocs()
	for b.Loop() {
		for i := range batch {
			n++
			index++
			batch[i] = &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: identityCreateEntry(n)}
		}
		for _, r := range f.ApplyBatch(batch) {
			if err := resultErr(t, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/create")
}
