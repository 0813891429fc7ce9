package store

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/go-memdb"
)

// The list order of a large named table after a few writes is made from the
// order of an earlier generation and the records written since, instead of
// walking the table's name index again: at a million identities the walk
// took 0.25 s and building the name column 0.17 s more, for the first
// filtered list after every write (sorted.go). The store keeps, per named
// table, the records that the last commits changed (deltaLog); a view whose
// generation has no list order yet takes the newest one kept, removes the
// records changed since, and puts their current versions in their places.
// Everything here is node-local and derived: nothing of it is replicated or
// written to a snapshot.

const (
	// deltaFrom is the smallest table whose order is made from a delta:
	// below it the walk costs a few milliseconds at most.
	deltaFrom = 4096
	// deltaLogMost is the most changed records a table's log keeps; older
	// generations are then ordered by a walk again.
	deltaLogMost = 1 << 16
)

// txDelta is what one write transaction changed in a named table: for each
// record written, the record as it was before the transaction (nil when it
// did not exist). over marks a transaction that changed more than a log
// keeps (a restore, a rebuild); it keeps no records.
type txDelta struct {
	old  map[string]Record
	ids  []string // the keys of old in the order first written
	over bool
}

// noteDelta records a change of a record of k for the table's delta log.
func (tx *Tx) noteDelta(k *Kind, old, upd Record) {
	if !k.Named || !tx.write {
		return
	}
	if tx.delta == nil {
		tx.delta = map[*Kind]*txDelta{}
	}
	d := tx.delta[k]
	if d == nil {
		d = &txDelta{old: map[string]Record{}}
		tx.delta[k] = d
	}
	if d.over {
		return
	}
	r := upd
	if r == nil {
		r = old
	}
	id := r.GetID()
	if _, seen := d.old[id]; seen {
		return // the record before the transaction is the one first seen
	}
	if len(d.ids) == deltaLogMost {
		*d = txDelta{over: true}
		return
	}
	d.old[id] = old
	d.ids = append(d.ids, id)
}

// deltaLog is the changes of the last commits to one named table, for
// generations gens[0] to gens[len-1] (consecutive) of database db.
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
	for k, d := range tx.delta { // each table has its own log: the order does not matter
		n := tx.Count(k)
		if n < deltaFrom {
			d = &txDelta{over: true} // a walk is cheap: keep nothing
		}
		// A delta is used for up to an eighth of the table; more is never read.
		tx.s.deltas[k.Table].add(tx.db, tx.gen(k), d, min(deltaLogMost, n/8+1))
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
	e := deltaEntry{gen: gen, ids: d.ids, oldNames: make([]string, len(d.ids)), had: make([]bool, len(d.ids))}
	for i, id := range d.ids {
		if old := d.old[id]; old != nil {
			e.oldNames[i], e.had[i] = old.RecordName(), true
		}
	}
	l.entries = append(l.entries, e)
	l.size += len(e.ids)
	drop := 0
	for l.size > most {
		l.size -= len(l.entries[drop].ids)
		drop++
	}
	l.entries = slices.Delete(l.entries, 0, drop)
}

// since returns the records changed after generation from up to generation
// to of db, each with its name at from (had false when it did not exist),
// in the order first changed; ok is false when the log does not cover them.
func (l *deltaLog) since(db *memdb.MemDB, from, to uint64) (ids, oldNames []string, had []bool, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db != db || len(l.entries) == 0 || l.entries[0].gen > from+1 || l.entries[len(l.entries)-1].gen < to {
		return nil, nil, nil, false
	}
	seen := map[string]bool{}
	for _, e := range l.entries {
		if e.gen <= from {
			continue
		}
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
// gen made from the newest kept entry and the changes since, or nil when
// there is none to start from, the log does not reach back to it, or so
// much changed that a walk costs no more.
//
// It starts from the root of the newest kept entry (the entry that one was
// made from) when the log reaches back to it, so that every generation's
// name column searches through the root's suffix array (Names.indexed);
// otherwise from the newest entry, and the new entry is a root itself.
func (tx *Tx) sortedFromDelta(k *Kind, gen uint64) *sortedRecords {
	if !k.Named {
		return nil
	}
	v, ok := tx.s.sorted.Load(k.Table)
	if !ok {
		return nil
	}
	newest := v.(*sortedRecords)
	if newest.root != nil {
		if c := tx.derive(k, newest.root, gen); c != nil {
			return c
		}
	}
	return tx.derive(k, newest, gen)
}

// derive makes the entry of generation gen from base and the log.
func (tx *Tx) derive(k *Kind, base *sortedRecords, gen uint64) *sortedRecords {
	if base.db != tx.db || base.gen >= gen || len(base.recs) < deltaFrom {
		return nil
	}
	ids, oldNames, had, ok := tx.s.deltas[k.Table].since(tx.db, base.gen, gen)
	if !ok || len(ids) > len(base.recs)/8 {
		return nil
	}
	// Where the old versions are in the base order; each must be there.
	var gone []int
	for x, id := range ids {
		if !had[x] {
			continue
		}
		name := oldNames[x]
		i := sort.Search(len(base.recs), func(y int) bool {
			r := base.recs[y]
			return compareKeys(r.RecordName(), r.GetID(), name, id) >= 0
		})
		if i == len(base.recs) || base.recs[i].GetID() != id || base.recs[i].RecordName() != name {
			return nil // not the base this log was kept for: walk instead
		}
		gone = append(gone, i)
	}
	slices.Sort(gone)
	// The current versions, in order, and where each goes in the base.
	var fresh []Record
	for _, id := range ids {
		if r, err := tx.Get(k, id); err == nil {
			fresh = append(fresh, r)
		}
	}
	slices.SortFunc(fresh, compareNamed)
	at := make([]int, len(fresh))
	for j, r := range fresh {
		at[j] = sort.Search(len(base.recs), func(x int) bool { return compareNamed(base.recs[x], r) >= 0 })
	}

	c := &sortedRecords{db: tx.db, gen: gen, recs: make([]Record, 0, len(base.recs)-len(gone)+len(fresh))}
	names := base.readyNames()
	var nb *namesBuilder
	if names != nil {
		nb = newNamesBuilder(names, cap(c.recs))
	}
	for i, g, j := 0, 0, 0; ; {
		next := len(base.recs)
		if g < len(gone) {
			next = min(next, gone[g])
		}
		if j < len(fresh) {
			next = min(next, at[j])
		}
		c.recs = append(c.recs, base.recs[i:next]...) // a run of unchanged records
		if nb != nil {
			nb.copyRun(i, next)
		}
		i = next
		for ; j < len(fresh) && at[j] == i; j++ {
			c.recs = append(c.recs, fresh[j])
			if nb != nil {
				nb.add(fresh[j].RecordName())
			}
		}
		if g < len(gone) && gone[g] == i {
			if nb != nil {
				nb.drop(i)
			}
			g++
			i++
			continue
		}
		if i == len(base.recs) {
			break
		}
	}
	if nb != nil {
		col := nb.done()
		if base.root == nil {
			c.root = base
			col.root, col.gone, col.at = names, gone, at
		}
		c.setNames(col)
	}
	return c
}

// namesBuilder makes the name column of a new order from runs of an older
// column and single new names.
type namesBuilder struct {
	from *Names
	b    strings.Builder
	n    *Names
}

func newNamesBuilder(from *Names, records int) *namesBuilder {
	nb := &namesBuilder{from: from, n: &Names{ends: make([]int, 0, records), count: from.count, indexFrom: from.indexFrom}}
	nb.b.Grow(len(from.blob) + len(from.blob)/records + 64)
	return nb
}

// copyRun copies the names of records i to j-1 of the older column.
func (nb *namesBuilder) copyRun(i, j int) {
	if i >= j {
		return
	}
	start := 0
	if i > 0 {
		start = nb.from.ends[i-1]
	}
	shift := nb.b.Len() - start
	nb.b.WriteString(nb.from.blob[start:nb.from.ends[j-1]])
	for _, e := range nb.from.ends[i:j] {
		nb.n.ends = append(nb.n.ends, e+shift)
	}
}

// add appends a name that is not in the older column.
func (nb *namesBuilder) add(name string) {
	nb.b.WriteString(name)
	nb.n.ends = append(nb.n.ends, nb.b.Len())
	for i := 0; i < len(name); i++ {
		nb.n.count[name[i]]++
	}
}

// drop leaves out name i of the older column.
func (nb *namesBuilder) drop(i int) {
	name := nb.from.At(i)
	for x := 0; x < len(name); x++ {
		nb.n.count[name[x]]--
	}
}

func (nb *namesBuilder) done() *Names {
	nb.n.blob = nb.b.String()
	return nb.n
}
