package order

import (
	"fmt"
	"index/suffixarray"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

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
	waitFor(t, "the folded column got no array of its own", func() bool { return m.sa.Load() != nil })
	check(m, all, "with its array")
	if m.via.Load() != nil {
		t.Fatal("the old column is kept after the new array is built")
	}
	if plain.via.Load() != nil || plain.build.Load() != nil || plain.sa.Load() != nil {
		t.Fatal("a fold of a column without an array started one")
	}
	check(plain, plainAll, "a fold without an array")
}
