package filter

import (
	"strings"
	"time"
)

// Query is a compiled query: a match predicate, sort keys and paging. It is
// immutable once Compile returns, so one Query may serve concurrent scans.
type Query struct {
	text     string
	match    matchFunc
	keys     []sortFunc
	skip     int
	hasSkip  bool
	limit    int
	hasLimit bool
	noLimit  bool
	// expr, schema and env are kept for Requires, which reads the
	// condition's shape.
	expr   node
	schema *Schema
	env    any
}

// sortFunc orders two records by one key.
type sortFunc func(a, b any) int

// Compile parses src and resolves it against s. Every failure, syntax or
// type, is an *Error with the byte offset where the query broke. An empty
// (or all-whitespace) src is a valid query that matches every record.
// Fields read through a reference ("service.name") need CompileIn.
func Compile(src string, s *Schema) (*Query, error) { return CompileIn(src, s, nil) }

// CompileIn is Compile for a query matched against the records of env (a
// store's read transaction), in which the fields read through a reference
// find the records they read (Ref.Bind). The Query must only match records
// of that env.
func CompileIn(src string, s *Schema, env any) (*Query, error) {
	a, perr := parse(src)
	if perr != nil {
		return nil, perr
	}
	c := &compiler{s: s, env: env}
	q := &Query{
		text:     a.String(),
		skip:     a.skip,
		hasSkip:  a.hasSkip,
		limit:    a.limit,
		hasLimit: a.hasLimit,
		noLimit:  a.noLimit,
		expr:     a.expr,
		schema:   s,
		env:      env,
	}
	if a.expr != nil {
		m, err := c.expr(a.expr)
		if err != nil {
			return nil, err
		}
		q.match = m
	}
	for _, k := range a.sort {
		f, err := c.sortKey(k)
		if err != nil {
			return nil, err
		}
		q.keys = append(q.keys, f)
	}
	return q, nil
}

// Match reports whether rec satisfies the query's condition; a query without
// one matches every record.
func (q *Query) Match(rec any) bool {
	if q == nil || q.match == nil {
		return true
	}
	return q.match(rec)
}

// HasSort reports whether the query has a "sort by" clause.
func (q *Query) HasSort() bool { return q != nil && len(q.keys) > 0 }

// Compare orders two records by the sort keys, for use with slices.SortFunc:
// negative when a comes first. Null sorts before every value in ascending
// order (and so after in descending). It is 0 when there are no sort keys,
// so a stable sort keeps the caller's order.
func (q *Query) Compare(a, b any) int {
	if q == nil {
		return 0
	}
	for _, k := range q.keys {
		if c := k(a, b); c != 0 {
			return c
		}
	}
	return 0
}

// Skip returns the "skip N" count; ok is false when the query has none.
func (q *Query) Skip() (n int, ok bool) {
	if q == nil {
		return 0, false
	}
	return q.skip, q.hasSkip
}

// Limit returns the "limit N" count; ok is false when the query has no limit
// clause. For "limit none", ok and none are both true and n is 0: the caller
// wants every record, beyond its default page size.
func (q *Query) Limit() (n int, ok bool, none bool) {
	if q == nil {
		return 0, false, false
	}
	return q.limit, q.hasLimit, q.noLimit
}

// Expr returns the query in canonical form: lower-case keywords, minimal
// parentheses (so "a = 1 or b = 2 and c = 3" prints as written, while the
// grouping of "(a = 1 or b = 2) and c = 3" keeps its parentheses), and
// normalized literals. Compiling Expr gives an equivalent query.
func (q *Query) Expr() string {
	if q == nil {
		return ""
	}
	return q.text
}

// String returns Expr, so a Query prints readably in logs.
func (q *Query) String() string { return q.Expr() }

func (c *compiler) sortKey(k sortKey) (sortFunc, *Error) {
	f, via, err := c.resolveVia(k.field)
	if err != nil {
		return nil, err
	}
	if via {
		return nil, errorf(k.field.pos, "cannot sort by %q: a list sorts by its own fields, not by those of the records it refers to", k.field.name)
	}
	var sf sortFunc
	switch f.Type {
	case String:
		sf = byKey(stringGetter(f), strings.Compare)
	case Number:
		sf = byKey(numGetter(f), cmpNum)
	case Bool:
		sf = byKey(boolGetter(f), cmpBool)
	case Time:
		sf = byKey(timeGetter(f), time.Time.Compare)
	case Any:
		sf = byKey(dynGetter(f), cmpDyn)
	case StringList:
		return nil, errorf(k.field.pos, "cannot sort by list field %q", k.field.name)
	default:
		return nil, errorf(k.field.pos, "field %q has an unknown type", k.field.name)
	}
	if sf == nil {
		return nil, errorf(k.field.pos, "field %q has no getter", k.field.name)
	}
	if k.desc {
		asc := sf
		sf = func(a, b any) int { return -asc(a, b) }
	}
	return sf, nil
}

// byKey orders records by one field, nulls first; nil if get is nil.
func byKey[T any](get func(any) (T, bool), compare func(a, b T) int) sortFunc {
	if get == nil {
		return nil
	}
	return func(a, b any) int {
		va, oka := get(a)
		vb, okb := get(b)
		if !oka || !okb {
			return cmpBool(oka, okb)
		}
		return compare(va, vb)
	}
}
