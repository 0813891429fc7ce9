package store

import (
	"fmt"
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
		if recs.c.Base() != nil && recs.c.Base().Base() != nil {
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
		mBlob, mEnds, mCount := col.Packed()
		wBlob, wEnds, wCount := w.Packed()
		if mBlob != wBlob || !slices.Equal(mEnds, wEnds) || mCount != wCount || col.ByteCounts() != wCount {
			t.Fatalf("round %d: the column differs from a build", round)
		}
		if rng.IntN(4) == 0 { // the next entries start from a copy of this one
			tx.Sorted(KindIdentity)
		}
		// Searches through the root's suffix array find what a scan finds.
		if col.Base() != nil && !col.HasSuffixArray() {
			throughRoot++
			root := col.Base()
			for root.Base() != nil {
				root = root.Base()
			}
			if !root.HasSuffixArray() && rng.IntN(2) == 0 {
				root.BuildSuffixArray()
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
				t.Fatalf("round %d: %q found at %v, a scan finds it at %v (root array %v)", round, sub, found, scan, col.Base() != nil && col.Base().HasSuffixArray())
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
	if c.Len() != len(want) {
		t.Fatalf("round %d: %s: %d records, want %d", round, what, c.Len(), len(want))
	}
	for i, r := range want {
		if c.At(i) != r {
			t.Fatalf("round %d: %s: record %d is %q, want %q", round, what, i, c.At(i).RecordName(), r.RecordName())
		}
	}
	var each []Record
	c.Each(func(r Record) bool { each = append(each, r); return true })
	if !slices.Equal(each, want) {
		t.Fatalf("round %d: %s: each differs from the walk", round, what)
	}
	stop := len(want) / 3
	n := 0
	c.Each(func(Record) bool { n++; return n < stop })
	if n != stop {
		t.Fatalf("round %d: %s: each went on after false (%d calls, want %d)", round, what, n, stop)
	}
	if !slices.Equal(c.Slice(), want) {
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
				if recs.c.Base() == nil || recs.c.Base().Base() == nil {
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
					recs.c.Each(func(r Record) bool {
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
		root := c.Root()
		for e := c; e.Base() != nil; e = e.Base() {
			if size, most := e.Changes(), root.Len()/deltaShare; size > most {
				t.Fatalf("rename %d: a delta of %d entries over a root of %d (at most %d)", i, size, root.Len(), most)
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
		if c.Changes() > deltaTopMost {
			large++
		}
		if c.Base().Base() != nil {
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
	if c.Base() == nil {
		t.Fatal("the order was walked again")
	}
	return c
}
