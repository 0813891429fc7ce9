package order

// Speed-tuned: the log of the records the last commits changed in a named
// table, which Next reads to make a generation's order from an older one.
// It runs for every write (Batch.Note) and every commit (Log.Commit).
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'PolicyCreateOnLargeModel|ListAfterRename' -benchtime 2000x ./store/
//	correctness: TestSortedFromDelta_SameAsAWalk (./store/), TestLog_SinceIsTheFirstChangeOfEach (this package)
//
// A change must keep: an entry per generation, the generations consecutive
// (anything else starts the log again); since reports each record once,
// with its name at the older generation; the log holds names, never
// records (it must not keep old versions alive).

import (
	"slices"
	"sync"
)

// Batch is what one write transaction changed in a named table, in the
// order written: each record's id, and its name before the write (had
// false when it did not exist). A record written twice comes twice; the
// commit keeps its first (Log.Commit). over marks a transaction that keeps
// nothing: one of a small table, or one that changed more than a log keeps
// (a rebuild of the derived tables, a bulk import).
type Batch struct {
	ids      []string
	oldNames []string
	had      []bool
	over     bool
}

// NewBatch starts the batch of a table of tableSize records: a small table
// keeps nothing (its order is walked, the log is not read).
func NewBatch(tableSize int) Batch {
	if tableSize < deltaFrom/2 {
		return Batch{over: true}
	}
	return Batch{ids: make([]string, 0, 16), oldNames: make([]string, 0, 16), had: make([]bool, 0, 16)}
}

// Over reports whether the batch keeps nothing more: Note need not be
// called.
func (d *Batch) Over() bool { return d.over }

// Note records a change of record id, whose name before it was oldName
// (had false: it did not exist). It only appends.
func (d *Batch) Note(id, oldName string, had bool) {
	if d.over {
		return
	}
	if len(d.ids) == deltaLogMost {
		*d = Batch{over: true}
		return
	}
	d.ids = append(d.ids, id)
	d.oldNames = append(d.oldNames, oldName)
	d.had = append(d.had, had)
}

// firstOnly keeps the first change of each record.
func (d *Batch) firstOnly() {
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

// Log is the changes of the last commits to one named table: one entry
// per generation of database db, the generations consecutive.
type Log struct {
	mu      sync.Mutex
	db      any
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

// Commit appends a transaction's batch to the log, as generation gen of
// database db, for a table that has tableSize records after it. It runs
// before the commit is visible: a view of the new generation finds its
// entry, and one of an older generation reads only the entries up to its
// own.
func (l *Log) Commit(db any, gen uint64, d *Batch, tableSize int) {
	if tableSize < deltaFrom {
		d.over = true // a walk is cheap: keep nothing
	} else {
		d.firstOnly()
	}
	// A delta is used for up to deltaShare of the table; more is never read.
	l.add(db, gen, d, min(deltaLogMost, tableSize/deltaShare+1))
}

func (l *Log) add(db any, gen uint64, d *Batch, most int) {
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
func (l *Log) since(db any, from, to uint64) (ids, oldNames []string, had []bool, ok bool) {
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
