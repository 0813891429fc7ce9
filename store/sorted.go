package store

import "github.com/hashicorp/go-memdb"

// sortedRecords is a table's records in list order at one generation of one
// database. Lists that must look at every record (a filter, a sort) scan
// this slice instead of walking the radix tree, which is several times slower
// per record; it is rebuilt only after the table changed.
type sortedRecords struct {
	db   *memdb.MemDB
	gen  uint64
	recs []Record
}

// Sorted returns every record of k in list order (name then id for named
// kinds, creation time then id for the others). The slice is shared: callers
// must not modify it.
func (tx *Tx) Sorted(k *Kind) []Record {
	gen := tx.gen(k)
	if v, ok := tx.s.sorted.Load(k.Table); ok {
		if c := v.(*sortedRecords); c.db == tx.db && c.gen == gen {
			return c.recs
		}
	}
	index := "created"
	if k.Named {
		index = "name"
	}
	recs := make([]Record, 0, tx.Count(k))
	tx.Each(k, index, func(r Record) bool { recs = append(recs, r); return true })
	c := &sortedRecords{db: tx.db, gen: gen, recs: recs}
	// Keep the newest generation: an old view rebuilding must not evict a newer cache.
	for {
		v, loaded := tx.s.sorted.LoadOrStore(k.Table, c)
		if !loaded {
			break
		}
		old := v.(*sortedRecords)
		if old.db == tx.db && old.gen >= gen {
			break
		}
		if tx.s.sorted.CompareAndSwap(k.Table, old, c) {
			break
		}
	}
	return recs
}
