package store

import "edgectl/store/internal/order"

// The list orders of the tables (sorted caches) and their name columns are
// made by package store/internal/order (its DESIGN.md says what they keep
// and what guards them); this file is how the store keeps them: one per
// table, the newest generation's, in Store.sorted, and one per kind per
// read view (Tx.sortedMemo); and how a write transaction tells the order
// of a large named table what it changed (noteDelta, logDeltas).

// sortedRecords is a table's records in list order at one generation of one
// database (order.List). Lists that must look at every record (a filter, a
// sort) scan this order instead of walking the radix tree, which is
// several times slower per record; a new one is made only after the table
// changed (for a large named table, from the last one and the changes:
// order.Next).
type sortedRecords = order.List[Record]

// Names is the names of a named kind's records in list order, packed into
// one string, with a search for the names that contain a substring
// (order.Names: EachContaining, Len, At).
type Names = order.Names

// Lookup returns the record of k with this id as this view sees it, from a
// map kept per generation of the table. It is for hot paths that look up
// many records of a small table that seldom changes (the edge routers a
// session names): a map read allocates nothing, where a lookup in the
// database allocates its iterator state. The map of the whole table is built
// after each change of it, so large tables that change often should use Get.
func (tx *Tx) Lookup(k *Kind, id string) (Record, bool) {
	return tx.sorted(k).Lookup(id)
}

// Sorted returns every record of k in list order (name then id for named
// kinds, creation time then id for the others). The slice is shared: callers
// must not modify it.
func (tx *Tx) Sorted(k *Kind) []Record {
	return tx.sorted(k).Slice()
}

// Ordered is a table's records in list order at one generation, read one
// at a time (an order kept as a root's and the changes since is not made
// into a slice for it).
type Ordered struct{ c *sortedRecords }

// Len is the number of records.
func (o Ordered) Len() int { return o.c.Len() }

// At is record i.
func (o Ordered) At(i int) Record { return o.c.At(i) }

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
	return Ordered{c}, c.Names()
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
		c.Each(fn)
		return
	}
	gen := tx.gen(k)
	if c := tx.current(k, gen); c != nil {
		tx.memoSorted(k, c)
		c.Each(fn)
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
		tx.memoSorted(k, tx.keepSorted(k, order.New[Record](tx.db, gen, recs)))
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
		if c := v.(*sortedRecords); c.DB() == tx.db && c.Gen() == gen {
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
	return tx.keepSorted(k, order.New[Record](tx.db, gen, recs))
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
		if old.DB() == tx.db && old.Gen() >= c.Gen() {
			break
		}
		if tx.s.sorted.CompareAndSwap(k.Table, old, c) {
			break
		}
	}
	return c
}

// sortedFromDelta returns the cache entry of the named kind k at generation
// gen made from the newest one kept and the table's log (order.Next), or
// nil.
func (tx *Tx) sortedFromDelta(k *Kind, gen uint64) *sortedRecords {
	if !k.Named {
		return nil
	}
	v, ok := tx.s.sorted.Load(k.Table)
	if !ok {
		return nil
	}
	return order.Next(v.(*sortedRecords), tx.db, gen, tx.s.deltas[k.Table], func(id string) (Record, bool) {
		r, err := tx.Get(k, id)
		return r, err == nil
	})
}

// txDelta is what one write transaction changed in a named table, for the
// table's log (order.Batch).
type txDelta struct {
	kind *Kind
	b    order.Batch
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
		d = &txDelta{kind: k, b: order.NewBatch(tx.Count(k))}
		tx.delta = append(tx.delta, d)
	}
	if d.b.Over() {
		return
	}
	r, name := upd, ""
	if old != nil {
		r, name = old, old.RecordName()
	}
	d.b.Note(r.GetID(), name, old != nil)
}

// logDeltas appends the transaction's changes to the logs, with the
// generations the commit gives the tables. It runs before the commit is
// visible: a view of the new generation finds its entry, and one of an
// older generation reads only the entries up to its own.
func (tx *Tx) logDeltas() {
	for _, d := range tx.delta {
		n := tx.Count(d.kind)
		tx.s.deltas[d.kind.Table].Commit(tx.db, tx.gen(d.kind), &d.b, n)
	}
	tx.delta = nil
}
