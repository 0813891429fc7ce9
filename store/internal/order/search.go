package order

// Speed-tuned: the ways a name search avoids reading the whole column: a
// suffix array (index/suffixarray, built in the background from a large
// column's second search, one build at a time in the process), the offsets
// of the column's rarest bytes, and the search of a column read through
// its root's.
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'Names_MillionNames' -benchtime 20x ./store/internal/order/
//	correctness: TestNames_EachContainingFindsWhatContainsFinds, TestNames_ASearchDuringTheBuildWaitsForTheArray,
//	             TestNames_ALargeColumnSearchedTwiceGetsASuffixArray, TestNames_ARareByteNeedsNoSuffixArray,
//	             TestNames_AByteLeftOutOfTheListingMayUseASuffixArray (this package),
//	             TestSortedFromDelta_SameAsAWalk (./store/: searches through a root)
//
// A change must keep: each way gives what a read of the column gives (the
// same indices, in order, once each); a search never waits for a build it
// did not find running; at most one build runs at a time (indexBuilds).

import (
	"index/suffixarray"
	"math"
	"slices"
	"strings"
)

// fromSuffixes calls fn with the names that contain sub from the column's
// suffix array, and reports whether it did: false when there is no array
// yet (see suffixes) or sub is in too many names for it.
func (n *Names) fromSuffixes(sub string, fn func(i int) bool) bool {
	sa := n.suffixes(true)
	if sa == nil {
		return false
	}
	found, ok := n.lookup(sa, sub)
	if !ok {
		return false
	}
	for _, i := range found {
		if !fn(i) {
			break
		}
	}
	return true
}

// rareOffsets returns, when c is rare in the column (at most once per 64
// names) and the column is large (rareFrom), the offsets of c in its blob:
// a search for a substring with c compares it at those places only. The
// first such search starts listing them in the background (indexRare);
// until they are listed, offsets is nil and rare true: the search jumps
// between the occurrences of c with IndexByte meanwhile, and does not
// count toward a suffix array. A byte the listing left out is not rare
// here (a search for it may use a suffix array).
func (n *Names) rareOffsets(c byte) (offsets []int32, rare bool) {
	if len(n.blob) < n.rareFrom || int(n.count[c]) > max(64, len(n.ends)/64) {
		return nil, false
	}
	if r := n.rare.Load(); r != nil {
		return r[c], r[c] != nil // c may be left out: rarer bytes filled the listing
	}
	if n.rareListing.CompareAndSwap(false, true) {
		go n.indexRare()
	}
	return nil, true
}

// rareBytesFrom is Names.rareFrom: below it, a jump between a byte's
// occurrences with IndexByte reads at most some tens of microseconds.
const rareBytesFrom = 1 << 18

// indexRare lists the offsets of the column's rarest bytes: those under
// 1/16 of the column (where a search jumps between their occurrences),
// rarest first, while all their offsets stay under 1/8 of its bytes (at
// most half its size in memory). At a million names a jump between the
// 2,000 occurrences of a byte read the whole 9 MB column with IndexByte,
// about half a millisecond per search (BenchmarkNames_MillionNames); the
// listing takes one pass over the column (45 ms for 19 MB of names).
func (n *Names) indexRare() {
	if len(n.blob) > math.MaxInt32 {
		return
	}
	var order []int
	for c := range 256 {
		if n.count[c] > 0 && int(n.count[c])*16 < len(n.blob) {
			order = append(order, c)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return int(n.count[a]) - int(n.count[b]) })
	var pick [256]bool
	total := 0
	for _, c := range order {
		if total += int(n.count[c]); total > len(n.blob)/8 {
			break
		}
		pick[c] = true
	}
	r := new([256][]int32)
	for c := range 256 {
		if pick[c] {
			r[c] = make([]int32, 0, n.count[c])
		}
	}
	for i := 0; i < len(n.blob); i++ {
		if c := n.blob[i]; pick[c] {
			r[c] = append(r[c], int32(i))
		}
	}
	n.rare.Store(r)
}

// throughRoot is EachContaining of a column read through its root: the
// root's matches (from its suffix array or a read of its blob; the search
// counts toward the root's array, which serves every generation the delta
// log reaches, where each generation's column is searched once or twice
// under writes) mapped to this order, merged with the fresh names that
// contain sub.
func (n *Names) throughRoot(sub string, fn func(i int) bool) {
	if sub != "" {
		for i := 0; i < len(sub); i++ {
			if n.count[sub[i]] == 0 {
				return
			}
		}
	}
	var fresh []int // indices in this order of the fresh names with sub
	if n.freshCol != nil {
		n.freshCol.EachContaining(sub, func(x int) bool { fresh = append(fresh, freshAt(n.gone, n.at, x)); return true })
	} else {
		for x, name := range n.fresh {
			if strings.Contains(name, sub) {
				fresh = append(fresh, freshAt(n.gone, n.at, x))
			}
		}
	}
	g, x, f := 0, 0, 0
	stopped := false
	n.root.EachContaining(sub, func(r int) bool {
		for g < len(n.gone) && n.gone[g] < r {
			g++
		}
		if g < len(n.gone) && n.gone[g] == r {
			return true
		}
		for x < len(n.at) && n.at[x] <= r {
			x++
		}
		i := r - g + x
		for ; f < len(fresh) && fresh[f] < i; f++ {
			if !fn(fresh[f]) {
				stopped = true
				return false
			}
		}
		if !fn(i) {
			stopped = true
			return false
		}
		return true
	})
	for ; !stopped && f < len(fresh); f++ {
		if !fn(fresh[f]) {
			return
		}
	}
}

// suffixes returns the column's suffix array when it is built. Otherwise,
// from the second search of a large column on, it starts building one in
// the background (unless another is being built) and returns nil: that
// search reads the column meanwhile. A search that finds the array being
// built waits for it when wait is set: a build costs as much as some twenty
// reads of the column (0.19 s for a million names,
// BenchmarkNames_MillionNames), so searches that keep coming during it
// would each read the whole column (some 10 ms at a million names, slower
// still beside the build) for longer than the build takes; one that comes
// after it ended reads the array. The second search, not the first, because
// a table that changes between every search would have each build wasted:
// the array serves only the generation of the table it was built for (and,
// through a root, the generations kept over it).
func (n *Names) suffixes(wait bool) *suffixarray.Index {
	if sa := n.sa.Load(); sa != nil {
		return sa
	}
	if len(n.blob) < n.indexFrom || n.searches.Add(1) < 2 {
		return nil
	}
	if done := n.build.Load(); done != nil {
		if !wait {
			return nil
		}
		<-*done
		return n.sa.Load()
	}
	n.startBuild()
	return nil
}

// startBuild starts building the column's suffix array in the background,
// unless it is being built or another column's is (indexBuilds): a later
// search tries again.
func (n *Names) startBuild() {
	if n.build.Load() != nil {
		return
	}
	select {
	case indexBuilds <- struct{}{}:
	default:
		return
	}
	done := make(chan struct{})
	if !n.build.CompareAndSwap(nil, &done) {
		<-indexBuilds
		return
	}
	go func() {
		defer func() { <-indexBuilds }()
		n.sa.Store(suffixarray.New([]byte(n.blob)))
		close(done)
	}()
}

// lookup returns, in list order, the names that contain sub, from the
// suffix array. It declines (ok false) when sub occurs in more than one name
// in 32: mapping each occurrence to its name and sorting them then costs
// more than reading the column.
func (n *Names) lookup(sa *suffixarray.Index, sub string) (found []int, ok bool) {
	most := max(64, len(n.ends)/32)
	at := sa.Lookup([]byte(sub), most+1) // where sub starts in blob, in no order
	if len(at) > most {
		return nil, false
	}
	found = make([]int, 0, len(at))
	for _, pos := range at {
		i, _ := slices.BinarySearch(n.ends, pos+1) // the first name ending after pos
		if pos+len(sub) <= n.ends[i] {             // not running into the next name
			found = append(found, i)
		}
	}
	slices.Sort(found)
	return slices.Compact(found), true // a name with sub twice comes once
}
