// Package store is the in-memory model of the controller: one table per record
// kind in a hashicorp/go-memdb database, with indexes by id, by name and by role
// attribute, the relations kept up to date incrementally, and the list queries
// (the filter language, paging, role filters) that the APIs serve.
//
// Readers take a read transaction, an immutable MVCC view that Apply never
// blocks. Only the FSM writes, one transaction per Raft entry.
//
// The store never reads the clock, never generates ids or randomness, and never
// does I/O outside Snapshot and Restore: every value it stores was decided
// before the command was proposed, so Apply is deterministic on every node.
package store
