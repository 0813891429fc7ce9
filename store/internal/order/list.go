package order

// Speed-tuned: a table's records in list order at one generation (a root
// that holds its slice, or a root's order and the changes since, delta.go),
// with its name column and id map made on first use.
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'ListAfterRename' -benchtime 2000x ./store/
//	correctness: TestSortedFromDelta_SameAsAWalk, TestSortedFromDelta_ConcurrentReaders (./store/),
//	             TestList_DeltaReadsAsItsSlice (this package)
//
// A change must keep: every way of reading a List (Slice, Len/At, Each,
// Names, Lookup) gives the same records in the same order; a List shared
// between readers is never changed after it is published, except by the
// sync.Once'd builds of its slice, column and map (see DESIGN.md).

import (
	"sync"
	"sync/atomic"
)

// Record is what an order needs of a record: its id and its name (the
// name index's key; "" for kinds without names).
type Record interface {
	GetID() string
	RecordName() string
}

// List is a table's records in list order at one generation of one
// database. Lists that must look at every record (a filter, a sort) scan
// this order instead of walking the radix tree, which is several times
// slower per record; a new one is made only after the table changed (for a
// large named table, from the last one and the changes: Next).
type List[R Record] struct {
	db  any // the database whose generations gen counts, compared by identity
	gen uint64
	// recs is the records in order. An entry kept as a root's order and the
	// changes since (d, delta.go) makes it only when something needs
	// the whole slice (Slice); until then it reads through the root.
	recs      []R
	d         *delta[R]
	recsOnce  sync.Once
	recsReady atomic.Bool

	// names is the column of names of a named kind, built on first use
	// (read through the root's column for an entry kept as a delta, or
	// copied from an older column for a new root: next.go).
	namesOnce  sync.Once
	names      *Names
	namesReady atomic.Bool

	// byID maps ids to the records, built on first use.
	byIDOnce sync.Once
	byID     map[string]R
}

// New is the List of generation gen of database db whose records, in list
// order, are recs. The List keeps recs: the caller must not change it.
func New[R Record](db any, gen uint64, recs []R) *List[R] {
	return &List[R]{db: db, gen: gen, recs: recs}
}

// DB is the database the List was made for.
func (c *List[R]) DB() any { return c.db }

// Gen is the generation of the table the List is the order of.
func (c *List[R]) Gen() uint64 { return c.gen }

// Lookup returns the record with this id, from a map of the whole List
// built the first time.
func (c *List[R]) Lookup(id string) (R, bool) {
	c.byIDOnce.Do(func() {
		recs := c.Slice()
		c.byID = make(map[string]R, len(recs))
		for _, r := range recs {
			c.byID[r.GetID()] = r
		}
	})
	r, ok := c.byID[id]
	return r, ok
}

// Slice is the records in order, made from the root and the changes the
// first time it is needed. It is shared: callers must not modify it.
func (c *List[R]) Slice() []R {
	if c.d == nil {
		return c.recs
	}
	c.recsOnce.Do(func() {
		c.recs = c.d.materialize()
		c.recsReady.Store(true)
	})
	return c.recs
}

// Len is the number of records.
func (c *List[R]) Len() int {
	if c.d == nil {
		return len(c.recs)
	}
	return c.d.len()
}

// At is record i.
func (c *List[R]) At(i int) R {
	if c.d == nil || c.recsReady.Load() {
		return c.recs[i]
	}
	return c.d.record(i)
}

// Each calls fn with the records in order until it returns false.
func (c *List[R]) Each(fn func(R) bool) {
	if c.d == nil || c.recsReady.Load() {
		for _, r := range c.recs {
			if !fn(r) {
				return
			}
		}
		return
	}
	c.d.each(fn)
}

// Names is the List's name column, built the first time.
func (c *List[R]) Names() *Names {
	c.namesOnce.Do(func() {
		if c.d != nil {
			c.names = c.d.names()
		} else {
			c.names = NewNames(c.recs)
		}
		c.namesReady.Store(true)
	})
	return c.names
}

// readyNames is the column when it is built, or nil.
func (c *List[R]) readyNames() *Names {
	if c.namesReady.Load() {
		return c.names
	}
	return nil
}

// setNames gives an entry not yet shared its column.
func (c *List[R]) setNames(n *Names) {
	c.names = n
	c.namesOnce.Do(func() {})
	c.namesReady.Store(true)
}
