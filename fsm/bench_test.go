package fsm

import (
	"crypto/rand"
	"encoding/base64"
	"testing"

	"edgectl/auth"

	"github.com/hashicorp/raft"
)

// BenchmarkApplyBatch_IdentityCreate is the FSM's share of a write on every
// node: batches of 16 identity creates (with role attributes and an OTT
// enrollment, events on), as raft hands them over, encoded by the writer's
// envelope with an actor. The model grows by every create.
//
// ids=time-ordered makes ids as the API does (auth.NewID); ids=random as it
// did before part 9 of issue 16 (96 random bits): the records of a batch then
// share no path of the store's radix trees.
func BenchmarkApplyBatch_IdentityCreate(b *testing.B) {
	for _, ids := range []struct {
		name string
		new  func() string
	}{{"time-ordered", auth.NewID}, {"random", randomID}} {
		b.Run("ids="+ids.name, func(b *testing.B) {
			withoutCrossCheck(b)
			t := &testing.T{}
			f := eventsOn(t)
			const perBatch = 16
			index := uint64(10)
			n := 0
			batch := make([]*raft.Log, perBatch)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				for i := range batch {
					n++
					index++
					batch[i] = &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: identityCreateEntry(n, ids.new(), ids.new())}
				}
				b.StartTimer()
				for _, r := range f.ApplyBatch(batch) {
					if err := resultErr(t, r); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/create")
		})
	}
}

// randomID is an id of the layout before auth.NewID put the time first.
func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
