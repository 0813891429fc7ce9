package store

import (
	"encoding/json"
	"fmt"
	"index/suffixarray"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestNames_EachContainingFindsWhatContainsFinds compares the search with
// strings.Contains on every name, over random names of a small alphabet (so
// matches cross name boundaries in the packed column and bytes repeat),
// empty names included. Half the rounds draw from an alphabet where every
// byte is common (the substring search), half from one where all but 'a'
// are rare (the jumps between a rare byte's occurrences).
func TestNames_EachContainingFindsWhatContainsFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := "aab-c\xff"
	word := func(max int) string {
		b := make([]byte, rng.IntN(max+1))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for round := range 600 {
		alphabet = "aab-c\xff"
		if round%2 == 1 {
			alphabet = strings.Repeat("a", 60) + "b-c\xff"
		}
		var recs []Record
		for j := range rng.IntN(30) {
			recs = append(recs, &Identity{Base: Base{ID: fmt.Sprint(j)}, Named: Named{Name: word(6)}})
		}
		scanned := newNames(recs)
		indexed := newNames(recs) // searched through its suffix array (or past it when sub is everywhere)
		indexed.sa.Store(suffixarray.New([]byte(indexed.blob)))
		listed := newNames(recs) // searched at the offsets of its rarest bytes
		listed.rareFrom = 0
		listed.indexRare()
		for range 20 {
			sub := word(3)
			var want []int
			for i, r := range recs {
				if strings.Contains(r.RecordName(), sub) {
					want = append(want, i)
				}
			}
			for _, names := range []*Names{scanned, indexed, listed} {
				var got []int
				names.EachContaining(sub, func(i int) bool { got = append(got, i); return true })
				if !slices.Equal(got, want) {
					t.Fatalf("round %d: names %q, sub %q, suffix array %v: found %v, want %v", round, names.blob, sub, names.sa.Load() != nil, got, want)
				}
				// Stopping early stops.
				calls := 0
				names.EachContaining(sub, func(int) bool { calls++; return false })
				if calls != min(1, len(want)) {
					t.Fatalf("round %d: fn called %d times after returning false", round, calls)
				}
			}
		}
	}
}

// TestNames_ASearchDuringTheBuildWaitsForTheArray: once a large column's
// suffix array is being built, a search does not read the whole column
// beside the build but waits for it and reads the array; the search that
// started the build read the column. Not parallel: it needs the process's
// one build slot (indexBuilds).
func TestNames_ASearchDuringTheBuildWaitsForTheArray(t *testing.T) {
	var recs []Record
	for i := range 200000 { // a build of some tens of milliseconds, a read of about one
		recs = append(recs, &Identity{Base: Base{ID: fmt.Sprint(i)}, Named: Named{Name: fmt.Sprintf("id-%06d", i)}})
	}
	n := newNames(recs)
	search := func() (found []int) {
		n.EachContaining("id-00012", func(i int) bool { found = append(found, i); return true })
		return found
	}
	want := []int{120, 121, 122, 123, 124, 125, 126, 127, 128, 129}
	for n.build.Load() == nil { // the second search starts it, unless an earlier test's build holds the slot
		if got := search(); !slices.Equal(got, want) {
			t.Fatalf("before the array: %v", got)
		}
	}
	if got := search(); !slices.Equal(got, want) {
		t.Fatalf("during the build: %v", got)
	}
	if n.sa.Load() == nil {
		t.Fatal("a search during the build returned before the array was there: it read the column beside the build")
	}
}

// TestNames_ALargeColumnSearchedTwiceGetsASuffixArray checks when the
// suffix array is built (from the second search of a large column, in the
// background) and that searches use it once it is there.
func TestNames_ALargeColumnSearchedTwiceGetsASuffixArray(t *testing.T) {
	var recs []Record
	for i := range 3000 {
		recs = append(recs, &Identity{Base: Base{ID: fmt.Sprint(i)}, Named: Named{Name: fmt.Sprintf("id-%06d", i)}})
	}
	search := func(n *Names, sub string) (found []int) {
		n.EachContaining(sub, func(i int) bool { found = append(found, i); return true })
		return found
	}
	small := newNames(recs) // under indexFrom: never indexed
	search(small, "id-0001")
	search(small, "id-0001")

	large := newNames(recs)
	large.indexFrom = len(large.blob)
	search(large, "id-0012")
	if large.build.Load() != nil || large.sa.Load() != nil {
		t.Fatal("the first search started a build")
	}
	want := []int{1200, 1201, 1202, 1203, 1204, 1205, 1206, 1207, 1208, 1209}
	if got := search(large, "id-00120"); !slices.Equal(got, want) { // starts the build
		t.Fatalf("during the build: %v", got)
	}
	waitFor(t, "no suffix array after the second search", func() bool { return large.sa.Load() != nil })
	if small.sa.Load() != nil || small.build.Load() != nil {
		t.Fatal("a column under indexFrom got a suffix array")
	}
	if got := search(large, "id-00120"); !slices.Equal(got, want) {
		t.Fatalf("from the suffix array: %v", got)
	}
	if got := search(large, "9id-0012"); len(got) != 0 { // "id-001199id-001200" has it
		t.Fatalf("across names: %v", got)
	}
	// A substring in most names is read from the column, with the same answer.
	if got := search(large, "id-00"); len(got) != 3000 {
		t.Fatalf("a substring every name has: %d names", len(got))
	}
}

// TestNames_ARareByteNeedsNoSuffixArray: a large column lists the offsets
// of its rarest bytes, and a search for a substring with one of them
// compares it there only, without counting toward a suffix array (whose
// build costs as much as some twenty reads of the column); a substring of
// common bytes still gets one.
func TestNames_ARareByteNeedsNoSuffixArray(t *testing.T) {
	var recs []Record
	for i := range 3000 {
		recs = append(recs, &Identity{Base: Base{ID: fmt.Sprint(i)}, Named: Named{Name: fmt.Sprintf("id-%06d", i)}})
	}
	for i := range 20 {
		recs = append(recs, &Identity{Base: Base{ID: fmt.Sprint(3000 + i)}, Named: Named{Name: fmt.Sprintf("scale-extra-%05d", i)}})
	}
	slices.SortFunc(recs, compareNamed)
	n := newNames(recs)
	n.indexFrom, n.rareFrom = len(n.blob), len(n.blob)
	search := func(sub string) (found []string) {
		n.EachContaining(sub, func(i int) bool { found = append(found, n.At(i)); return true })
		return found
	}
	if got := search("extra-0001"); len(got) != 10 { // starts the listing
		t.Fatalf("found %v", got)
	}
	waitFor(t, "the rare bytes are not listed after a search", func() bool { return n.rare.Load() != nil })
	if r := n.rare.Load(); r['x'] == nil || r['0'] != nil {
		t.Fatal("a rare byte is not listed, or a common one is")
	}
	for range 3 {
		if got := search("extra-0001"); len(got) != 10 || got[0] != "scale-extra-00010" || got[9] != "scale-extra-00019" {
			t.Fatalf("found %v", got)
		}
		if got := search("a-00019"); !slices.Equal(got, []string{"scale-extra-00019"}) {
			t.Fatalf("found %v", got)
		}
	}
	if n.build.Load() != nil || n.sa.Load() != nil {
		t.Fatal("searches for a rare byte started a suffix array")
	}
	search("id-0012")
	search("id-0012")
	waitFor(t, "no suffix array after two searches of common bytes", func() bool { return n.sa.Load() != nil })
}

// TestNames_AByteLeftOutOfTheListingMayUseASuffixArray: when rarer bytes
// fill the listing of offsets (an eighth of the column), a rare byte left
// out of it is searched as before, and its searches count toward a suffix
// array.
func TestNames_AByteLeftOutOfTheListingMayUseASuffixArray(t *testing.T) {
	var recs []Record
	for i := range 6400 { // two of 128 bytes per name, each byte in 100 names: a third of the column
		name := fmt.Sprintf("%04x", i) + string([]byte{byte(0x80 + i%128), byte(0x80 + (i*7+3)%128)})
		recs = append(recs, &Identity{Base: Base{ID: fmt.Sprint(i)}, Named: Named{Name: name}})
	}
	slices.SortFunc(recs, compareNamed)
	n := newNames(recs)
	n.indexFrom, n.rareFrom = 0, 0
	n.indexRare()
	r := n.rare.Load()
	left := -1
	for c := 0x80; c <= 0xff; c++ {
		if r[c] == nil {
			left = c
		}
	}
	if left < 0 || r[0x80] == nil && r[0x81] == nil && r[0x82] == nil {
		t.Fatal("the listing holds all rare bytes, or none")
	}
	sub := string([]byte{byte(left)})
	want := 0
	for _, r := range recs {
		if strings.Contains(r.RecordName(), sub) {
			want++
		}
	}
	for range 2 {
		found := 0
		n.EachContaining(sub, func(int) bool { found++; return true })
		if found != want {
			t.Fatalf("%q in %d names, want %d", sub, found, want)
		}
	}
	waitFor(t, "two searches of a byte left out of the listing built no suffix array", func() bool { return n.sa.Load() != nil })
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
		return v.(*sortedRecords).gen
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

// BenchmarkNames_MillionNames is a name search over a million names shaped
// as scalebench's ("id-%06d"), for a substring whose bytes every name has:
// read from the column, from the suffix array, and the array's build.
func BenchmarkNames_MillionNames(b *testing.B) {
	recs := make([]Record, 1_000_000)
	for i := range recs {
		recs[i] = &Identity{Base: Base{ID: fmt.Sprint(i)}, Named: Named{Name: fmt.Sprintf("id-%06d", i)}}
	}
	count := func(n *Names) (found int) {
		n.EachContaining("id-00012", func(int) bool { found++; return true })
		return found
	}
	b.Run("scan", func(b *testing.B) {
		n := newNames(recs)
		n.indexFrom = len(n.blob) + 1
		for b.Loop() {
			if count(n) != 10 {
				b.Fatal("wrong count")
			}
		}
	})
	b.Run("suffixarray", func(b *testing.B) {
		n := newNames(recs)
		n.sa.Store(suffixarray.New([]byte(n.blob)))
		for b.Loop() {
			if count(n) != 10 {
				b.Fatal("wrong count")
			}
		}
	})
	// Right after a fold of the table (1/32 of it changed), before the
	// new column's array is built: through the old one's (Names.via).
	b.Run("folded", func(b *testing.B) {
		root := &sortedRecords{recs: recs}
		root.columnNames().sa.Store(suffixarray.New([]byte(root.columnNames().blob)))
		d := &delta{root: root}
		for i := range len(recs) / deltaShare {
			r := &Identity{Base: Base{ID: fmt.Sprint("n", i)}, Named: Named{Name: fmt.Sprintf("id-%06d-new", i*deltaShare)}}
			d.fresh, d.at = append(d.fresh, r), append(d.at, root.place(r))
		}
		indexBuilds <- struct{}{} // the new column's build waits
		defer func() { <-indexBuilds }()
		n := (&sortedRecords{d: d}).columnNames().folded()
		for b.Loop() {
			if count(n) != 11 {
				b.Fatal("wrong count")
			}
		}
	})
	// A substring with a byte 20 names of the million have: read by
	// jumping between that byte's occurrences, or at their offsets.
	rare := slices.Clone(recs)
	for i := range 20 {
		rare = append(rare, &Identity{Base: Base{ID: fmt.Sprint(i)}, Named: Named{Name: fmt.Sprintf("scale-extra-%05d", i)}})
	}
	slices.SortFunc(rare, compareNamed)
	for _, listed := range []bool{false, true} {
		b.Run(fmt.Sprintf("rarebyte/offsets=%v", listed), func(b *testing.B) {
			n := newNames(rare)
			n.indexFrom = len(n.blob) + 1
			if listed {
				n.indexRare()
			} else {
				n.rareFrom = len(n.blob) + 1
			}
			for b.Loop() {
				found := 0
				n.EachContaining("extra-0001", func(int) bool { found++; return true })
				if found != 10 {
					b.Fatal("wrong count")
				}
			}
		})
	}
	b.Run("build", func(b *testing.B) {
		n := newNames(recs)
		for b.Loop() {
			suffixarray.New([]byte(n.blob))
		}
	})
}

// waitFor polls cond until it holds, failing the test with what after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}
