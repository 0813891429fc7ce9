package order

import (
	"fmt"
	"index/suffixarray"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// rec is a record of the tests: an id and a name.
type rec struct{ id, name string }

func (r *rec) GetID() string      { return r.id }
func (r *rec) RecordName() string { return r.name }

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
		var recs []*rec
		for j := range rng.IntN(30) {
			recs = append(recs, &rec{id: fmt.Sprint(j), name: word(6)})
		}
		scanned := NewNames(recs)
		indexed := NewNames(recs) // searched through its suffix array (or past it when sub is everywhere)
		indexed.sa.Store(suffixarray.New([]byte(indexed.blob)))
		listed := NewNames(recs) // searched at the offsets of its rarest bytes
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
	var recs []*rec
	for i := range 200000 { // a build of some tens of milliseconds, a read of about one
		recs = append(recs, &rec{id: fmt.Sprint(i), name: fmt.Sprintf("id-%06d", i)})
	}
	n := NewNames(recs)
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
	var recs []*rec
	for i := range 3000 {
		recs = append(recs, &rec{id: fmt.Sprint(i), name: fmt.Sprintf("id-%06d", i)})
	}
	search := func(n *Names, sub string) (found []int) {
		n.EachContaining(sub, func(i int) bool { found = append(found, i); return true })
		return found
	}
	small := NewNames(recs) // under indexFrom: never indexed
	search(small, "id-0001")
	search(small, "id-0001")

	large := NewNames(recs)
	large.indexFrom = len(large.blob)
	search(large, "id-0012")
	if large.build.Load() != nil || large.sa.Load() != nil {
		t.Fatal("the first search started a build")
	}
	want := []int{1200, 1201, 1202, 1203, 1204, 1205, 1206, 1207, 1208, 1209}
	if got := search(large, "id-00120"); !slices.Equal(got, want) { // starts the build
		t.Fatalf("during the build: %v", got)
	}
	waitForArray(t, "no suffix array after the second search", large, func() { search(large, "id-00120") })
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
	var recs []*rec
	for i := range 3000 {
		recs = append(recs, &rec{id: fmt.Sprint(i), name: fmt.Sprintf("id-%06d", i)})
	}
	for i := range 20 {
		recs = append(recs, &rec{id: fmt.Sprint(3000 + i), name: fmt.Sprintf("scale-extra-%05d", i)})
	}
	slices.SortFunc(recs, compareNamed[*rec])
	n := NewNames(recs)
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
	waitForArray(t, "no suffix array after two searches of common bytes", n, func() { search("id-0012") })
}

// TestNames_AByteLeftOutOfTheListingMayUseASuffixArray: when rarer bytes
// fill the listing of offsets (an eighth of the column), a rare byte left
// out of it is searched as before, and its searches count toward a suffix
// array.
func TestNames_AByteLeftOutOfTheListingMayUseASuffixArray(t *testing.T) {
	var recs []*rec
	for i := range 6400 { // two of 128 bytes per name, each byte in 100 names: a third of the column
		name := fmt.Sprintf("%04x", i) + string([]byte{byte(0x80 + i%128), byte(0x80 + (i*7+3)%128)})
		recs = append(recs, &rec{id: fmt.Sprint(i), name: name})
	}
	slices.SortFunc(recs, compareNamed[*rec])
	n := NewNames(recs)
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
	waitForArray(t, "two searches of a byte left out of the listing built no suffix array", n, func() {
		n.EachContaining(sub, func(int) bool { return true })
	})
}

// waitFor polls cond until it holds, failing the test with what after 10 s.
// waitForArray waits until n has its suffix array. While no build of it
// is under way, search searches it again: a background build of a column of
// an earlier test may hold the process's one build slot (indexBuilds), and
// then a search does not start a build, a later one does.
func waitForArray(t *testing.T, what string, n *Names, search func()) {
	t.Helper()
	waitFor(t, what, func() bool {
		if n.sa.Load() == nil && n.build.Load() == nil {
			search()
		}
		return n.sa.Load() != nil
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// TestNames_ManyFreshNamesSearchedAsABlob: a column read through its root
// with many fresh names (packed into a column of their own) finds, in
// order, the names a scan of the whole order finds, with few fresh names
// and with many, for substrings of names, of two names run together and of
// none.
func TestNames_ManyFreshNamesSearchedAsABlob(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	word := func() string {
		b := make([]byte, 1+rng.IntN(8))
		for i := range b {
			b[i] = "abcxyz-0"[rng.IntN(8)]
		}
		return string(b)
	}
	var recs []*rec
	for i := range 3000 {
		recs = append(recs, &rec{id: fmt.Sprintf("id-%05d", i), name: word()})
	}
	slices.SortFunc(recs, compareNamed[*rec])
	for _, fresh := range []int{packFreshFrom / 2, packFreshFrom, 4 * packFreshFrom} {
		root := &List[*rec]{recs: recs}
		d := &delta[*rec]{root: root}
		var added []*rec
		for i := range fresh {
			added = append(added, &rec{id: fmt.Sprintf("new-%05d", i), name: word()})
		}
		slices.SortFunc(added, compareNamed[*rec])
		for _, r := range added {
			d.fresh, d.at = append(d.fresh, r), append(d.at, root.place(r))
		}
		for i := range recs {
			if rng.IntN(5) == 0 {
				d.gone = append(d.gone, i)
			}
		}
		c := &List[*rec]{d: d}
		col := c.Names()
		if (col.freshCol != nil) != (fresh >= packFreshFrom) {
			t.Fatalf("%d fresh names: packed %v", fresh, col.freshCol != nil)
		}
		var all []string
		c.Each(func(r *rec) bool { all = append(all, r.RecordName()); return true })
		for range 200 {
			sub := word()
			if rng.IntN(2) == 0 {
				i := rng.IntN(len(all) - 1)
				two := all[i] + all[i+1]
				a := rng.IntN(len(two))
				sub = two[a:min(len(two), a+1+rng.IntN(6))]
			}
			var found, scan []int
			col.EachContaining(sub, func(i int) bool { found = append(found, i); return true })
			for i, name := range all {
				if strings.Contains(name, sub) {
					scan = append(scan, i)
				}
			}
			if !slices.Equal(found, scan) {
				t.Fatalf("%d fresh names: %q found at %v, a scan finds it at %v", fresh, sub, found, scan)
			}
		}
	}
}

// TestNames_AFoldOfAnIndexedColumnIsSearchedThroughTheOldArray: the column
// a fold makes from a column read through a root with a suffix array
// starts building its own array at once and, until it is there, is
// searched through the old column (the old root's array and the fresh
// names), with what a scan finds; once it is, it is searched by itself.
// A root without an array gives a column that builds none by itself.
func TestNames_AFoldOfAnIndexedColumnIsSearchedThroughTheOldArray(t *testing.T) {
	// Not parallel: it holds indexBuilds, the process's one build slot.
	var recs []*rec
	for i := range 3000 {
		recs = append(recs, &rec{id: fmt.Sprintf("id-%05d", i), name: fmt.Sprintf("name-%05d", i)})
	}
	folded := func(indexed bool) (*Names, []string) {
		root := &List[*rec]{recs: recs}
		rootCol := root.Names()
		rootCol.indexFrom = len(rootCol.blob) / 2
		if indexed {
			rootCol.sa.Store(suffixarray.New([]byte(rootCol.blob)))
		}
		d := &delta[*rec]{root: root}
		for i := range 400 {
			r := &rec{id: fmt.Sprintf("new-%05d", i), name: fmt.Sprintf("name-%05d-new", i*7)}
			d.fresh, d.at = append(d.fresh, r), append(d.at, root.place(r))
		}
		for i := 0; i < len(recs); i += 3 {
			d.gone = append(d.gone, i)
		}
		c := &List[*rec]{d: d}
		var all []string
		c.Each(func(r *rec) bool { all = append(all, r.RecordName()); return true })
		return c.Names().folded(), all
	}
	check := func(n *Names, all []string, when string) {
		t.Helper()
		for _, sub := range []string{"name-0012", "-new", "1-new", "e-0", "name-00120-", "zzz"} {
			var found, want []int
			n.EachContaining(sub, func(i int) bool { found = append(found, i); return true })
			for i, name := range all {
				if strings.Contains(name, sub) {
					want = append(want, i)
				}
			}
			if !slices.Equal(found, want) {
				t.Fatalf("%s: %q found %v, want %v", when, sub, found, want)
			}
		}
	}

	indexBuilds <- struct{}{} // no build can start
	m, all := folded(true)
	if m.via.Load() == nil || m.sa.Load() != nil {
		t.Fatal("the fold of an indexed column is not searched through the old one")
	}
	check(m, all, "before its array")
	if m.via.Load() == nil {
		t.Fatal("a search without the array let go of the old column")
	}
	plain, plainAll := folded(false)
	<-indexBuilds

	check(m, all, "with a build free to start") // the next search starts the build the fold could not
	waitForArray(t, "the folded column got no array of its own", m, func() { check(m, all, "while its array is built") })
	check(m, all, "with its array")
	if m.via.Load() != nil {
		t.Fatal("the old column is kept after the new array is built")
	}
	if plain.via.Load() != nil || plain.build.Load() != nil || plain.sa.Load() != nil {
		t.Fatal("a fold of a column without an array started one")
	}
	check(plain, plainAll, "a fold without an array")
}
