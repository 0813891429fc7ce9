package fsm

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"edgectl/store"

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
	actor := &store.EventActor{IdentityID: "admin", IdentityName: "Default Admin", NodeID: "n1"}
	at := time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	const perBatch = 16
	index := uint64(10)
	n := 0
	batch := make([]*raft.Log, perBatch)
	b.ReportAllocs()
	for b.Loop() {
		for i := range batch {
			n++
			id := fmt.Sprintf("bench-%07d", n)
			ident := identity(id, "name-"+id)
			ident.RoleAttributes = []string{"sales", fmt.Sprintf("team-%d", n%20)}
			raw, err := json.Marshal(IdentityCreate{Identity: ident, Enrollments: []*store.Enrollment{{
				Base: store.Base{ID: "e-" + id, CreatedAt: at}, IdentityID: id, Method: "ott", Token: "tok-" + id, ExpiresAt: at.Add(time.Hour)}}})
			if err != nil {
				b.Fatal(err)
			}
			index++
			batch[i] = &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: envelope(CmdIdentityCreate, raw, at, actor)}
		}
		for _, r := range f.ApplyBatch(batch) {
			if err := resultErr(t, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/create")
}
