package store

import (
	"index/suffixarray"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-memdb"
)

// sortedRecords is a table's records in list order at one generation of one
// database. Lists that must look at every record (a filter, a sort) scan
// this order instead of walking the radix tree, which is several times
// slower per record; a new one is made only after the table changed (for a
// large named table, from the last one and the changes: sorteddelta.go).
type sortedRecords struct {
	db  *memdb.MemDB
	gen uint64
	// recs is the records in order. An entry kept as a root's order and the
	// changes since (d, sorteddelta.go) makes it only when something needs
	// the whole slice (slice); until then it reads through the root.
	recs      []Record
	d         *delta
	recsOnce  sync.Once
	recsReady atomic.Bool

	// names is the column of names of a named kind, built on first use
	// (read through the root's column for an entry kept as a delta, or
	// copied from an older column for a new root: sorteddelta.go).
	namesOnce  sync.Once
	names      *Names
	namesReady atomic.Bool

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
		recs := c.slice()
		c.byID = make(map[string]Record, len(recs))
		for _, r := range recs {
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
	// (sorteddelta.go) has no blob: it reads the root's column, without
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

// Sorted returns every record of k in list order (name then id for named
// kinds, creation time then id for the others). The slice is shared: callers
// must not modify it.
func (tx *Tx) Sorted(k *Kind) []Record {
	return tx.sorted(k).slice()
}

// Ordered is a table's records in list order at one generation, read one
// at a time (an order kept as a root's and the changes since is not made
// into a slice for it).
type Ordered struct{ c *sortedRecords }

// Len is the number of records.
func (o Ordered) Len() int { return o.c.len() }

// At is record i.
func (o Ordered) At(i int) Record { return o.c.at(i) }

// slice is the records in order, made from the root and the changes the
// first time it is needed.
func (c *sortedRecords) slice() []Record {
	if c.d == nil {
		return c.recs
	}
	c.recsOnce.Do(func() {
		c.recs = c.d.materialize()
		c.recsReady.Store(true)
	})
	return c.recs
}

func (c *sortedRecords) len() int {
	if c.d == nil {
		return len(c.recs)
	}
	return c.d.len()
}

func (c *sortedRecords) at(i int) Record {
	if c.d == nil || c.recsReady.Load() {
		return c.recs[i]
	}
	return c.d.record(i)
}

func (c *sortedRecords) each(fn func(Record) bool) {
	if c.d == nil || c.recsReady.Load() {
		eachOf(c.recs, fn)
		return
	}
	c.d.each(fn)
}

// SortedNames returns the records Sorted returns and, for a named kind, the
// column of the records' names (RecordName, which is also what the filter
// field "name" reads): names.At(i) is the name of recs.At(i). Both come from
// the same generation of the table, so the column is never staler than the
// records. names is nil for a kind without names.
func (tx *Tx) SortedNames(k *Kind) (recs Ordered, names *Names) {
	c := tx.sorted(k)
	if !k.Named {
		return Ordered{c}, nil
	}
	return Ordered{c}, c.columnNames()
}

// columnNames is the entry's name column, built the first time.
func (c *sortedRecords) columnNames() *Names {
	c.namesOnce.Do(func() {
		if c.d != nil {
			c.names = c.d.names()
		} else {
			c.names = newNames(c.recs)
		}
		c.namesReady.Store(true)
	})
	return c.names
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
		c.each(fn)
		return
	}
	gen := tx.gen(k)
	if c := tx.current(k, gen); c != nil {
		tx.memoSorted(k, c)
		c.each(fn)
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

// current returns the entry of k at generation gen without a walk: the one
// kept, or one made from the last kept one and the changes since (then kept
// in its place), or nil.
func (tx *Tx) current(k *Kind, gen uint64) *sortedRecords {
	if c := tx.cachedSorted(k, gen); c != nil {
		return c
	}
	if c := tx.sortedFromDelta(k, gen); c != nil {
		return tx.keepSorted(k, c)
	}
	return nil
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
	if c := tx.current(k, gen); c != nil {
		return c
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
