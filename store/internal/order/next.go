package order

// Speed-tuned: how a generation's order is made from an older one and the
// log (Next: extend the newest delta, derive from a root, or fold into a
// new root), and the comparison that must order records as the name index.
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'ListAfterRename' -benchtime 2000x ./store/
//	correctness: TestSortedFromDelta_SameAsAWalk, TestSortedFromDelta_StaysWithinItsShare,
//	             TestSortedFromDelta_NewGenerationsCopyLittle, TestCompareNamed_OrdersAsTheNameIndex (./store/)
//
// A change must keep: Next returns the order a walk of the name index at
// gen gives, or nil (never a stale or partial order); a delta stays within
// 1/deltaShare of its root (deltaTopMost over a middle entry); compareNamed
// orders as the index's key name+NUL+id+NUL.

import (
	"slices"
	"sort"
	"strings"
)

// The list order of a large named table after a few writes is not walked
// again from the table's name index: at a million identities that walk took
// 0.25 s, and building the name column 0.17 s more, for the first list after
// every write. The store keeps, per named table, the ids and old names of
// the records the last commits changed (Log). A generation's
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
	// it, of at most deltaTopMost entries (Next).
	deltaNestFrom = 256
	deltaTopMost  = 1024
)

// compareNamed orders two records of a named kind as its name index does
// (the key name, NUL, id, NUL).
func compareNamed[R Record](a, b R) int {
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

// Next returns the order of a named table at generation gen of database
// db made from an older one and the log, or nil when there is none to
// start from, the log does not reach back to it, or so much changed that a
// walk costs no more. newest is the newest order the caller keeps, log the
// table's and get reads a record of generation gen by id. The entry keeps only the changes (delta); its slice
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
func Next[R Record](newest *List[R], db any, gen uint64, log *Log, get func(id string) (R, bool)) *List[R] {
	nx := &next[R]{db: db, get: get}
	if newest.db == nx.db && newest.gen == gen {
		// Kept by a reader of this generation since this one looked
		// (current): it is the entry. Made again from the middle entry
		// instead, it would be a larger delta over the root.
		return newest
	}
	if newest.d == nil {
		return nx.derive(log, newest, gen)
	}
	nested, large := newest.d.root.d != nil, newest.d.size() >= deltaNestFrom
	if nested || !large {
		if c := nx.extend(log, newest, newest.d, gen); c != nil {
			return c
		}
	}
	switch {
	case nested: // the middle entry's delta with every change since it
		m := newest.d.root
		if c := nx.extend(log, m, m.d, gen); c != nil {
			return c
		}
	case large: // a delta over newest, or else newest's with the changes
		if c := nx.derive(log, newest, gen); c != nil {
			return c
		}
		if c := nx.extend(log, newest, newest.d, gen); c != nil {
			return c
		}
	}
	root := newest.root()
	if c := nx.derive(log, root, gen); c != nil {
		return c
	}
	if newest.db != nx.db || newest.gen >= gen {
		return nil
	}
	root = &List[R]{db: newest.db, gen: newest.gen, recs: newest.d.materialize()}
	if names := newest.readyNames(); names != nil {
		root.setNames(names.folded())
	}
	return nx.derive(log, root, gen)
}

// next is one call of Next: the database wanted and how to read a record of
// that generation. The table's log is passed on its own: a Log leaks to the
// heap (its mutex), and it would take get with it, allocating the caller's
// closure on every call.
type next[R Record] struct {
	db  any
	get func(id string) (R, bool)
}

// root is the entry whose slice e's order is read through: e itself when
// it holds its slice.
func (e *List[R]) root() *List[R] {
	for e.d != nil {
		e = e.d.root
	}
	return e
}

// derive makes the entry of generation gen from base (a root, or a delta
// over one) and the log: base's order with no changes, extended.
func (nx *next[R]) derive(log *Log, base *List[R], gen uint64) *List[R] {
	if base.d != nil && base.d.root.d != nil || base.Len() < deltaFrom {
		return nil
	}
	return nx.extend(log, base, &delta[R]{root: base}, gen)
}

// extend makes the entry of generation gen from d0, the order of entry e
// (e's delta, or an empty one over e), and the log since e's generation:
// over the same base, d0's changes and the new ones. It costs the changes
// since e and a copy of d0, not all the changes since the base again (a
// page of the list after every write at 100,000 identities went from 0.2 to
// 1.5 ms as they piled up).
func (nx *next[R]) extend(log *Log, e *List[R], d0 *delta[R], gen uint64) *List[R] {
	base := d0.root
	if e.db != nx.db || e.gen >= gen {
		return nil
	}
	ids, oldNames, had, ok := log.since(nx.db, e.gen, gen)
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
	var added []R
	for _, id := range ids {
		if r, ok := nx.get(id); ok {
			added = append(added, r)
		}
	}
	slices.SortFunc(added, compareNamed[R])
	d := &delta[R]{root: base, gone: make([]int, 0, len(d0.gone)+len(gone))}
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
	d.fresh, d.at = make([]R, 0, n), make([]int, 0, n)
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
	return &List[R]{db: e.db, gen: gen, d: d} // e.db is nx.db (above); nx's fields must not leak (see next)
}

// find returns the index of the record named name with id in recs (in list
// order), or -1.
func find[R Record](recs []R, name, id string) int {
	return findAt(len(recs), func(i int) R { return recs[i] }, name, id)
}

// find is find over the entry's order.
func (c *List[R]) find(name, id string) int {
	if c.d == nil {
		return find(c.recs, name, id)
	}
	return findAt(c.Len(), c.At, name, id)
}

func findAt[R Record](n int, at func(int) R, name, id string) int {
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
func (c *List[R]) place(r R) int {
	return sort.Search(c.Len(), func(y int) bool { return compareNamed(c.At(y), r) >= 0 })
}
