package order

// Speed-tuned: the name column of a list order (Names), which a name
// filter reads instead of the records, and its search (EachContaining).
// The suffix array and the listing of rare bytes it may use are in
// search.go; a column read through a root's is in delta.go.
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'Names_MillionNames' -benchtime 20x ./store/internal/order/
//	             go test -run '^$' -bench 'ListAfterRename' -benchtime 2000x ./store/
//	correctness: TestNames_EachContainingFindsWhatContainsFinds (this package: a scan, the
//	             suffix array and the rare-byte offsets against strings.Contains),
//	             TestSortedFromDelta_SameAsAWalk (./store/)
//
// A change must keep: EachContaining reports, in list order and once each,
// exactly the indices i with strings.Contains(At(i), sub), and stops when
// fn returns false; a match never runs across two names of the packed
// column; a column is never changed once shared, but for its atomically
// published suffix array, rare-byte listing and via.

import (
	"index/suffixarray"
	"sort"
	"strings"
	"sync/atomic"
)

// Names is the names of a named kind's records in list order, packed into
// one string. A filter on the name reads this column sequentially (a few
// hundred kilobytes for 10,000 records) instead of loading every record and
// then its name from wherever the heap put them: on a server whose caches
// other work keeps evicting, those two loads per record were most of the cost
// of a filtered list.
//
// A large column also gets a suffix array (index/suffixarray), built in the
// background once the column is searched a second time (searches that come
// during the build wait for it), so that a substring
// many names share in their bytes but few contain whole is found by a binary
// search instead of a read of the column. See suffixes.
type Names struct {
	blob  string
	ends  []int      // ends[i] is the end of name i in blob; it starts at ends[i-1] (0 for the first)
	count [256]int32 // occurrences of each byte in blob, to search for a substring by its rarest byte

	indexFrom int // the smallest column (bytes of blob) that gets a suffix array
	searches  atomic.Int32
	build     atomic.Pointer[chan struct{}] // set when the array's build starts, closed when it is stored
	sa        atomic.Pointer[suffixarray.Index]

	// rare is the offsets in blob of its rarest bytes, listed in the
	// background for a column of at least rareFrom bytes (rareOffsets).
	rareFrom    int
	rare        atomic.Pointer[[256][]int32]
	rareListing atomic.Bool

	// The column of an order kept as a root's and the changes since
	// (delta.go) has no blob: it reads the root's column, without
	// the names at the indices gone, with fresh[x] before the root's name
	// at[x]. root is nil for a column that holds its names.
	root     *Names
	gone, at []int
	fresh    []string
	// freshCol is fresh packed into a column of its own, for a column
	// with many (a delta over the root that the next generations' deltas
	// are kept over, up to 1/32 of the table): a search reads it as one
	// blob, jumping between the occurrences of the substring's rarest
	// byte, instead of testing every fresh name (31,250 of them, about a
	// millisecond, at a million identities). nil for a few fresh names.
	freshCol *Names

	// via is, for a column a fold made from a column read through a root
	// with a suffix array (folded), that column: the same names in
	// the same order, searched through the old root's array and the
	// fresh names until this column's own array, whose build the fold
	// started, is there. Without it, the first searches after a fold of a
	// large table (every 1/32 of its size in writes) read the whole
	// column, some 10 ms each at a million names, for the 0.2-0.4 s the
	// build takes. nil otherwise, and once the array is built.
	via atomic.Pointer[Names]
}

// indexNamesFrom is Names.indexFrom: below a megabyte of names (about
// 100,000 names) a read of the column takes under a millisecond.
const indexNamesFrom = 1 << 20

// indexBuilds lets one suffix array be built at a time in the process, so
// that searches at many generations cannot take more than one core.
var indexBuilds = make(chan struct{}, 1)

// Len is the number of names.
func (n *Names) Len() int {
	if n.root != nil {
		return n.root.Len() - len(n.gone) + len(n.fresh)
	}
	return len(n.ends)
}

// At is the name of record i of the order the column was returned with.
func (n *Names) At(i int) string {
	if n.root != nil {
		x, r, fresh := locate(n.gone, n.at, i)
		if fresh {
			return n.fresh[x]
		}
		return n.root.At(r)
	}
	start := 0
	if i > 0 {
		start = n.ends[i-1]
	}
	return n.blob[start:n.ends[i]]
}

// EachContaining calls fn, in list order, with the index of every name that
// contains sub, until fn returns false. A column kept as a delta searches its
// root's (throughRoot). When the column has its suffix array (see suffixes)
// and sub is in few names, it reads them from the array. Otherwise, when
// some byte of sub is rare in the column, it compares sub only where that
// byte is: at the offsets listed for a large column's rarest bytes
// (indexRare; then without a suffix array), or jumping between its
// occurrences with IndexByte (vectorized), so a substring that few names
// contain costs a fraction of reading every name, and a byte no name has
// costs nothing. When every byte of sub is common (a prefix that all names
// share, say), it runs the vectorized substring search over the column
// instead, which reads it once. Either way a match is mapped to its name
// from the previous one onwards, not searched for in the whole column.
func (n *Names) EachContaining(sub string, fn func(i int) bool) {
	if n.root != nil {
		n.throughRoot(sub, fn)
		return
	}
	if sub == "" {
		for i := range n.ends {
			if !fn(i) {
				return
			}
		}
		return
	}
	if v := n.via.Load(); v != nil {
		if n.suffixes(false) == nil {
			v.EachContaining(sub, fn)
			return
		}
		n.via.Store(nil) // the old root's array can go
	}
	k := 0 // the rarest byte of sub is sub[k]
	for j := 1; j < len(sub); j++ {
		if n.count[sub[j]] < n.count[sub[k]] {
			k = j
		}
	}
	c := sub[k]
	if n.count[c] == 0 {
		return
	}
	// next returns where the first occurrence of sub at or after pos starts
	// (it may run across names), or -1.
	at, rare := n.rareOffsets(c)
	if !rare && n.fromSuffixes(sub, fn) { // a rare byte's few places are not worth an array
		return
	}
	var next func(pos int) int
	switch {
	case at != nil:
		y := 0
		next = func(pos int) int {
			for ; y < len(at); y++ {
				if start := int(at[y]) - k; start >= pos && strings.HasPrefix(n.blob[start:], sub) {
					y++
					return start
				}
			}
			return -1
		}
	case rare || int(n.count[c])*16 < len(n.blob):
		next = func(pos int) int {
			for p := pos + k; p < len(n.blob); {
				j := strings.IndexByte(n.blob[p:], c)
				if j < 0 {
					return -1
				}
				if start := p + j - k; strings.HasPrefix(n.blob[start:], sub) {
					return start
				}
				p += j + 1
			}
			return -1
		}
	default:
		next = func(pos int) int {
			if j := strings.Index(n.blob[pos:], sub); j >= 0 {
				return pos + j
			}
			return -1
		}
	}
	i := 0
	for pos := 0; pos < len(n.blob); {
		start := next(pos)
		if start < 0 {
			return
		}
		i = n.nameAt(start, i)
		if start+len(sub) > n.ends[i] {
			pos = start + 1 // runs into the next name
			continue
		}
		if !fn(i) {
			return
		}
		pos = n.ends[i] // the rest of this name is reported
	}
}

// nameAt returns the index of the name holding byte pos of the column,
// searching from name from (which ends at or after pos's name's start):
// forward in growing steps, then by halves.
func (n *Names) nameAt(pos, from int) int {
	if n.ends[from] > pos {
		return from
	}
	lo, step := from, 1 // n.ends[lo] <= pos
	hi := lo + step
	for hi < len(n.ends) && n.ends[hi] <= pos {
		lo, step = hi, step*2
		hi = lo + step
	}
	hi = min(hi, len(n.ends)-1) // the last name ends at len(blob) > pos
	return lo + 1 + sort.Search(hi-lo, func(x int) bool { return n.ends[lo+1+x] > pos })
}

// NewNames is the column of the names of recs, in their order.
func NewNames[R Record](recs []R) *Names {
	return newNamesOf(len(recs), func(i int) string { return recs[i].RecordName() })
}

// newNamesOf is the column of the names nameOf(0)..nameOf(count-1).
func newNamesOf(count int, nameOf func(i int) string) *Names {
	size := 0
	for i := range count {
		size += len(nameOf(i))
	}
	var b strings.Builder
	b.Grow(size)
	n := &Names{ends: make([]int, count), indexFrom: indexNamesFrom, rareFrom: rareBytesFrom}
	for i := range count {
		name := nameOf(i)
		b.WriteString(name)
		n.ends[i] = b.Len()
		for j := 0; j < len(name); j++ {
			n.count[name[j]]++
		}
	}
	n.blob = b.String()
	return n
}
