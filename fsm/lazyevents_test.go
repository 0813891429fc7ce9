package fsm

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"testing"

	"edgectl/store"
)

// The events of a create or a delete keep the record and encode it when
// first read. What they show must be the record as that command left it,
// whenever it is read, secrets left out, and the same after a snapshot.
func TestEvents_EncodedOnFirstReadAsTheCommandLeftTheRecord(t *testing.T) {
	t.Parallel()
	f := eventsOn(t)
	apply := func(index uint64, t2 CommandType, p any) {
		t.Helper()
		if err := resultErr(t, f.Apply(entry(t, index, t2, p))); err != nil {
			t.Fatal(err)
		}
	}
	apply(10, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one"), Enrollments: []*store.Enrollment{
		{Base: store.Base{ID: "e1", CreatedAt: t0}, IdentityID: "i1", Method: "ott", Token: "secret-token"}}})
	apply(11, CmdIdentityUpdate, Update{ID: "i1", Patch: store.Patch{"roleAttributes": json.RawMessage(`["changed"]`), "name": json.RawMessage(`"renamed"`)}, At: t0})
	apply(12, CmdIdentityDelete, Delete{ID: "i1"})

	// Nothing has read the events yet: the records were replaced, then removed.
	tx := f.Store().Read()
	var created, deleted, enrollment *store.Event
	tx.EventsAfter(0, func(e *store.Event) bool {
		switch {
		case e.EntityType == "identities" && e.Action == "created":
			created = e
		case e.EntityType == "identities" && e.Action == "deleted":
			deleted = e
		case e.EntityType == "enrollments" && e.Action == "created":
			enrollment = e
		}
		return true
	})
	if created == nil || deleted == nil || enrollment == nil {
		t.Fatal("an identity created and deleted, an enrollment created: events missing")
	}
	var readers sync.WaitGroup
	afters := make([]json.RawMessage, 8)
	for i := range afters {
		readers.Go(func() { afters[i] = created.AfterJSON() })
	}
	readers.Wait()
	for _, a := range afters[1:] {
		if !bytes.Equal(a, afters[0]) {
			t.Fatalf("concurrent readers saw %s and %s", afters[0], a)
		}
	}
	var was struct {
		Name           string   `json:"name"`
		RoleAttributes []string `json:"roleAttributes"`
	}
	if err := json.Unmarshal(created.AfterJSON(), &was); err != nil || was.Name != "one" || len(was.RoleAttributes) != 1 || was.RoleAttributes[0] != "a" {
		t.Fatalf("created event's after: %s (%v), want the identity as created", created.AfterJSON(), err)
	}
	if created.BeforeJSON() != nil || deleted.AfterJSON() != nil {
		t.Fatal("a create has no before and a delete no after")
	}
	if err := json.Unmarshal(deleted.BeforeJSON(), &was); err != nil || was.Name != "renamed" || was.RoleAttributes[0] != "changed" {
		t.Fatalf("deleted event's before: %s (%v), want the identity as it was deleted", deleted.BeforeJSON(), err)
	}
	var enr map[string]any
	if err := json.Unmarshal(enrollment.AfterJSON(), &enr); err != nil || enr["identityId"] != "i1" {
		t.Fatalf("enrollment event's after: %s (%v)", enrollment.AfterJSON(), err)
	}
	if _, leaked := enr["token"]; leaked || bytes.Contains(enrollment.AfterJSON(), []byte("secret-token")) {
		t.Fatalf("enrollment event shows its secret: %s", enrollment.AfterJSON())
	}

	// A snapshot carries the encoded bodies; the restored log reads the same.
	snap := dump(t, tx)
	g := New(store.New())
	if err := g.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatal(err)
	}
	if again := dump(t, g.Store().Read()); !bytes.Equal(again, snap) {
		t.Fatalf("restored events differ:\n%s\n%s", snap, again)
	}
	var viewA, viewB []any
	tx.EventsAfter(0, func(e *store.Event) bool { viewA = append(viewA, store.EventView(e)); return true })
	g.Store().Read().EventsAfter(0, func(e *store.Event) bool { viewB = append(viewB, store.EventView(e)); return true })
	a, _ := json.Marshal(viewA)
	b, _ := json.Marshal(viewB)
	if !bytes.Equal(a, b) {
		t.Fatalf("the API shows other events after a restore:\n%s\n%s", a, b)
	}
}
