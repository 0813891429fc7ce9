package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

func insertIdentities(t *testing.T, s *Store, names ...string) {
	t.Helper()
	tx := s.Write()
	for _, n := range names {
		if err := tx.Insert(KindIdentity, &Identity{Base: Base{ID: "id-" + n, CreatedAt: time.Unix(0, 0)}, Named: Named{Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
}

func checkColumn(t *testing.T, tx *Tx, want ...string) {
	t.Helper()
	recs, names := tx.SortedNames(KindIdentity)
	if recs.Len() != len(want) || names.Len() != len(want) {
		t.Fatalf("%d records, %d names, want %d", recs.Len(), names.Len(), len(want))
	}
	for i, w := range want {
		if recs.At(i).RecordName() != w || names.At(i) != w {
			t.Errorf("position %d: record %q, column %q, want %q", i, recs.At(i).RecordName(), names.At(i), w)
		}
	}
}

func TestSortedNames_ColumnFollowsTheRecords(t *testing.T) {
	s := New()
	insertIdentities(t, s, "web", "", "db", "ünï<code>")
	old := s.Read()
	checkColumn(t, old, "", "db", "web", "ünï<code>")

	// A rename and a delete make a new generation; the old view keeps its own.
	tx := s.Write()
	web, err := GetAs[*Identity](tx, KindIdentity, "id-web")
	if err != nil {
		t.Fatal(err)
	}
	n := *web
	n.Name = "a-web"
	if err := tx.Replace(KindIdentity, &n); err != nil {
		t.Fatal(err)
	}
	if err := tx.Remove(KindIdentity, "id-db"); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	checkColumn(t, s.Read(), "", "a-web", "ünï<code>")
	checkColumn(t, old, "", "db", "web", "ünï<code>")

	if _, names := s.Read().SortedNames(KindAuthenticator); names != nil {
		t.Error("a kind without names has a name column")
	}
}

// TestSorted_OtherTablesDoNotInvalidate: the session activity flush, posture
// sweeps and every other write leave the identities alone, so the cached
// order and name column of the identities must survive them.
func TestSorted_OtherTablesDoNotInvalidate(t *testing.T) {
	s := New()
	insertIdentities(t, s, "a", "b")
	recs, names := s.Read().SortedNames(KindIdentity)
	tx := s.Write()
	if err := tx.Insert(KindAPISession, &APISession{Base: Base{ID: "sess"}, TokenHash: "h", IdentityID: "id-a"}); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	tx = s.Write()
	if err := tx.TouchAPISessions([]Activity{{ID: "sess", At: time.Unix(10, 0)}}); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	recs2, names2 := s.Read().SortedNames(KindIdentity)
	if recs2.c != recs.c || names2 != names {
		t.Error("a write to another table rebuilt the identities' sorted records")
	}
	insertIdentities(t, s, "c")
	if recs3, _ := s.Read().SortedNames(KindIdentity); recs3.Len() != 3 {
		t.Errorf("after an identity insert: %d records, want 3", recs3.Len())
	}
}

// TestNamedKinds_NameFieldReadsRecordName: lists filter on the name column
// in place of the filter field "name", which is only right while that field
// reads RecordName for every named kind.
func TestNamedKinds_NameFieldReadsRecordName(t *testing.T) {
	for _, k := range AllKinds {
		if !k.Named {
			continue
		}
		r := k.new()
		want := fmt.Sprintf("name of %s", k.Table)
		if err := json.Unmarshal([]byte(fmt.Sprintf(`{"name":%q}`, want)), r); err != nil {
			t.Fatalf("%s: %v", k.Table, err)
		}
		f, ok := k.Fields.Fields["name"]
		if !ok || f.GetString == nil {
			t.Errorf("%s: no typed name field", k.Table)
			continue
		}
		if got, ok := f.GetString(r); !ok || got != want || r.RecordName() != want {
			t.Errorf("%s: field name reads %q (ok %v), RecordName %q, want %q", k.Table, got, ok, r.RecordName(), want)
		}
	}
}

// TestEachSorted_APageDoesNotOrderTheTable checks that a walk in list order
// which stops early reads the index instead of building the generation's
// slice, and that one which reaches the end keeps the slice it read.
func TestEachSorted_APageDoesNotOrderTheTable(t *testing.T) {
	s := New()
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("n%02d", (i*7)%40)) // inserted out of order
	}
	insertIdentities(t, s, names...)
	s.Read().Sorted(KindIdentity) // the slice of this generation
	insertIdentities(t, s, "n00a")
	cachedGen := func() uint64 {
		v, _ := s.sorted.Load(KindIdentity.Table)
		return v.(*sortedRecords).Gen()
	}
	read := func(tx *Tx, stopAfter int) (got []string) {
		tx.EachSorted(KindIdentity, func(r Record) bool {
			got = append(got, r.RecordName())
			return len(got) < stopAfter
		})
		return got
	}

	tx := s.Read()
	if got := read(tx, 3); !slices.Equal(got, []string{"n00", "n00a", "n01"}) {
		t.Fatalf("a page: %v", got)
	}
	if cachedGen() == tx.gen(KindIdentity) {
		t.Fatal("a walk that stopped early built the slice of the generation")
	}
	all := read(tx, 1000)
	if len(all) != 41 || !slices.IsSorted(all) {
		t.Fatalf("the whole walk: %v", all)
	}
	if cachedGen() != tx.gen(KindIdentity) {
		t.Fatal("a whole walk did not keep its slice")
	}
	recs := s.Read().Sorted(KindIdentity)
	if len(recs) != 41 || recs[1].RecordName() != "n00a" {
		t.Fatalf("the kept slice: %d records", len(recs))
	}
	if got := read(s.Read(), 2); !slices.Equal(got, []string{"n00", "n00a"}) { // from the slice now
		t.Fatalf("a page from the slice: %v", got)
	}
}

func TestLookup_FollowsTheTableGeneration(t *testing.T) {
	s := New()
	mustWrite(t, s, func(tx *Tx) error {
		return tx.Insert(KindEdgeRouter, &EdgeRouter{Base: Base{ID: "er1"}, Named: Named{Name: "one"}})
	})
	old := s.Read()
	if r, ok := old.Lookup(KindEdgeRouter, "er1"); !ok || r.RecordName() != "one" {
		t.Fatalf("lookup: %v %v", r, ok)
	}
	mustWrite(t, s, func(tx *Tx) error {
		if err := tx.Replace(KindEdgeRouter, &EdgeRouter{Base: Base{ID: "er1"}, Named: Named{Name: "renamed"}}); err != nil {
			return err
		}
		return tx.Insert(KindEdgeRouter, &EdgeRouter{Base: Base{ID: "er2"}, Named: Named{Name: "two"}})
	})
	tx := s.Read()
	if r, ok := tx.Lookup(KindEdgeRouter, "er1"); !ok || r.RecordName() != "renamed" {
		t.Fatalf("after the change: %v %v", r, ok)
	}
	if _, ok := tx.Lookup(KindEdgeRouter, "er2"); !ok {
		t.Fatal("a new router is not found")
	}
	// An older view still sees its own generation.
	if r, ok := old.Lookup(KindEdgeRouter, "er1"); !ok || r.RecordName() != "one" {
		t.Fatalf("old view: %v %v", r, ok)
	}
	if _, ok := old.Lookup(KindEdgeRouter, "er2"); ok {
		t.Fatal("an old view sees a later router")
	}
}
