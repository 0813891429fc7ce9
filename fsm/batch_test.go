package fsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"edgectl/store"

	"github.com/hashicorp/raft"
)

// batchEntries are commands that succeed, fail before writing (a taken
// name), and fail after writing (an identity stored, then its
// authenticator's username taken), mixed with a membership change, in one
// batch.
func batchEntries(t *testing.T) []*raft.Log {
	dirty := func(id string) IdentityCreate {
		return IdentityCreate{Identity: identity(id, "dirty-"+id),
			Enrollments:    []*store.Enrollment{{Base: store.Base{ID: "e-" + id, CreatedAt: t0}, IdentityID: id, Method: "ott"}},
			Authenticators: []*store.Authenticator{{Base: store.Base{ID: "a-" + id, CreatedAt: t0}, IdentityID: id, Method: "updb", Username: "admin"}}}
	}
	patch := store.Patch{"roleAttributes": json.RawMessage(`["b"]`)}
	conf := raft.Configuration{Servers: []raft.Server{{ID: "n1", Address: "127.0.0.1:1", Suffrage: raft.Voter}}}
	conf2 := raft.Configuration{Servers: append(conf.Servers, raft.Server{ID: "n2", Address: "127.0.0.1:2", Suffrage: raft.Voter})}
	return []*raft.Log{
		entry(t, 4, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")}),
		entry(t, 5, CmdIdentityCreate, IdentityCreate{Identity: identity("i2", "one")}), // taken: fails before writing
		entry(t, 6, CmdIdentityCreate, IdentityCreate{Identity: identity("i3", "three")}),
		entry(t, 7, CmdIdentityCreate, dirty("d1")), // fails after writing
		{Index: 8, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(conf)},
		entry(t, 9, CmdIdentityUpdate, Update{ID: "i1", Patch: patch, At: t0}),
		entry(t, 10, CmdIdentityCreate, dirty("d2")),
		entry(t, 11, CmdIdentityCreate, dirty("d3")), // two in a row
		entry(t, 12, CmdIdentityCreate, IdentityCreate{Identity: identity("i4", "four")}),
		{Index: 13, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(conf2)},
		entry(t, 14, CmdIdentityDelete, Delete{ID: "i3"}),
		entry(t, 15, CmdIdentityCreate, dirty("d4")), // the last one
	}
}

func eventsOn(t *testing.T) *FSM {
	f := bootstrapped(t)
	if err := resultErr(t, f.Apply(entry(t, 2, CmdEventsEnable, store.EventState{RetentionCount: 1000}))); err != nil {
		t.Fatal(err)
	}
	if err := resultErr(t, f.Apply(entry(t, 3, CmdEventsCluster, struct{}{}))); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestApplyBatch_SameAsOneByOne: a batch leaves the same model (records,
// events and their ids) and gives every entry the same result as applying
// the entries one at a time, however its commands fail.
func TestApplyBatch_SameAsOneByOne(t *testing.T) {
	t.Parallel()
	one, batch := eventsOn(t), eventsOn(t)
	var want []any
	for _, l := range batchEntries(t) {
		if l.Type == raft.LogConfiguration {
			one.StoreConfiguration(l.Index, raft.DecodeConfiguration(l.Data))
			want = append(want, nil)
			continue
		}
		want = append(want, one.Apply(l))
	}
	got := batch.ApplyBatch(batchEntries(t))
	if len(got) != len(want) {
		t.Fatalf("%d results for %d entries", len(got), len(want))
	}
	for i := range want {
		w, g := resultErr(t, want[i]), resultErr(t, got[i])
		if (w == nil) != (g == nil) || (w != nil && w.Error() != g.Error()) {
			t.Errorf("entry %d: batch result %v, one by one %v", i, g, w)
		}
	}
	if err := resultErr(t, got[3]); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the dirty command's result: %v, want a conflict", err)
	}
	if a, b := dump(t, one.Store().Read()), dump(t, batch.Store().Read()); !bytes.Equal(a, b) {
		t.Fatalf("the models differ:\none by one:\n%s\nbatch:\n%s", a, b)
	}
	tx := batch.Store().Read()
	for _, id := range []string{"d1", "d2", "d3", "d4", "e-d1", "a-d1"} {
		if tx.Exists(store.KindIdentity, id) || tx.Exists(store.KindEnrollment, id) || tx.Exists(store.KindAuthenticator, id) {
			t.Fatalf("part of a failed command (%s) was stored", id)
		}
	}
	if !tx.Exists(store.KindIdentity, "i4") || tx.Exists(store.KindIdentity, "i3") || tx.Membership() == nil {
		t.Fatal("the commands after the failed ones were not applied")
	}
	if batch.AppliedIndex() != 15 {
		t.Fatalf("applied index %d, want 15", batch.AppliedIndex())
	}
	for _, ns := range []string{"entity", "cluster"} {
		if n := batch.EventsEmitted()[ns]; n == 0 || n != one.EventsEmitted()[ns] {
			t.Fatalf("%s events counted: batch %d, one by one %d", ns, n, one.EventsEmitted()[ns])
		}
	}
}
