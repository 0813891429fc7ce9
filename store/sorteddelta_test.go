package store

import (
	"fmt"
	"index/suffixarray"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortedFromDelta_SameAsAWalk writes random changes to a table large
// enough for the delta (inserts, renames, changes that keep the name,
// deletes, a record written twice in one transaction, names with NUL bytes
// and names that are prefixes of others) and checks after each round that
// the order made from the older order and the changes is the order a walk
// of the name index gives, with the same name column as one built from
// scratch.
func TestSortedFromDelta_SameAsAWalk(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	s := New()
	names := []string{"a", "a\x00b", "ab", "a\x00", "b", "\x00"}
	name := func() string {
		if rng.IntN(10) == 0 {
			if rng.IntN(2) == 0 {
				return names[rng.IntN(len(names))] // "a" against "a\x00b": the index orders by name+NUL+id
			}
			return names[rng.IntN(len(names))] + fmt.Sprint(rng.IntN(50))
		}
		return fmt.Sprintf("n-%05d", rng.IntN(1_000_000))
	}
	var ids []string
	seq := 0
	insert := func(tx *Tx) error {
		seq++
		id := fmt.Sprintf("id%06d", seq)
		n := name()
		if tx.Exists(KindIdentity, id) || tx.nameTaken(n) {
			return nil
		}
		ids = append(ids, id)
		return tx.Insert(KindIdentity, &Identity{Base: Base{ID: id}, Named: Named{Name: n}, TypeID: "Device"})
	}
	mustWrite(t, s, func(tx *Tx) error {
		// A table whose share (1/deltaShare) passes deltaNestFrom, so that
		// orders are kept as deltas over deltas too.
		for range deltaShare*(deltaNestFrom+50) + 2000 {
			if err := insert(tx); err != nil {
				return err
			}
		}
		return nil
	})
	change := func(tx *Tx) error {
		id := ids[rng.IntN(len(ids))]
		r, err := tx.Get(KindIdentity, id)
		if err != nil {
			return nil // deleted earlier
		}
		old := r.(*Identity)
		switch rng.IntN(4) {
		case 0:
			return tx.Remove(KindIdentity, id)
		case 1:
			n := *old
			n.Name = name()
			if tx.nameTaken(n.Name) {
				return nil
			}
			return tx.Replace(KindIdentity, &n)
		case 2:
			n := *old
			n.RoleAttributes = []string{fmt.Sprint(rng.IntN(5))}
			return tx.Replace(KindIdentity, &n)
		}
		return insert(tx)
	}
	fromDelta, unchanged, throughRoot, nested := 0, 0, 0, 0
	for round := range 300 {
		base := s.Read()
		if rng.IntN(3) > 0 {
			if rng.IntN(2) == 0 {
				base.SortedNames(KindIdentity)
			} else {
				base.Sorted(KindIdentity)
			}
		}
		for range 1 + rng.IntN(3) {
			mustWrite(t, s, func(tx *Tx) error {
				for range 1 + rng.IntN(20) {
					if err := change(tx); err != nil {
						return err
					}
				}
				return nil
			})
		}
		tx := s.Read()
		var want []Record
		tx.Each(KindIdentity, "name", func(r Record) bool { want = append(want, r); return true })
		switch gen := tx.gen(KindIdentity); {
		case tx.cachedSorted(KindIdentity, gen) != nil:
			unchanged++ // every change of the round failed (a name taken, a record deleted)
		default:
			if c := tx.sortedFromDelta(KindIdentity, gen); c != nil {
				fromDelta++
				checkOrder(t, round, "from the delta", c, want)
			}
		}
		recs, col := tx.SortedNames(KindIdentity)
		checkOrder(t, round, "SortedNames", recs.c, want)
		if recs.c.d != nil && recs.c.d.root.d != nil {
			nested++
		}
		// The column, read name by name and made into a blob, is the one
		// a build from the walk gives.
		w := newNames(want)
		if col.Len() != len(want) {
			t.Fatalf("round %d: %d names, want %d", round, col.Len(), len(want))
		}
		for i := range want {
			if col.At(i) != w.At(i) {
				t.Fatalf("round %d: name %d is %q, want %q", round, i, col.At(i), w.At(i))
			}
		}
		if m := col.materialize(); m.blob != w.blob || !slices.Equal(m.ends, w.ends) || m.count != w.count || col.count != w.count {
			t.Fatalf("round %d: the column differs from a build", round)
		}
		if rng.IntN(4) == 0 { // the next entries start from a copy of this one
			tx.Sorted(KindIdentity)
		}
		// Searches through the root's suffix array find what a scan finds.
		if col.root != nil && col.sa.Load() == nil {
			throughRoot++
			root := col.root
			for root.root != nil {
				root = root.root
			}
			if root.sa.Load() == nil && rng.IntN(2) == 0 {
				root.sa.Store(suffixarray.New([]byte(root.blob)))
			}
		}
		for range 10 {
			sub := fmt.Sprint(rng.IntN(100))
			if rng.IntN(2) == 0 {
				n := want[rng.IntN(len(want))].RecordName()
				a := rng.IntN(len(n) + 1)
				sub = n[a:min(len(n), a+1+rng.IntN(6))]
			}
			var found, scan []int
			col.EachContaining(sub, func(i int) bool { found = append(found, i); return true })
			for i, r := range want {
				if strings.Contains(r.RecordName(), sub) {
					scan = append(scan, i)
				}
			}
			if !slices.Equal(found, scan) {
				t.Fatalf("round %d: %q found at %v, a scan finds it at %v (root array %v)", round, sub, found, scan, col.root != nil && col.root.sa.Load() != nil)
			}
			if len(scan) > 0 { // stopping early stops, after the first matches
				stop := 1 + rng.IntN(len(scan))
				var some []int
				col.EachContaining(sub, func(i int) bool { some = append(some, i); return len(some) < stop })
				if !slices.Equal(some, scan[:stop]) {
					t.Fatalf("round %d: %q stopped after %d: %v, want %v", round, sub, stop, some, scan[:stop])
				}
			}
		}
	}
	if throughRoot < 250 {
		t.Fatalf("%d rounds searched through a root", throughRoot)
	}
	if nested < 50 {
		t.Fatalf("%d rounds read an order kept as a delta over a delta", nested)
	}
	// Every round but perhaps the first has an older order to start from.
	if fromDelta < 299-unchanged {
		t.Fatalf("the delta made the order in %d rounds of %d that changed the table", fromDelta, 300-unchanged)
	}
}

// checkOrder compares an entry, read every way, with the order of a walk.
func checkOrder(t *testing.T, round int, what string, c *sortedRecords, want []Record) {
	t.Helper()
	if c.len() != len(want) {
		t.Fatalf("round %d: %s: %d records, want %d", round, what, c.len(), len(want))
	}
	for i, r := range want {
		if c.at(i) != r {
			t.Fatalf("round %d: %s: record %d is %q, want %q", round, what, i, c.at(i).RecordName(), r.RecordName())
		}
	}
	var each []Record
	c.each(func(r Record) bool { each = append(each, r); return true })
	if !slices.Equal(each, want) {
		t.Fatalf("round %d: %s: each differs from the walk", round, what)
	}
	stop := len(want) / 3
	n := 0
	c.each(func(Record) bool { n++; return n < stop })
	if n != stop {
		t.Fatalf("round %d: %s: each went on after false (%d calls, want %d)", round, what, n, stop)
	}
	if !slices.Equal(c.slice(), want) {
		t.Fatalf("round %d: %s: the slice differs from the walk", round, what)
	}
}

// nameTaken reports whether an identity has the name.
func (tx *Tx) nameTaken(name string) bool {
	taken := false
	tx.Each(KindIdentity, "name", func(Record) bool { taken = true; return false }, name)
	return taken
}

// TestCompareNamed_OrdersAsTheNameIndex checks the comparison against the
// index's own order on names where the two differ from a plain comparison
// of names ("a" sorts after "a\x00b" in the index, whose keys are
// name+NUL+id+NUL).
func TestCompareNamed_OrdersAsTheNameIndex(t *testing.T) {
	s := New()
	insertIdentities(t, s, "a", "a\x00b", "a\x00", "ab", "\x00", "b", "a\x00\x00")
	var walk []Record
	s.Read().Each(KindIdentity, "name", func(r Record) bool { walk = append(walk, r); return true })
	for i := range walk {
		for j := range walk {
			if got, want := compareNamed(walk[i], walk[j]), cmpInt(i, j); got != want {
				t.Errorf("compareNamed(%q, %q) = %d, the index puts them %d", walk[i].RecordName(), walk[j].RecordName(), got, want)
			}
		}
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestSortedFromDelta_ConcurrentReaders has readers of one generation, each
// with its own view, read its order, kept as a delta over a delta, every
// way at once (through the bases, by iteration, as a slice that one of
// them makes, the column and searches) while the next generations are
// written; each must see the order of a walk. Run with -race, it checks
// the lazily made slices and columns, the generation's and its base's,
// are published safely.
func TestSortedFromDelta_ConcurrentReaders(t *testing.T) {
	s := New()
	var names []string
	for i := range deltaShare * (2*deltaNestFrom + 100) {
		names = append(names, fmt.Sprintf("n-%05d", i))
	}
	insertIdentities(t, s, names...)
	s.Read().SortedNames(KindIdentity) // the root
	var more []string
	for i := range deltaNestFrom + 10 {
		more = append(more, fmt.Sprintf("p-%05d", i))
	}
	insertIdentities(t, s, more...)
	s.Read().SortedNames(KindIdentity) // a delta over the root, large enough to be the base of the next ones
	for round := range 10 {
		insertIdentities(t, s, fmt.Sprintf("m-%02d", round), fmt.Sprintf("n-%05da", round))
		tx := s.Read()
		var want []Record
		tx.Each(KindIdentity, "name", func(r Record) bool { want = append(want, r); return true })
		withSub := 0
		for _, r := range want {
			if strings.Contains(r.RecordName(), "n-0001") {
				withSub++
			}
		}
		errs := make(chan string, 8)
		for g := range 8 {
			go func() {
				tx := s.Read() // a view per reader, as per request; they share the kept entry
				recs, col := tx.SortedNames(KindIdentity)
				if recs.c.d == nil || recs.c.d.root.d == nil {
					errs <- fmt.Sprintf("round %d: not a delta over a delta", round)
					return
				}
				switch g % 4 {
				case 0:
					for i, r := range want {
						if recs.At(i) != r || col.At(i) != r.RecordName() {
							errs <- fmt.Sprintf("round %d: record %d differs", round, i)
							return
						}
					}
				case 1:
					i := 0
					recs.c.each(func(r Record) bool {
						if r != want[i] {
							errs <- fmt.Sprintf("round %d: iteration differs at %d", round, i)
							i = -1
							return false
						}
						i++
						return true
					})
					if i < 0 {
						return
					}
				case 2:
					if !slices.Equal(tx.Sorted(KindIdentity), want) {
						errs <- fmt.Sprintf("round %d: the slice differs", round)
						return
					}
				case 3:
					n := 0
					col.EachContaining("n-0001", func(int) bool { n++; return true })
					if n != withSub {
						errs <- fmt.Sprintf("round %d: %d names with n-0001, want %d", round, n, withSub)
						return
					}
				}
				errs <- ""
			}()
		}
		for range 8 {
			if e := <-errs; e != "" {
				t.Fatal(e)
			}
		}
	}
}

// TestSortedFromDelta_StaysWithinItsShare: renames one after another, each
// followed by the first page of the list, keep the order's delta within
// 1/deltaShare of its root: past it a new root is made, not a delta from the
// old root with every change since, made again for every list.
func TestSortedFromDelta_StaysWithinItsShare(t *testing.T) {
	t.Parallel()
	s := New()
	var names []string
	for i := range deltaFrom + 1000 {
		names = append(names, fmt.Sprintf("n-%05d", i))
	}
	insertIdentities(t, s, names...)
	s.Read().EachSorted(KindIdentity, func(Record) bool { return true }) // the root
	roots := 0
	var last *sortedRecords
	for i := range 3 * len(names) / deltaShare {
		rename(t, s, "id-"+names[i], fmt.Sprintf("renamed-%05d", i))
		c := newestOrder(t, s)
		root := c.root()
		for e := c; e.d != nil; e = e.d.root {
			if size, most := e.d.size(), len(root.recs)/deltaShare; size > most {
				t.Fatalf("rename %d: a delta of %d entries over a root of %d (at most %d)", i, size, len(root.recs), most)
			}
		}
		if last != nil && root != last {
			roots++
		}
		last = root
	}
	if roots == 0 {
		t.Fatal("no new root made")
	}
}

// TestSortedFromDelta_NewGenerationsCopyLittle: on a table whose share is
// larger than deltaTopMost, the delta each new generation copies stays
// small: once a delta over the root passes deltaNestFrom entries, the next
// generations are deltas over it, and a larger delta is made only when one
// of those is folded into the root's (once per some hundreds of renames).
// Copying the delta over the root for every generation, as before, makes
// one in six generations copy more than deltaTopMost entries here.
func TestSortedFromDelta_NewGenerationsCopyLittle(t *testing.T) {
	t.Parallel()
	s := New()
	var names []string
	for i := range deltaShare * (deltaTopMost + 250) {
		names = append(names, fmt.Sprintf("n-%06d", i))
	}
	insertIdentities(t, s, names...)
	s.Read().EachSorted(KindIdentity, func(Record) bool { return true }) // the root
	const renames = 2000
	large, nested := 0, 0
	for i := range renames {
		n := (i * 7919) % len(names)
		rename(t, s, "id-"+names[n], fmt.Sprintf("renamed-%06d-%d", n, i))
		c := newestOrder(t, s)
		if c.d.size() > deltaTopMost {
			large++
		}
		if c.d.root.d != nil {
			nested++
		}
	}
	if large > renames/100 || nested < renames/2 {
		t.Fatalf("%d of %d generations copied more than %d entries; %d were deltas over deltas", large, renames, deltaTopMost, nested)
	}
}

// rename renames the identity id and reads the first page of the list.
func rename(t *testing.T, s *Store, id, name string) {
	t.Helper()
	mustWrite(t, s, func(tx *Tx) error {
		r, err := tx.Get(KindIdentity, id)
		if err != nil {
			return err
		}
		n := *r.(*Identity)
		n.Name = name
		return tx.Replace(KindIdentity, &n)
	})
	page := 0
	s.Read().EachSorted(KindIdentity, func(Record) bool { page++; return page < 10 })
}

// newestOrder is the identities' cache entry, which must be kept as a
// delta.
func newestOrder(t *testing.T, s *Store) *sortedRecords {
	t.Helper()
	v, _ := s.sorted.Load(KindIdentity.Table)
	c := v.(*sortedRecords)
	if c.d == nil {
		t.Fatal("the order was walked again")
	}
	return c
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
	var recs []Record
	for i := range 3000 {
		recs = append(recs, &Identity{Base: Base{ID: fmt.Sprintf("id-%05d", i)}, Named: Named{Name: word()}})
	}
	slices.SortFunc(recs, compareNamed)
	for _, fresh := range []int{packFreshFrom / 2, packFreshFrom, 4 * packFreshFrom} {
		root := &sortedRecords{recs: recs}
		d := &delta{root: root}
		var added []Record
		for i := range fresh {
			added = append(added, &Identity{Base: Base{ID: fmt.Sprintf("new-%05d", i)}, Named: Named{Name: word()}})
		}
		slices.SortFunc(added, compareNamed)
		for _, r := range added {
			d.fresh, d.at = append(d.fresh, r), append(d.at, root.place(r))
		}
		for i := range recs {
			if rng.IntN(5) == 0 {
				d.gone = append(d.gone, i)
			}
		}
		c := &sortedRecords{d: d}
		col := c.columnNames()
		if (col.freshCol != nil) != (fresh >= packFreshFrom) {
			t.Fatalf("%d fresh names: packed %v", fresh, col.freshCol != nil)
		}
		var all []string
		c.each(func(r Record) bool { all = append(all, r.RecordName()); return true })
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
	var recs []Record
	for i := range 3000 {
		recs = append(recs, &Identity{Base: Base{ID: fmt.Sprintf("id-%05d", i)}, Named: Named{Name: fmt.Sprintf("name-%05d", i)}})
	}
	folded := func(indexed bool) (*Names, []string) {
		root := &sortedRecords{recs: recs}
		rootCol := root.columnNames()
		rootCol.indexFrom = len(rootCol.blob) / 2
		if indexed {
			rootCol.sa.Store(suffixarray.New([]byte(rootCol.blob)))
		}
		d := &delta{root: root}
		for i := range 400 {
			r := &Identity{Base: Base{ID: fmt.Sprintf("new-%05d", i)}, Named: Named{Name: fmt.Sprintf("name-%05d-new", i*7)}}
			d.fresh, d.at = append(d.fresh, r), append(d.at, root.place(r))
		}
		for i := 0; i < len(recs); i += 3 {
			d.gone = append(d.gone, i)
		}
		c := &sortedRecords{d: d}
		var all []string
		c.each(func(r Record) bool { all = append(all, r.RecordName()); return true })
		return c.columnNames().folded(), all
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
