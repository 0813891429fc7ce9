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
		for range deltaFrom + 1500 {
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
	fromDelta, throughRoot := 0, 0
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
		if c := tx.sortedFromDelta(KindIdentity, tx.gen(KindIdentity)); c != nil {
			fromDelta++
			if !slices.Equal(c.recs, want) {
				t.Fatalf("round %d: the order from the delta differs from the walk", round)
			}
			if got := c.readyNames(); got != nil {
				if w := newNames(want); got.blob != w.blob || !slices.Equal(got.ends, w.ends) || got.count != w.count {
					t.Fatalf("round %d: the name column from the delta differs", round)
				}
			}
		}
		recs, col := tx.SortedNames(KindIdentity)
		if !slices.Equal(recs, want) {
			t.Fatalf("round %d: Sorted differs from the walk", round)
		}
		if w := newNames(want); col.blob != w.blob || !slices.Equal(col.ends, w.ends) || col.count != w.count {
			t.Fatalf("round %d: SortedNames' column differs", round)
		}
		// Searches through the root's suffix array find what a scan finds.
		if col.root != nil && col.sa.Load() == nil {
			throughRoot++
			if col.root.sa.Load() == nil && rng.IntN(2) == 0 {
				col.root.sa.Store(suffixarray.New([]byte(col.root.blob)))
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
		}
	}
	if throughRoot < 250 {
		t.Fatalf("%d rounds searched through a root", throughRoot)
	}
	// Every round but perhaps the first has an older order to start from.
	if fromDelta < 299 {
		t.Fatalf("the delta made the order in %d rounds of 300", fromDelta)
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
