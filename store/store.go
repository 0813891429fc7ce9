package store

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/store/internal/order"

	iradix "github.com/hashicorp/go-immutable-radix"
	"github.com/hashicorp/go-memdb"
)

const countsTable = "counts"

// count is the number of records of one table, kept in the same transaction
// as the records so every view has an exact count without a scan.
type count struct {
	Table string
	N     int
	// Gen moves on every change of the table, so derived read caches know when they are stale.
	Gen uint64
}

// Store is the in-memory model. Reads take an MVCC view; the FSM is the only writer.
type Store struct {
	db atomic.Pointer[memdb.MemDB]
	// sorted caches, per table, the records in list order at one generation.
	sorted sync.Map // table → *sortedRecords
	// events caches the decoded event log state by its stored value (a
	// setting's value is never changed in place, only replaced).
	events atomic.Pointer[eventsCache]
	// dataPlane caches the decoded data-plane keys the same way.
	dataPlane atomic.Pointer[dataPlaneCache]
	// coarseLoss is the most identities a service policy change that stops
	// selecting them tells the change tracking of one by one (access.go).
	coarseLoss int
	// deltas keeps, per named table, the records the last commits changed
	// (sorted.go, package order). The map is fixed at New.
	deltas map[string]*order.Log
}

// New returns an empty store.
func New() *Store {
	s := &Store{coarseLoss: defaultCoarseLoss, deltas: map[string]*order.Log{}}
	for _, k := range AllKinds {
		if k.Named {
			s.deltas[k.Table] = &order.Log{}
		}
	}
	s.db.Store(newDB())
	return s
}

func newDB() *memdb.MemDB {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		// The schema is a constant of the program: an error here is a programming error.
		panic(fmt.Sprintf("store: bad schema: %v", err))
	}
	// The store uses no watches. The write transactions of a snapshot do not
	// track mutated radix nodes for them, so a large transaction does not walk
	// whole trees at commit (go-immutable-radix's slowNotify past 8192 nodes).
	return db.Snapshot()
}

// Tx is a transaction on the model: a read view or the one write transaction of an Apply.
type Tx struct {
	txn *memdb.Txn
	s   *Store
	db  *memdb.MemDB
	// at is the time of the command being applied (SetTime); lost collects
	// the service policy links it removed, and lostSel the identity
	// selections that lost too many identities to list, for Finish.
	at      time.Time
	lost    []lostLink
	lostSel []lostSelection
	// sideTxns are the open write transactions of side trees (trees.go).
	sideTxns map[string]*iradix.Txn
	// write marks the transaction of an Apply; a read view memoizes the
	// sorted caches it used (sorted.go), since its generations never change.
	write      bool
	sortedMemo map[*Kind]*sortedRecords
	// changes collects the record changes of the transaction once
	// TrackChanges asked for them (the FSM derives events from them).
	changes *[]Change
	// writes counts the writes to the model (Writes).
	writes int
	// evb caches the oldest and newest event sequence numbers of this view.
	evb eventBounds
	// evs caches the event log's state (eventsSetting), read by every
	// command an Apply batch applies; a write to the settings table clears it.
	evs *EventState
	// refsNone caches, per relation, whether no policy of the view names
	// anything in it (candidates); a write to the refs table clears it.
	refsNone map[*relation]bool
	// pend sums the record and role attribute count changes of the
	// transaction's writes; Commit writes them (flushCounts).
	pend *pendingCounts
	// delta collects the records the transaction changed in named tables,
	// for the list order of the next generation (sorted.go, package order).
	delta []*txDelta
}

// pendingCounts are the changes of the record counts and the role attribute
// counts that a write transaction has made and not yet written. A batch of
// commands changes the same few count rows again and again (the identity
// count, a shared role attribute's count): summing the changes in maps and
// writing each row once at Commit saves a lookup and a row insert per
// change, about a sixth of an identity create in the FSM. Reads inside the
// transaction add the pending change to the stored row (Count,
// CountWithRole, gen).
type pendingCounts struct {
	counts map[*Kind]int // every table written has an entry (0 for replaces): its generation moves at Commit
	roles  map[roleKey]int
}

type roleKey struct{ table, attr string }

// countsOf is the pending change of k's record count, and whether k was
// written at all (p may be nil).
func (p *pendingCounts) countsOf(k *Kind) (d int, written bool) {
	if p == nil {
		return 0, false
	}
	d, written = p.counts[k]
	return d, written
}

func (tx *Tx) pending() *pendingCounts {
	if tx.pend == nil {
		tx.pend = &pendingCounts{counts: map[*Kind]int{}, roles: map[roleKey]int{}}
	}
	return tx.pend
}

// flushCounts writes the pending count changes: each changed count row
// once, its generation moved once.
func (tx *Tx) flushCounts() error {
	p := tx.pend
	tx.pend = nil
	if p == nil {
		return nil
	}
	for k, d := range p.counts {
		c := count{Table: k.Table}
		if raw, _ := tx.txn.First(countsTable, "id", k.Table); raw != nil {
			c = *raw.(*count)
		}
		c.N += d
		c.Gen++
		if err := tx.put(countsTable, &c); err != nil {
			return err
		}
	}
	for rk, d := range p.roles {
		if d == 0 {
			continue
		}
		n := d
		if raw, _ := tx.txn.First(rolesTable, "id", rk.table, rk.attr); raw != nil {
			n += raw.(*roleCount).N
		}
		if n <= 0 {
			if _, err := tx.delAll(rolesTable, "id", rk.table, rk.attr); err != nil {
				return err
			}
			continue
		}
		if err := tx.put(rolesTable, &roleCount{Table: rk.table, Attr: rk.attr, N: n}); err != nil {
			return err
		}
	}
	return nil
}

// Writes counts the writes made by the transaction so far: when it has not
// moved over a failed command, that command left nothing to undo.
func (tx *Tx) Writes() int { return tx.writes }

func (tx *Tx) put(table string, obj any) error {
	tx.wrote(table)
	return tx.txn.Insert(table, obj)
}

func (tx *Tx) del(table string, obj any) error {
	tx.wrote(table)
	return tx.txn.Delete(table, obj)
}

func (tx *Tx) delAll(table, index string, args ...any) (int, error) {
	tx.wrote(table)
	return tx.txn.DeleteAll(table, index, args...)
}

// wrote counts a write to table and drops what the view cached of it.
func (tx *Tx) wrote(table string) {
	tx.writes++
	switch table {
	case KindEvent.Table:
		tx.evb.ok = false
	case refsTable:
		tx.refsNone = nil
	case KindSetting.Table:
		tx.evs = nil
	}
}

// Change is one record change of a write transaction: Old is nil for an
// insert, New nil for a delete.
type Change struct {
	Kind     *Kind
	Old, New Record
}

// TrackChanges(true) makes the transaction collect its record changes (all
// but events and settings) from here on, dropping those collected before:
// the FSM calls it before each command of a batch. TrackChanges(false)
// stops collecting.
func (tx *Tx) TrackChanges(on bool) {
	tx.changes = nil
	if on {
		tx.changes = &[]Change{}
	}
}

// Changes are the record changes collected since TrackChanges, in order.
func (tx *Tx) Changes() []Change {
	if tx.changes == nil {
		return nil
	}
	return *tx.changes
}

// Read returns a consistent read-only view. It never blocks and is never blocked.
func (s *Store) Read() *Tx {
	db := s.db.Load()
	return &Tx{txn: db.Txn(false), s: s, db: db}
}

// Write starts the write transaction of one Apply. Commit or Abort it.
func (s *Store) Write() *Tx {
	db := s.db.Load()
	return &Tx{txn: db.Txn(true), s: s, db: db, write: true}
}

// Commit makes the writes of the transaction visible.
func (tx *Tx) Commit() {
	if err := tx.flushCounts(); err != nil {
		panic(err) // as below
	}
	if err := tx.flushTrees(); err != nil {
		// Inserting a row of a fixed schema cannot fail short of a programming error.
		panic(err)
	}
	tx.logDeltas()
	tx.txn.Commit()
}

// Abort drops the writes of the transaction.
func (tx *Tx) Abort() { tx.txn.Abort() }

// swap replaces the whole model, for Restore: readers that hold the old view keep it.
func (s *Store) swap(db *memdb.MemDB) { s.db.Store(db) }

// Get returns the record of kind k with id, or a NotFound error.
func (tx *Tx) Get(k *Kind, id string) (Record, error) {
	raw, err := tx.txn.First(k.Table, "id", id)
	if err != nil {
		return nil, fmt.Errorf("store: get %s: %w", k.Table, err)
	}
	if raw == nil {
		return nil, NotFound(k.Entity, id)
	}
	return raw.(Record), nil
}

// GetAs returns the record of kind k with id as its concrete type.
func GetAs[T Record](tx *Tx, k *Kind, id string) (T, error) {
	r, err := tx.Get(k, id)
	if err != nil {
		var zero T
		return zero, err
	}
	return r.(T), nil
}

// Exists reports whether a record of kind k with id exists.
func (tx *Tx) Exists(k *Kind, id string) bool {
	raw, _ := tx.txn.First(k.Table, "id", id)
	return raw != nil
}

// ByName returns the record of a named kind with that name, or nil.
func (tx *Tx) ByName(k *Kind, name string) Record {
	raw, _ := tx.txn.First(k.Table, "name", name)
	if raw == nil {
		return nil
	}
	return raw.(Record)
}

// First returns the first record of k whose index matches args, or nil.
func (tx *Tx) First(k *Kind, index string, args ...any) Record {
	raw, err := tx.txn.First(k.Table, index, args...)
	if err != nil || raw == nil {
		return nil
	}
	return raw.(Record)
}

// Each calls fn for the records of k whose index matches args (all records when
// args is empty), in index order, until fn returns false.
func (tx *Tx) Each(k *Kind, index string, fn func(Record) bool, args ...any) {
	it, err := tx.txn.Get(k.Table, index, args...)
	if err != nil {
		return
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if !fn(raw.(Record)) {
			return
		}
	}
}

// EachWithRole calls fn for every record of kind k that has role attribute
// attr, in no particular order. k must have a role attribute index
// (Kind.HasRoleIndex).
func (tx *Tx) EachWithRole(k *Kind, attr string, fn func(Record) bool) {
	tx.Each(k, "roles", fn, attr)
}

// Count returns the number of records of kind k.
func (tx *Tx) Count(k *Kind) int {
	if k == KindEvent {
		return tx.eventCount()
	}
	n := 0
	if raw, _ := tx.txn.First(countsTable, "id", k.Table); raw != nil {
		n = raw.(*count).N
	}
	d, _ := tx.pend.countsOf(k)
	return n + d
}

// addCount records that a write changed the number of records of k by d
// (0 for a replace: the table's generation still moves).
func (tx *Tx) addCount(k *Kind, d int) error {
	if k == KindEvent {
		return nil // counted from the sequence numbers (eventCount)
	}
	tx.pending().counts[k] += d
	return nil
}

// gen is the change generation of k's table in this view.
func (tx *Tx) gen(k *Kind) uint64 {
	if k == KindEvent {
		// Events are only appended (the newest grows) and compacted (the oldest grows).
		oldest, newest := tx.eventBounds()
		return uint64(oldest) + uint64(newest)
	}
	var g uint64
	if raw, _ := tx.txn.First(countsTable, "id", k.Table); raw != nil {
		g = raw.(*count).Gen
	}
	if _, written := tx.pend.countsOf(k); written {
		g++ // not the committed generation's; sorted.go caches no view of a write transaction
	}
	return g
}

// checkName enforces the unique name of a named kind.
func (tx *Tx) checkName(k *Kind, r Record) error {
	if !k.Named {
		return nil
	}
	if other := tx.ByName(k, r.RecordName()); other != nil && other.base().ID != r.base().ID {
		return Conflict("name", r.RecordName(), "the name %q is already used by another %s", r.RecordName(), k.Entity)
	}
	return nil
}

// Insert adds a new record. The id must be new and the name unique.
func (tx *Tx) Insert(k *Kind, r Record) error {
	if tx.Exists(k, r.base().ID) {
		return Conflict("id", r.base().ID, "a %s with id %q already exists", k.Entity, r.base().ID)
	}
	if err := tx.checkName(k, r); err != nil {
		return err
	}
	if err := tx.put(k.Table, r); err != nil {
		return fmt.Errorf("store: insert %s: %w", k.Table, err)
	}
	if err := tx.afterChange(k, nil, r); err != nil {
		return err
	}
	return tx.addCount(k, 1)
}

// Replace stores a changed copy of an existing record.
func (tx *Tx) Replace(k *Kind, r Record) error {
	old, err := tx.Get(k, r.base().ID)
	if err != nil {
		return err
	}
	if err := tx.checkName(k, r); err != nil {
		return err
	}
	if err := tx.put(k.Table, r); err != nil {
		return fmt.Errorf("store: replace %s: %w", k.Table, err)
	}
	if err := tx.addCount(k, 0); err != nil {
		return err
	}
	return tx.afterChange(k, old, r)
}

// Upsert stores a record whether or not it exists (settings, restores).
func (tx *Tx) Upsert(k *Kind, r Record) error {
	if tx.Exists(k, r.base().ID) {
		return tx.Replace(k, r)
	}
	return tx.Insert(k, r)
}

// Remove deletes the record of kind k with id.
func (tx *Tx) Remove(k *Kind, id string) error {
	r, err := tx.Get(k, id)
	if err != nil {
		return err
	}
	if err := tx.del(k.Table, r); err != nil {
		return fmt.Errorf("store: delete %s: %w", k.Table, err)
	}
	if err := tx.afterChange(k, r, nil); err != nil {
		return err
	}
	return tx.addCount(k, -1)
}
