package store

import (
	"fmt"

	iradix "github.com/hashicorp/go-immutable-radix"
	"github.com/hashicorp/go-memdb"
)

// Side trees hold the derived rows that one command may write by the
// thousands (policy links, change markers). memdb tracks every node a write
// transaction mutates, and past 8192 of them its commit walks the whole tree
// to notify watchers: a policy that selects ten thousand identities took
// seconds to commit. A side tree is a plain immutable radix tree without
// that tracking; its root is stored in a memdb row written by the same
// transaction, so readers still see it consistently with everything else.

const treesTable = "trees"

// treeRoot is the row that keeps a side tree's root in the model.
type treeRoot struct {
	Name string
	Root *iradix.Tree
}

// Side trees of the model.
const (
	treeLinks    = "links"    // rel \x00 policy \x00 → sorted entity ids
	treeByEntity = "byEntity" // rel \x00 entity \x00 → sorted policy ids
	treeChanges  = "changes"  // marker id → time
)

func treesSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: treesTable, Indexes: map[string]*memdb.IndexSchema{
		"id": {Name: "id", Unique: true, Indexer: &stringIndex{field: "Name"}},
	}}
}

// tree returns the root of a side tree as this view sees it.
func (tx *Tx) tree(name string) *iradix.Tree {
	if t, ok := tx.sideTxns[name]; ok {
		// The write transaction reads its own writes.
		return t.CommitOnly()
	}
	raw, _ := tx.txn.First(treesTable, "id", name)
	if raw == nil {
		return iradix.New()
	}
	return raw.(*treeRoot).Root
}

// sideTxn returns the write transaction of a side tree, starting it on first use.
func (tx *Tx) sideTxn(name string) *iradix.Txn {
	tx.writes++ // asked for to write
	if t, ok := tx.sideTxns[name]; ok {
		return t
	}
	if tx.sideTxns == nil {
		tx.sideTxns = map[string]*iradix.Txn{}
	}
	t := tx.tree(name).Txn()
	tx.sideTxns[name] = t
	return t
}

// flushTrees stores the new roots of the side trees written by this transaction.
func (tx *Tx) flushTrees() error {
	for name, t := range tx.sideTxns {
		if err := tx.put(treesTable, &treeRoot{Name: name, Root: t.CommitOnly()}); err != nil {
			return fmt.Errorf("store: side tree %s: %w", name, err)
		}
	}
	tx.sideTxns = nil
	return nil
}

// resetTree empties a side tree (integrity rebuild).
func (tx *Tx) resetTree(name string) {
	tx.writes++
	if tx.sideTxns == nil {
		tx.sideTxns = map[string]*iradix.Txn{}
	}
	tx.sideTxns[name] = iradix.New().Txn()
}

func key(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
		b = append(b, 0)
	}
	return b
}
