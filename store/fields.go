package store

import (
	"time"

	"edgectl/store/filter"
)

// The getters below read one field of a record for the filter language. They
// are resolved once when a query compiles, so a list scan does no name lookups.

func baseFields(extra map[string]filter.Field) *filter.Schema {
	f := map[string]filter.Field{
		"id":        filter.StringField(func(r any) string { return r.(Record).base().ID }),
		"createdAt": filter.TimeField(func(r any) time.Time { return r.(Record).base().CreatedAt }),
		"updatedAt": filter.TimeField(func(r any) time.Time { return r.(Record).base().UpdatedAt }),
	}
	for name, fld := range extra {
		f[name] = fld
	}
	return &filter.Schema{Fields: f, Prefixes: map[string]func(any, string) any{
		"tags": func(r any, key string) any {
			v, ok := r.(Record).base().Tags[key]
			if !ok {
				return nil
			}
			return tagValue(v)
		},
	}}
}

func namedFields(extra map[string]filter.Field) *filter.Schema {
	s := baseFields(extra)
	s.Fields["name"] = filter.StringField(func(r any) string { return r.(Record).RecordName() })
	return s
}

// tagValue converts a decoded JSON tag value to a filter value.
func tagValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	case string, bool, nil:
		return x
	default:
		return nil
	}
}

func optTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

func optString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// BaseFields is the filter schema of records that have only the common
// fields and those in extra (lists the API builds of node-local things).
func BaseFields(extra map[string]filter.Field) *filter.Schema { return baseFields(extra) }

// refField makes a String field of the records of table a reference to
// records of kinds (the first that has the id: a terminator's router is a
// router or an edge router), whose fields a query reads through it, as
// OpenZiti's foreign-key symbols allow ("service.name" on terminators). A
// query compiled in a read transaction (filter.CompileIn with a *Tx) finds
// them in it. schema is the fields of the referenced records; a func,
// since kinds refer to each other.
func refField(table string, get func(r any) (string, bool), schema func() *filter.Schema, kinds ...*Kind) filter.Field {
	return filter.Field{
		Type:      filter.String,
		Get:       func(r any) any { return optID(get(r)) },
		GetString: get,
		Ref: &filter.Ref{Entity: kinds[0].Entity, Schema: schema, Bind: func(env any) func(string) (any, bool) {
			tx, ok := env.(*Tx)
			if !ok || tx == nil {
				return nil
			}
			return tx.finder(table, kinds)
		}},
	}
}

// idOf is the getter of a reference that is never null.
func idOf(get func(r any) string) func(r any) (string, bool) {
	return func(r any) (string, bool) { return get(r), true }
}

// optIDOf is the getter of a reference that is null when nil or empty.
func optIDOf(get func(r any) *string) func(r any) (string, bool) {
	return func(r any) (string, bool) {
		if p := get(r); p != nil && *p != "" {
			return *p, true
		}
		return "", false
	}
}

func optID(id string, ok bool) any {
	if !ok {
		return nil
	}
	return id
}

// finder finds records of kinds by id in this view, for a filter of the
// records of table that reads their fields through a reference. A lookup
// in the database costs about a microsecond and five allocations; the id
// map of a kind's list order (Tx.Lookup) costs a map read, once built for
// the generation, which costs about a tenth of that per record. So a kind
// no larger than table is read through its map, built at most once per
// change of it for no more than the scan of table costs; a larger one
// through the database, record by record.
func (tx *Tx) finder(table string, kinds []*Kind) func(id string) (any, bool) {
	n := 0
	if raw, _ := tx.txn.First(countsTable, "id", table); raw != nil {
		n = raw.(*count).N
	}
	finds := make([]func(string) (any, bool), len(kinds))
	for i, k := range kinds {
		if tx.Count(k) <= n {
			l := tx.sorted(k)
			finds[i] = func(id string) (any, bool) { return l.Lookup(id) }
		} else {
			finds[i] = func(id string) (any, bool) {
				raw, _ := tx.txn.First(k.Table, "id", id)
				return raw, raw != nil
			}
		}
	}
	if len(finds) == 1 {
		return finds[0]
	}
	return func(id string) (any, bool) {
		for _, find := range finds {
			if r, ok := find(id); ok {
				return r, true
			}
		}
		return nil, false
	}
}
