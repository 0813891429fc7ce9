package store

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/go-memdb"
)

// The list order of a large named table after a few writes is not walked
// again from the table's name index: at a million identities that walk took
// 0.25 s, and building the name column 0.17 s more, for the first list after
// every write (sorted.go). The store keeps, per named table, the ids and old
// names of the records the last commits changed (deltaLog). A generation's
// order is then kept as a root order (one that holds its slice) and the
// changes since it (delta): the root's records that left, the records that
// came and where they go. The next generation extends the last delta by the
// changes since it (extend), or starts from the root again (derive), or,
// when the log no longer reaches the root, from a copy of the newest order
// as a new root. Everything here is node-local and derived: nothing of it is
// replicated or written to a snapshot.

const (
	// deltaFrom is the smallest table whose order is made from a delta:
	// below it the walk costs a few milliseconds at most.
	deltaFrom = 4096
	// deltaLogMost is the most changed records a table's log keeps; older
	// generations are then ordered by a walk again.
	deltaLogMost = 1 << 16
	// deltaShare: a delta holds at most 1/deltaShare of its root's records.
	// Past that a new root is made (an O(n) copy, 5 ms at a million): the
	// root keeps the versions of the records it holds alive, so a large
	// share would pin many old versions (about 50 MB at a million).
	deltaShare = 32
	// deltaNestFrom: a delta over the root with this many entries or more
	// is not copied for the next generation; the next ones are deltas over
	// it, of at most deltaTopMost entries (sortedFromDelta).
	deltaNestFrom = 256
	deltaTopMost  = 1024
)

// txDelta is what one write transaction changed in a named table, in the
// order written: each record's id, and its name before the write (had
// false when it did not exist). A record written twice comes twice; the
// commit keeps its first (logDeltas). over marks a transaction that keeps
// nothing: one of a small table, or one that changed more than a log keeps
// (a rebuild of the derived tables, a bulk import).
type txDelta struct {
	kind     *Kind
	ids      []string
	oldNames []string
	had      []bool
	over     bool
}

// noteDelta records a change of a record of k for the table's delta log.
// It runs for every write, so it only appends.
func (tx *Tx) noteDelta(k *Kind, old, upd Record) {
	if !k.Named || !tx.write {
		return
	}
	var d *txDelta
	for _, x := range tx.delta {
		if x.kind == k {
			d = x
			break
		}
	}
	if d == nil {
		d = &txDelta{kind: k}
		if tx.Count(k) < deltaFrom/2 {
			d.over = true // a small table: its order is walked, the log is not read
		} else {
			d.ids, d.oldNames, d.had = make([]string, 0, 16), make([]string, 0, 16), make([]bool, 0, 16)
		}
		tx.delta = append(tx.delta, d)
	}
	if d.over {
		return
	}
	if len(d.ids) == deltaLogMost {
		*d = txDelta{kind: k, over: true}
		return
	}
	r, name := upd, ""
	if old != nil {
		r, name = old, old.RecordName()
	}
	d.ids = append(d.ids, r.GetID())
	d.oldNames = append(d.oldNames, name)
	d.had = append(d.had, old != nil)
}

// firstOnly keeps the first change of each record.
func (d *txDelta) firstOnly() {
	if len(d.ids) < 2 {
		return
	}
	var seen map[string]struct{} // for a batch of a few records, a look at those kept is cheaper
	if len(d.ids) > 32 {
		seen = make(map[string]struct{}, len(d.ids))
	}
	n := 0
	for i, id := range d.ids {
		if seen != nil {
			if _, dup := seen[id]; dup {
				continue
			}
			seen[id] = struct{}{}
		} else if slices.Contains(d.ids[:n], id) {
			continue
		}
		d.ids[n], d.oldNames[n], d.had[n] = id, d.oldNames[i], d.had[i]
		n++
	}
	d.ids, d.oldNames, d.had = d.ids[:n], d.oldNames[:n], d.had[:n]
}

// deltaLog is the changes of the last commits to one named table: one entry
// per generation of database db, the generations consecutive.
type deltaLog struct {
	mu      sync.Mutex
	db      *memdb.MemDB
	entries []deltaEntry
	size    int // ids in entries
}

// deltaEntry is one commit's changes: the records' ids, and for each the
// name it had before the commit (had false: it did not exist). Names, not
// the old records: the log must not keep old versions alive.
type deltaEntry struct {
	gen      uint64
	ids      []string
	oldNames []string
	had      []bool
}

// logDeltas appends the transaction's changes to the logs, with the
// generations the commit gives the tables. It runs before the commit is
// visible: a view of the new generation finds its entry, and one of an
// older generation reads only the entries up to its own.
func (tx *Tx) logDeltas() {
	for _, d := range tx.delta {
		n := tx.Count(d.kind)
		if n < deltaFrom {
			d.over = true // a walk is cheap: keep nothing
		} else {
			d.firstOnly()
		}
		// A delta is used for up to deltaShare of the table; more is never read.
		tx.s.deltas[d.kind.Table].add(tx.db, tx.gen(d.kind), d, min(deltaLogMost, n/deltaShare+1))
	}
	tx.delta = nil
}

func (l *deltaLog) add(db *memdb.MemDB, gen uint64, d *txDelta, most int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db != db || d.over || len(d.ids) > most || len(l.entries) > 0 && l.entries[len(l.entries)-1].gen+1 != gen {
		// Another database (a restore), a change too large to keep, or a
		// generation that moved without an entry (a rebuild of the counts):
		// the log starts again from the next generation.
		l.db, l.entries, l.size = db, nil, 0
		if d.over || len(d.ids) > most {
			return
		}
	}
	e := deltaEntry{gen: gen, ids: d.ids, oldNames: d.oldNames, had: d.had}
	l.entries = append(l.entries, e)
	l.size += len(e.ids)
	drop := 0
	for l.size > most {
		l.size -= len(l.entries[drop].ids)
		drop++
	}
	// The oldest leave from the front of the slice, without moving the
	// rest: with slices.Delete every commit moved the log's other entries
	// (some 30,000, 2.4 MB, at a million identities: 11% of the CPU of
	// identity creates). An append that finds no room copies only the
	// kept ones.
	clear(l.entries[:drop]) // no old names kept alive through the array
	l.entries = l.entries[drop:]
}

// since returns the records changed after generation from up to generation
// to of db, each with its name at from (had false when it did not exist),
// in the order first changed; ok is false when the log does not cover them.
func (l *deltaLog) since(db *memdb.MemDB, from, to uint64) (ids, oldNames []string, had []bool, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db != db || len(l.entries) == 0 || l.entries[0].gen > from+1 || l.entries[len(l.entries)-1].gen < to || from >= to {
		return nil, nil, nil, false
	}
	seen := map[string]bool{}
	// The generations are consecutive: the entries after from start at
	// its place, found without reading those before (at a million
	// identities the log holds some 30,000 entries; reading past them was
	// 14% of a list after a write).
	for _, e := range l.entries[from+1-l.entries[0].gen:] {
		if e.gen > to {
			break
		}
		for i, id := range e.ids {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
				oldNames = append(oldNames, e.oldNames[i])
				had = append(had, e.had[i])
			}
		}
	}
	return ids, oldNames, had, true
}

// compareNamed orders two records of a named kind as its name index does
// (the key name, NUL, id, NUL).
func compareNamed(a, b Record) int {
	return compareKeys(a.RecordName(), a.GetID(), b.RecordName(), b.GetID())
}

func compareKeys(an, ai, bn, bi string) int {
	if strings.IndexByte(an, 0) < 0 && strings.IndexByte(bn, 0) < 0 && strings.IndexByte(ai, 0) < 0 && strings.IndexByte(bi, 0) < 0 {
		if c := strings.Compare(an, bn); c != 0 {
			return c
		}
		return strings.Compare(ai, bi)
	}
	return strings.Compare(an+"\x00"+ai+"\x00", bn+"\x00"+bi+"\x00")
}

// sortedFromDelta returns the cache entry of the named kind k at generation
// gen made from an older entry and the log, or nil when there is none to
// start from, the log does not reach back to it, or so much changed that a
// walk costs no more. The entry keeps only the changes (delta); its slice
// and name column are read through its base's.
//
// A delta is copied, with the new changes, for every generation (extend),
// so its cost per write grows with it: at a million identities a delta of
// up to 1/32 of the table, 31,250 entries, made the first page after a write
// 0.9 ms at p50 and 2.7 ms at p99 (BenchmarkListAfterRename), against 0.11
// and 0.5 ms at 100,000. So a delta over the root that has grown past
// deltaNestFrom entries is not copied again: the next generations are kept
// as small deltas over it (a middle entry), of at most deltaTopMost
// entries, until one more would pass that; then the middle entry's delta is
// extended by all the changes since it, once per some hundreds of writes,
// into a new delta over the root. Past the root's share, the order starts
// again from a root: the one the log reaches back to, or else a copy of the
// newest order, so that every generation's name search goes through a
// root's suffix array.
func (tx *Tx) sortedFromDelta(k *Kind, gen uint64) *sortedRecords {
	if !k.Named {
		return nil
	}
	v, ok := tx.s.sorted.Load(k.Table)
	if !ok {
		return nil
	}
	newest := v.(*sortedRecords)
	if newest.db == tx.db && newest.gen == gen {
		// Kept by a reader of this generation since this one looked
		// (current): it is the entry. Made again from the middle entry
		// instead, it would be a larger delta over the root.
		return newest
	}
	if newest.d == nil {
		return tx.derive(k, newest, gen)
	}
	nested, large := newest.d.root.d != nil, newest.d.size() >= deltaNestFrom
	if nested || !large {
		if c := tx.extend(k, newest, newest.d, gen); c != nil {
			return c
		}
	}
	switch {
	case nested: // the middle entry's delta with every change since it
		m := newest.d.root
		if c := tx.extend(k, m, m.d, gen); c != nil {
			return c
		}
	case large: // a delta over newest, or else newest's with the changes
		if c := tx.derive(k, newest, gen); c != nil {
			return c
		}
		if c := tx.extend(k, newest, newest.d, gen); c != nil {
			return c
		}
	}
	root := newest.root()
	if c := tx.derive(k, root, gen); c != nil {
		return c
	}
	if newest.db != tx.db || newest.gen >= gen {
		return nil
	}
	root = &sortedRecords{db: newest.db, gen: newest.gen, recs: newest.d.materialize()}
	if names := newest.readyNames(); names != nil {
		root.setNames(names.folded())
	}
	return tx.derive(k, root, gen)
}

// root is the entry whose slice e's order is read through: e itself when
// it holds its slice.
func (e *sortedRecords) root() *sortedRecords {
	for e.d != nil {
		e = e.d.root
	}
	return e
}

// derive makes the entry of generation gen from base (a root, or a delta
// over one) and the log: base's order with no changes, extended.
func (tx *Tx) derive(k *Kind, base *sortedRecords, gen uint64) *sortedRecords {
	if base.d != nil && base.d.root.d != nil || base.len() < deltaFrom {
		return nil
	}
	return tx.extend(k, base, &delta{root: base}, gen)
}

// extend makes the entry of generation gen from d0, the order of entry e
// (e's delta, or an empty one over e), and the log since e's generation:
// over the same base, d0's changes and the new ones. It costs the changes
// since e and a copy of d0, not all the changes since the base again (a
// page of the list after every write at 100,000 identities went from 0.2 to
// 1.5 ms as they piled up).
func (tx *Tx) extend(k *Kind, e *sortedRecords, d0 *delta, gen uint64) *sortedRecords {
	base := d0.root
	if e.db != tx.db || e.gen >= gen {
		return nil
	}
	ids, oldNames, had, ok := tx.s.deltas[k.Table].since(tx.db, e.gen, gen)
	// A change can add two entries to the delta (a rename: its old place
	// gone, its new one fresh), so the bound counts two per change. A bound
	// of one let a delta from the root pass where extending the newest one
	// had not, and every list then made the delta again from the root, with
	// all the changes since (thousands, milliseconds, after 1,600 renames at
	// 100,000 identities).
	most := deltaTopMost // over a middle entry
	if base.d == nil {
		most = len(base.recs) / deltaShare
	}
	if !ok || d0.size()+2*len(ids) > most {
		return nil
	}
	// The versions at e's generation leave: from d0's fresh records, or
	// from the base's (then they join gone). Each must be where d0 says.
	dropped := map[int]bool{}
	var gone []int
	for x, id := range ids {
		if !had[x] {
			continue
		}
		if f := find(d0.fresh, oldNames[x], id); f >= 0 {
			dropped[f] = true
			continue
		}
		r := base.find(oldNames[x], id)
		if r < 0 {
			return nil // not the order this log was kept for: start again
		}
		if _, in := slices.BinarySearch(d0.gone, r); in {
			return nil
		}
		gone = append(gone, r)
	}
	var added []Record
	for _, id := range ids {
		if r, err := tx.Get(k, id); err == nil {
			added = append(added, r)
		}
	}
	slices.SortFunc(added, compareNamed)
	d := &delta{root: base, gone: make([]int, 0, len(d0.gone)+len(gone))}
	slices.Sort(gone)
	// Merge the sorted lists: gone with the new gone, the kept fresh
	// records with the added ones (each with its place in the base).
	for i, j := 0, 0; i < len(d0.gone) || j < len(gone); {
		if j == len(gone) || i < len(d0.gone) && d0.gone[i] < gone[j] {
			d.gone = append(d.gone, d0.gone[i])
			i++
		} else {
			d.gone = append(d.gone, gone[j])
			j++
		}
	}
	n := len(d0.fresh) - len(dropped) + len(added)
	d.fresh, d.at = make([]Record, 0, n), make([]int, 0, n)
	for x, j := 0, 0; x < len(d0.fresh) || j < len(added); {
		if x < len(d0.fresh) && dropped[x] {
			x++
			continue
		}
		if j == len(added) || x < len(d0.fresh) && compareNamed(d0.fresh[x], added[j]) < 0 {
			d.fresh, d.at = append(d.fresh, d0.fresh[x]), append(d.at, d0.at[x])
			x++
		} else {
			d.fresh, d.at = append(d.fresh, added[j]), append(d.at, base.place(added[j]))
			j++
		}
	}
	return &sortedRecords{db: tx.db, gen: gen, d: d}
}

// find returns the index of the record named name with id in recs (in list
// order), or -1.
func find(recs []Record, name, id string) int {
	return findAt(len(recs), func(i int) Record { return recs[i] }, name, id)
}

// find is find over the entry's order.
func (c *sortedRecords) find(name, id string) int {
	if c.d == nil {
		return find(c.recs, name, id)
	}
	return findAt(c.len(), c.at, name, id)
}

func findAt(n int, at func(int) Record, name, id string) int {
	i := sort.Search(n, func(y int) bool { r := at(y); return compareKeys(r.RecordName(), r.GetID(), name, id) >= 0 })
	if i < n {
		if r := at(i); r.GetID() == id && r.RecordName() == name {
			return i
		}
	}
	return -1
}

// place returns the index of the record of the entry's order before which
// r goes.
func (c *sortedRecords) place(r Record) int {
	return sort.Search(c.len(), func(y int) bool { return compareNamed(c.at(y), r) >= 0 })
}

// delta is a generation's order as its base's and the changes since: the
// indices of the base's records it does not have (gone, ascending), its
// records the base does not have (fresh, in order), and at[x], the index
// of the base's record fresh[x] comes before (the base's length for the
// end). A fresh record may replace a gone one with the same key. The base
// (root) is an entry that holds its slice, or a delta over one (a middle
// entry, see sortedFromDelta); never deeper.
type delta struct {
	root     *sortedRecords
	gone, at []int
	fresh    []Record
}

func (d *delta) len() int { return d.root.len() - len(d.gone) + len(d.fresh) }

// size is the number of changes the delta holds.
func (d *delta) size() int { return len(d.gone) + len(d.fresh) }

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

func (d *delta) each(fn func(Record) bool) {
	d.eachFrom(0, fn)
}

// eachFrom is each from record from of the order on.
func (d *delta) eachFrom(from int, fn func(Record) bool) {
	walkRuns(d.root.len(), d.gone, d.at, from, func(i, j int) bool { return d.root.eachIn(i, j, fn) },
		func(x int) bool { return fn(d.fresh[x]) })
}

// eachIn calls fn with records i..j-1 of the entry's order until it
// returns false; it reports whether fn never did.
func (c *sortedRecords) eachIn(i, j int, fn func(Record) bool) bool {
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
	c.d.eachFrom(i, func(r Record) bool {
		done = fn(r)
		left--
		return done && left > 0
	})
	return done
}

func (d *delta) materialize() []Record {
	recs := make([]Record, 0, d.len())
	d.each(func(r Record) bool { recs = append(recs, r); return true })
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

func (d *delta) record(i int) Record {
	x, r, fresh := locate(d.gone, d.at, i)
	if fresh {
		return d.fresh[x]
	}
	return d.root.at(r)
}

// names is the name column of the order, read through the root's column.
func (d *delta) names() *Names {
	root := d.root.columnNames()
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
