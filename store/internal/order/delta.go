package order

// Speed-tuned: an order kept as its base's and the changes since (delta),
// read record by record, by runs of the base, or made into a slice; and
// the name column of such an order, read through the base's column
// (Names.root) and folded into a column of its own for a new root.
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'ListAfterRename' -benchtime 2000x ./store/
//	             go test -run '^$' -bench 'Names_MillionNames/folded' -benchtime 20x ./store/internal/order/
//	correctness: TestSortedFromDelta_SameAsAWalk, TestSortedFromDelta_ConcurrentReaders (./store/),
//	             TestList_DeltaReadsAsItsSlice, TestNames_ManyFreshNamesSearchedAsABlob,
//	             TestNames_AFoldOfAnIndexedColumnIsSearchedThroughTheOldArray (this package)
//
// A change must keep: gone ascending, fresh in list order with at[x] the
// base's index it goes before (non-decreasing); a base is a root or a
// delta over a root, never deeper; record i, run i..j and name i of an
// order read through its base are what its slice and a column built from
// it hold.

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// delta is a generation's order as its base's and the changes since: the
// indices of the base's records it does not have (gone, ascending), its
// records the base does not have (fresh, in order), and at[x], the index
// of the base's record fresh[x] comes before (the base's length for the
// end). A fresh record may replace a gone one with the same key. The base
// (root) is an entry that holds its slice, or a delta over one (a middle
// entry, see Next); never deeper.
type delta[R Record] struct {
	root     *List[R]
	gone, at []int
	fresh    []R
}

func (d *delta[R]) len() int { return d.root.Len() - len(d.gone) + len(d.fresh) }

// size is the number of changes the delta holds.
func (d *delta[R]) size() int { return len(d.gone) + len(d.fresh) }

// walkRuns calls run(i, j) for every run of a base's records i..j-1 that
// an order over n of them keeps (gone and at as in delta), and add(x) for
// every fresh record, in order from record from of the order, until one
// returns false.
func walkRuns(n int, gone, at []int, from int, run func(i, j int) bool, add func(x int) bool) {
	i, g, x := 0, 0, 0
	if from > 0 {
		var fresh bool
		x, i, fresh = locate(gone, at, from)
		if fresh {
			i = at[x]
		} else {
			x = sort.Search(len(at), func(y int) bool { return at[y] > i })
		}
		g = sort.SearchInts(gone, i)
	}
	for {
		next := n
		if g < len(gone) {
			next = min(next, gone[g])
		}
		if x < len(at) {
			next = min(next, at[x])
		}
		if i < next && !run(i, next) {
			return
		}
		i = next
		for ; x < len(at) && at[x] == i; x++ {
			if !add(x) {
				return
			}
		}
		if g < len(gone) && gone[g] == i {
			g++
			i++
			continue
		}
		if i == n {
			return
		}
	}
}

func (d *delta[R]) each(fn func(R) bool) {
	d.eachFrom(0, fn)
}

// eachFrom is each from record from of the order on.
func (d *delta[R]) eachFrom(from int, fn func(R) bool) {
	walkRuns(d.root.Len(), d.gone, d.at, from, func(i, j int) bool { return d.root.eachIn(i, j, fn) },
		func(x int) bool { return fn(d.fresh[x]) })
}

// eachIn calls fn with records i..j-1 of the entry's order until it
// returns false; it reports whether fn never did.
func (c *List[R]) eachIn(i, j int, fn func(R) bool) bool {
	if c.d == nil || c.recsReady.Load() {
		for _, r := range c.recs[i:j] {
			if !fn(r) {
				return false
			}
		}
		return true
	}
	left, done := j-i, true
	if left <= 0 {
		return true
	}
	c.d.eachFrom(i, func(r R) bool {
		done = fn(r)
		left--
		return done && left > 0
	})
	return done
}

func (d *delta[R]) materialize() []R {
	recs := make([]R, 0, d.len())
	d.each(func(r R) bool { recs = append(recs, r); return true })
	return recs
}

// freshAt is the index in the order of fresh record x.
func freshAt(gone, at []int, x int) int {
	g, _ := slices.BinarySearch(gone, at[x]) // the root's records before at[x] that are gone
	return at[x] - g + x
}

// locate says where record i of the order is: fresh record x (fresh true)
// or record r of the root.
func locate(gone, at []int, i int) (x, r int, fresh bool) {
	x = sort.Search(len(at), func(x int) bool { return freshAt(gone, at, x) >= i })
	if x < len(at) && freshAt(gone, at, x) == i {
		return x, 0, true
	}
	k := i - x // the root's k-th kept record, counting from 0
	g := sort.Search(len(gone), func(t int) bool { return gone[t]-t > k })
	return 0, k + g, false
}

func (d *delta[R]) record(i int) R {
	x, r, fresh := locate(d.gone, d.at, i)
	if fresh {
		return d.fresh[x]
	}
	return d.root.At(r)
}

// names is the name column of the order, read through the root's column.
func (d *delta[R]) names() *Names {
	root := d.root.Names()
	n := &Names{root: root, gone: d.gone, at: d.at, fresh: make([]string, len(d.fresh)), count: root.count, indexFrom: root.indexFrom}
	for _, i := range d.gone {
		name := root.At(i)
		for x := 0; x < len(name); x++ {
			n.count[name[x]]--
		}
	}
	for x, r := range d.fresh {
		name := r.RecordName()
		n.fresh[x] = name
		for y := 0; y < len(name); y++ {
			n.count[name[y]]++
		}
	}
	if len(n.fresh) >= packFreshFrom {
		n.freshCol = newNamesOf(len(n.fresh), func(x int) string { return n.fresh[x] })
		n.freshCol.indexFrom = math.MaxInt // searched as a blob, never indexed
	}
	return n
}

// packFreshFrom is the fewest fresh names a column packs into a column of
// their own for searches (Names.freshCol).
const packFreshFrom = 256

// materialize returns the column itself when it holds its names, or a
// copy of a column read through a base column (made into one that holds
// its names first when it is itself read through another).
func (n *Names) materialize() *Names {
	if n.root == nil {
		return n
	}
	root := n.root.materialize()
	m := &Names{ends: make([]int, 0, n.Len()), count: n.count, indexFrom: n.indexFrom, rareFrom: root.rareFrom}
	var b strings.Builder
	b.Grow(len(root.blob))
	walkRuns(root.Len(), n.gone, n.at, 0, func(i, j int) bool {
		start := 0
		if i > 0 {
			start = root.ends[i-1]
		}
		shift := b.Len() - start
		b.WriteString(root.blob[start:root.ends[j-1]])
		for _, e := range root.ends[i:j] {
			m.ends = append(m.ends, e+shift)
		}
		return true
	}, func(x int) bool {
		b.WriteString(n.fresh[x])
		m.ends = append(m.ends, b.Len())
		return true
	})
	m.blob = b.String()
	return m
}

// folded is the column of a new root made from n's order (a fold): n
// materialized. When n's root has a suffix array (it was searched enough
// to get one), so will the copy: its build starts now, and until it is
// there the copy is searched through n (Names.via).
func (n *Names) folded() *Names {
	m := n.materialize()
	if m == n || n.root.sa.Load() == nil || len(m.blob) < m.indexFrom {
		return m
	}
	m.via.Store(n)
	m.searches.Store(1) // searched before: the next search tries again if this build cannot start
	m.startBuild()
	return m
}
