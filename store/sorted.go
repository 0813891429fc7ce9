package store

import (
	"index/suffixarray"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-memdb"
)

// sortedRecords is a table's records in list order at one generation of one
// database. Lists that must look at every record (a filter, a sort) scan
// this slice instead of walking the radix tree, which is several times slower
// per record; it is rebuilt only after the table changed.
type sortedRecords struct {
	db   *memdb.MemDB
	gen  uint64
	recs []Record

	// names is the column of names of a named kind, built on first use
	// (or with the records, from an older column: sorteddelta.go).
	namesOnce  sync.Once
	names      *Names
	namesReady atomic.Bool
	// root is the entry this one was made from with its name column, when
	// that one was not made from another (sorteddelta.go).
	root *sortedRecords

	// byID maps ids to the records, built on first use.
	byIDOnce sync.Once
	byID     map[string]Record
}

// Lookup returns the record of k with this id as this view sees it, from a
// map kept per generation of the table. It is for hot paths that look up
// many records of a small table that seldom changes (the edge routers a
// session names): a map read allocates nothing, where a lookup in the
// database allocates its iterator state. The map of the whole table is built
// after each change of it, so large tables that change often should use Get.
func (tx *Tx) Lookup(k *Kind, id string) (Record, bool) {
	c := tx.sorted(k)
	c.byIDOnce.Do(func() {
		c.byID = make(map[string]Record, len(c.recs))
		for _, r := range c.recs {
			c.byID[r.GetID()] = r
		}
	})
	r, ok := c.byID[id]
	return r, ok
}

// Names is the names of a named kind's records in list order, packed into
// one string. A filter on the name reads this column sequentially (a few
// hundred kilobytes for 10,000 records) instead of loading every record and
// then its name from wherever the heap put them: on a server whose caches
// other work keeps evicting, those two loads per record were most of the cost
// of a filtered list.
//
// A large column also gets a suffix array (index/suffixarray), built in the
// background once the column is searched a second time, so that a substring
// many names share in their bytes but few contain whole is found by a binary
// search instead of a read of the column. See suffixes.
type Names struct {
	blob  string
	ends  []int      // ends[i] is the end of name i in blob; it starts at ends[i-1] (0 for the first)
	count [256]int32 // occurrences of each byte in blob, to search for a substring by its rarest byte

	indexFrom int // the smallest column (bytes of blob) that gets a suffix array
	searches  atomic.Int32
	building  atomic.Bool
	sa        atomic.Pointer[suffixarray.Index]

	// A column made from an older one and the records changed since
	// (sorteddelta.go) searches through the older one's suffix array:
	// root is that column, gone the indices of its names this one does not
	// have (ascending), and at[j] the index of root before which this
	// one's j-th new name comes (non-decreasing). root is nil otherwise.
	root     *Names
	gone, at []int
}

// indexNamesFrom is Names.indexFrom: below a megabyte of names (about
// 100,000 names) a read of the column takes under a millisecond.
const indexNamesFrom = 1 << 20

// indexBuilds lets one suffix array be built at a time in the process, so
// that searches at many generations cannot take more than one core.
var indexBuilds = make(chan struct{}, 1)

// Len is the number of names.
func (n *Names) Len() int { return len(n.ends) }

// At is the name of record i of the slice the column was returned with.
func (n *Names) At(i int) string {
	start := 0
	if i > 0 {
		start = n.ends[i-1]
	}
	return n.blob[start:n.ends[i]]
}

// EachContaining calls fn, in list order, with the index of every name that
// contains sub, until fn returns false. When the column has its suffix
// array (see suffixes) and sub is in few names, it reads them from the array.
// Otherwise, when some byte of sub is rare in the
// column, it jumps between that byte's occurrences with IndexByte
// (vectorized) and compares sub only there, so a substring that few names
// contain costs a fraction of reading every name, and a byte no name has
// costs nothing. When every byte of sub is common (a prefix that all names
// share, say), it runs the vectorized substring search over the column
// instead, which reads it once. Either way a match is mapped to its name
// from the previous one onwards, not searched for in the whole column.
func (n *Names) EachContaining(sub string, fn func(i int) bool) {
	if sub == "" {
		for i := range n.ends {
			if !fn(i) {
				return
			}
		}
		return
	}
	k := 0 // the rarest byte of sub is sub[k]
	for j := 1; j < len(sub); j++ {
		if n.count[sub[j]] < n.count[sub[k]] {
			k = j
		}
	}
	if n.count[sub[k]] == 0 {
		return
	}
	if found, ok := n.indexed(sub); ok {
		for _, i := range found {
			if !fn(i) {
				return
			}
		}
		return
	}
	// next returns where the first occurrence of sub at or after pos starts
	// (it may run across names), or -1.
	next := func(pos int) int {
		if j := strings.Index(n.blob[pos:], sub); j >= 0 {
			return pos + j
		}
		return -1
	}
	if c := sub[k]; int(n.count[c])*16 < len(n.blob) {
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

// indexed returns, in list order, the names that contain sub from a suffix
// array: this column's, or that of the column it was made from. ok is false
// when there is none yet (the searches count toward building one) or sub is
// in too many names for it to help.
func (n *Names) indexed(sub string) (found []int, ok bool) {
	if sa := n.sa.Load(); sa != nil {
		return n.lookup(sa, sub)
	}
	if n.root == nil {
		if sa := n.suffixes(); sa != nil {
			return n.lookup(sa, sub)
		}
		return nil, false
	}
	// Count the search toward the root's array, not this column's: under
	// writes each generation's column is searched once or twice, while the
	// root serves every generation the delta log reaches.
	sa := n.root.suffixes()
	if sa == nil {
		return nil, false
	}
	inRoot, ok := n.root.lookup(sa, sub)
	if !ok {
		return nil, false
	}
	found = make([]int, 0, len(inRoot))
	for _, i := range inRoot {
		g, dropped := slices.BinarySearch(n.gone, i) // g: names of root before i that are gone
		if dropped {
			continue
		}
		found = append(found, i-g+sort.SearchInts(n.at, i+1)) // new names at or before i come first
	}
	for j, a := range n.at {
		g, _ := slices.BinarySearch(n.gone, a)
		if i := a - g + j; strings.Contains(n.At(i), sub) {
			found = append(found, i)
		}
	}
	slices.Sort(found)
	return found, true
}

// suffixes returns the column's suffix array when it is built. Otherwise,
// from the second search of a large column on, it starts building one in
// the background (unless another is being built) and returns nil: the
// search reads the column meanwhile. The second search, not the first,
// because a table that changes between every search would have each build
// wasted: a build costs as much as some twenty reads of the column (0.19 s
// for a million names, BenchmarkNames_MillionNames), and the array serves
// only the generation of the table it was built for.
func (n *Names) suffixes() *suffixarray.Index {
	if sa := n.sa.Load(); sa != nil {
		return sa
	}
	if len(n.blob) < n.indexFrom || n.searches.Add(1) < 2 || !n.building.CompareAndSwap(false, true) {
		return nil
	}
	select {
	case indexBuilds <- struct{}{}:
	default:
		n.building.Store(false) // a later search tries again
		return nil
	}
	go func() {
		defer func() { <-indexBuilds }()
		n.sa.Store(suffixarray.New([]byte(n.blob)))
	}()
	return nil
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

func newNames(recs []Record) *Names {
	size := 0
	for _, r := range recs {
		size += len(r.RecordName())
	}
	var b strings.Builder
	b.Grow(size)
	n := &Names{ends: make([]int, len(recs)), indexFrom: indexNamesFrom}
	for i, r := range recs {
		name := r.RecordName()
		b.WriteString(name)
		n.ends[i] = b.Len()
		for j := 0; j < len(name); j++ {
			n.count[name[j]]++
		}
	}
	n.blob = b.String()
	return n
}

// Sorted returns every record of k in list order (name then id for named
// kinds, creation time then id for the others). The slice is shared: callers
// must not modify it.
func (tx *Tx) Sorted(k *Kind) []Record {
	return tx.sorted(k).recs
}

// SortedNames returns what Sorted returns and, for a named kind, the column
// of the records' names (RecordName, which is also what the filter field
// "name" reads): names.At(i) is the name of recs[i]. Both come from the same
// generation of the table, so the column is never staler than the records.
// names is nil for a kind without names.
func (tx *Tx) SortedNames(k *Kind) (recs []Record, names *Names) {
	c := tx.sorted(k)
	if !k.Named {
		return c.recs, nil
	}
	c.namesOnce.Do(func() {
		c.names = newNames(c.recs)
		c.namesReady.Store(true)
	})
	return c.recs, c.names
}

// readyNames is the column when it is built, or nil.
func (c *sortedRecords) readyNames() *Names {
	if c.namesReady.Load() {
		return c.names
	}
	return nil
}

// setNames gives an entry not yet shared its column.
func (c *sortedRecords) setNames(n *Names) {
	c.names = n
	c.namesOnce.Do(func() {})
	c.namesReady.Store(true)
}

// sorted returns the cache entry of k at this view's generation, building it
// when the table changed since the last one.
func (tx *Tx) sorted(k *Kind) *sortedRecords {
	if c, ok := tx.sortedMemo[k]; ok {
		return c
	}
	c := tx.sortedAtGen(k)
	tx.memoSorted(k, c)
	return c
}

// EachSorted calls fn with the records of k in list order (those Sorted
// returns) until fn returns false. When this generation's slice is built it
// reads that; otherwise it walks the table's index in that order, so that a
// list that stops after a page does not order a whole table that changed
// since the last list (at a million identities, 0.25 s after every write).
// A walk that reaches the end keeps what it read as the generation's slice.
func (tx *Tx) EachSorted(k *Kind, fn func(Record) bool) {
	if c, ok := tx.sortedMemo[k]; ok {
		eachOf(c.recs, fn)
		return
	}
	gen := tx.gen(k)
	if c := tx.cachedSorted(k, gen); c != nil {
		tx.memoSorted(k, c)
		eachOf(c.recs, fn)
		return
	}
	var recs []Record
	done := true
	tx.Each(k, sortedIndex(k), func(r Record) bool {
		recs = append(recs, r)
		if !fn(r) {
			done = false
		}
		return done
	})
	if done {
		tx.memoSorted(k, tx.keepSorted(k, &sortedRecords{db: tx.db, gen: gen, recs: recs}))
	}
}

func eachOf(recs []Record, fn func(Record) bool) {
	for _, r := range recs {
		if !fn(r) {
			return
		}
	}
}

// sortedIndex is the index of k in list order.
func sortedIndex(k *Kind) string {
	switch {
	case k.Named:
		return "name"
	case k.byID:
		return "id"
	}
	return "created"
}

// memoSorted remembers c as this read view's entry of k.
func (tx *Tx) memoSorted(k *Kind, c *sortedRecords) {
	if tx.write {
		return
	}
	if tx.sortedMemo == nil {
		tx.sortedMemo = map[*Kind]*sortedRecords{}
	}
	tx.sortedMemo[k] = c
}

// cachedSorted returns the cache entry of k at generation gen of this
// view's database, or nil.
func (tx *Tx) cachedSorted(k *Kind, gen uint64) *sortedRecords {
	if v, ok := tx.s.sorted.Load(k.Table); ok {
		if c := v.(*sortedRecords); c.db == tx.db && c.gen == gen {
			return c
		}
	}
	return nil
}

// sortedAtGen returns the cache entry of k at this view's generation.
func (tx *Tx) sortedAtGen(k *Kind) *sortedRecords {
	gen := tx.gen(k)
	if c := tx.cachedSorted(k, gen); c != nil {
		return c
	}
	if c := tx.sortedFromDelta(k, gen); c != nil {
		return tx.keepSorted(k, c)
	}
	recs := make([]Record, 0, tx.Count(k))
	tx.Each(k, sortedIndex(k), func(r Record) bool { recs = append(recs, r); return true })
	return tx.keepSorted(k, &sortedRecords{db: tx.db, gen: gen, recs: recs})
}

// keepSorted makes c the cache entry of its table unless a newer generation
// is there, and returns it. A write transaction's entry is not kept: its
// view is not a committed generation (its generation number is taken again
// by the commit, whatever it writes after this).
func (tx *Tx) keepSorted(k *Kind, c *sortedRecords) *sortedRecords {
	if tx.write {
		return c
	}
	// Keep the newest generation: an old view rebuilding must not evict a newer cache.
	for {
		v, loaded := tx.s.sorted.LoadOrStore(k.Table, c)
		if !loaded {
			break
		}
		old := v.(*sortedRecords)
		if old.db == tx.db && old.gen >= c.gen {
			break
		}
		if tx.s.sorted.CompareAndSwap(k.Table, old, c) {
			break
		}
	}
	return c
}
