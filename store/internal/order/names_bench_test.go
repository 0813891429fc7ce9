package order

import (
	"fmt"
	"index/suffixarray"
	"slices"
	"testing"
)

// BenchmarkNames_MillionNames is a name search over a million names shaped
// as scalebench's ("id-%06d"), for a substring whose bytes every name has:
// read from the column, from the suffix array, and the array's build.
func BenchmarkNames_MillionNames(b *testing.B) {
	recs := make([]*rec, 1_000_000)
	for i := range recs {
		recs[i] = &rec{id: fmt.Sprint(i), name: fmt.Sprintf("id-%06d", i)}
	}
	count := func(n *Names) (found int) {
		n.EachContaining("id-00012", func(int) bool { found++; return true })
		return found
	}
	b.Run("scan", func(b *testing.B) {
		n := NewNames(recs)
		n.indexFrom = len(n.blob) + 1
		for b.Loop() {
			if count(n) != 10 {
				b.Fatal("wrong count")
			}
		}
	})
	b.Run("suffixarray", func(b *testing.B) {
		n := NewNames(recs)
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
		root := &List[*rec]{recs: recs}
		root.Names().sa.Store(suffixarray.New([]byte(root.Names().blob)))
		d := &delta[*rec]{root: root}
		for i := range len(recs) / deltaShare {
			r := &rec{id: fmt.Sprint("n", i), name: fmt.Sprintf("id-%06d-new", i*deltaShare)}
			d.fresh, d.at = append(d.fresh, r), append(d.at, root.place(r))
		}
		indexBuilds <- struct{}{} // the new column's build waits
		defer func() { <-indexBuilds }()
		n := (&List[*rec]{d: d}).Names().folded()
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
		rare = append(rare, &rec{id: fmt.Sprint(i), name: fmt.Sprintf("scale-extra-%05d", i)})
	}
	slices.SortFunc(rare, compareNamed[*rec])
	for _, listed := range []bool{false, true} {
		b.Run(fmt.Sprintf("rarebyte/offsets=%v", listed), func(b *testing.B) {
			n := NewNames(rare)
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
		n := NewNames(recs)
		for b.Loop() {
			suffixarray.New([]byte(n.blob))
		}
	})
}
