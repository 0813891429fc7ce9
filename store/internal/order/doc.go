// Package order keeps the store's tables in list order between writes: a
// table's records at one generation (List), made from the last order and
// the records the commits since changed (Log, Next) rather than by a walk
// of the table's index, and the column of their names (Names) that a name
// filter searches, with a suffix array or the offsets of rare bytes for
// large columns.
//
// It is the speed-tuned part of package store, behind the few calls the
// store makes (New, Next, List's readers, NewBatch/Note, Log.Commit).
// Everything here is node-local and derived from the model: nothing is
// replicated or written to a snapshot. Read DESIGN.md before changing it;
// each file's head names the benchmark and the tests that guard it.
package order
