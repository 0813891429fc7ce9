package store

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// Kind describes one record kind: its table, how to make an empty record, its
// indexes and the fields its lists accept. One table of kinds drives the
// schema, snapshots, restores, lists and counts, so adding a kind is one entry.
type Kind struct {
	// Table is the memdb table and the plural used in paths and counts ("identities").
	Table string
	// Entity is the singular used in messages ("identity").
	Entity string
	// Named kinds have a unique, case-sensitive name and list by name then id;
	// the others list by creation time then id.
	Named bool
	// byID kinds list in id order, which is their creation order (the
	// events): they need no creation-time index.
	byID    bool
	new     func() Record
	indexes []*memdb.IndexSchema
	// Fields are the filterable and sortable fields.
	Fields *filter.Schema
}

// New returns an empty record of the kind.
func (k *Kind) New() Record { return k.new() }

// HasRoleIndex reports whether records of the kind are indexed by role
// attribute (Tx.EachWithRole).
func (k *Kind) HasRoleIndex() bool {
	return slices.ContainsFunc(k.indexes, func(ix *memdb.IndexSchema) bool { return ix.Name == "roles" })
}

func strIndex(name, field string) *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: name, AllowMissing: true, Indexer: &stringIndex{field: field}}
}

func rolesIndex() *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: "roles", AllowMissing: true, Indexer: &stringsIndex{field: "RoleAttributes"}}
}

// createdIndexer orders records by creation time, for kinds without a name.
type createdIndexer struct{}

func (createdIndexer) FromObject(obj any) (bool, []byte, error) {
	r, ok := obj.(Record)
	if !ok {
		return false, nil, fmt.Errorf("not a record: %T", obj)
	}
	return true, encodeTime(r.base().CreatedAt), nil
}

func (createdIndexer) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("created index takes one time")
	}
	t, ok := args[0].(time.Time)
	if !ok {
		return nil, fmt.Errorf("created index takes a time.Time, not %T", args[0])
	}
	return encodeTime(t), nil
}

func encodeTime(t time.Time) []byte {
	b := make([]byte, 8)
	// Flipping the sign bit makes the byte order of negative and positive times agree with time order.
	binary.BigEndian.PutUint64(b, uint64(t.UnixNano())^(1<<63))
	return b
}

// AllKinds lists every kind in snapshot order: records come after the records they reference.
var AllKinds = []*Kind{KindSetting, KindController, KindJoinToken, KindIdentityType, KindAuthPolicy, KindPostureCheckType,
	KindIdentity, KindAuthenticator, KindEnrollment, KindAPISession,
	KindService, KindEdgeRouter, KindRouter, KindPostureCheck,
	KindServicePolicy, KindEdgeRouterPolicy, KindServiceEdgeRouterPolicy,
	KindConfigType, KindConfig, KindTerminator, KindIdentityServiceConfig,
	KindCA, KindExternalJWTSigner, KindSession, KindFailedServiceRequest, KindPostureData,
	KindAPISessionCertificate, KindCertExtension,
	KindMFA, KindLoginFailures, KindEvent, KindEventSubscription}

// KindByTable returns the kind of a table name.
func KindByTable(table string) (*Kind, bool) {
	for _, k := range AllKinds {
		if k.Table == table {
			return k, true
		}
	}
	return nil, false
}

func schema() *memdb.DBSchema {
	s := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{}}
	for _, k := range AllKinds {
		t := &memdb.TableSchema{Name: k.Table, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: idIndex{}},
		}}
		if !k.byID && !k.Named {
			// The default list order of a kind without a name (sorted.go); a
			// named kind lists by name, and every index costs each write.
			t.Indexes["created"] = &memdb.IndexSchema{Name: "created", Indexer: createdIndexer{}}
		}
		if k.Named {
			t.Indexes["name"] = &memdb.IndexSchema{Name: "name", Indexer: nameIndex{}}
		}
		for _, ix := range k.indexes {
			t.Indexes[ix.Name] = ix
		}
		s.Tables[k.Table] = t
	}
	for _, t := range relationTables() {
		s.Tables[t.Name] = t
	}
	s.Tables[countsTable] = &memdb.TableSchema{Name: countsTable, Indexes: map[string]*memdb.IndexSchema{
		"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Table"}},
	}}
	return s
}
