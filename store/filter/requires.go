package filter

import "slices"

// Need is what a query requires of one String field: see Query.Requires.
type Need struct {
	// Test holds for the field's value of every record the query matches.
	Test func(string) bool
	// Substring, when not empty, is contained in every value that passes
	// Test (the value of a "contains" or "=" the condition implies), so a
	// scan may look for it before calling Test.
	Substring string
}

// Requires lets a scan skip records by one String field alone: it returns
// what every record the condition matches has in that field, or nil when the
// condition does not constrain the field on every path (no condition, an
// "or" with a branch that does not name it, a list function). A list reads
// the Need over a packed column of the field's values and calls Match only on
// the records that pass, instead of loading every record from memory.
//
// Need.Test is exact for non-null values, so callers must only apply it to
// values that are never null (such as the name of a named kind) and must
// still Match the records it lets through: it is a necessary condition, not
// the query.
func (q *Query) Requires(field string) *Need {
	if q == nil || q.expr == nil {
		return nil
	}
	c := &compiler{s: q.schema, env: q.env}
	n := c.requires(q.expr, field, true)
	if n.Test == nil {
		return nil
	}
	return &n
}

// requires builds the Need of field implied by n (pos) or by "not n" (!pos);
// a nil Test means none. Negation is pushed down with De Morgan's laws, which
// holds here because the value is never null: "not (name contains x)" is
// exactly "name not contains x".
func (c *compiler) requires(n node, field string, pos bool) Need {
	switch n := n.(type) {
	case *notNode:
		return c.requires(n.x, field, !pos)
	case *cmpNode:
		return c.requiresCmp(n, field, pos)
	case *logicNode:
		// "a and b", or "not (a or b)": the condition implies every child,
		// so every child's substring too; the longest is the rarest.
		if n.or != pos {
			var all Need
			var tests []func(string) bool
			for _, k := range n.kids {
				if need := c.requires(k, field, pos); need.Test != nil {
					tests = append(tests, need.Test)
					if len(need.Substring) > len(all.Substring) {
						all.Substring = need.Substring
					}
				}
			}
			all.Test = allOf(tests)
			return all
		}
		// "a or b", or "not (a and b)": it implies one of the children, so
		// each must constrain the field; no substring is common to all.
		tests := make([]func(string) bool, 0, len(n.kids))
		for _, k := range n.kids {
			need := c.requires(k, field, pos)
			if need.Test == nil {
				return Need{}
			}
			tests = append(tests, need.Test)
		}
		return Need{Test: anyOf(tests)}
	}
	return Need{}
}

// requiresCmp is the Need of a plain comparison of field, its test built as
// the compiled query builds it (stringPred), so both agree on every operator.
func (c *compiler) requiresCmp(n *cmpNode, field string, pos bool) Need {
	if n.fn != fnNone || n.field.name != field {
		return Need{}
	}
	f, err := c.resolve(n.field)
	if err != nil || f.Type != String {
		return Need{}
	}
	pred, _, err := stringPred(n, subject{typ: String, nullable: true})
	if err != nil {
		return Need{}
	}
	if n.neg == pos {
		return Need{Test: func(s string) bool { return !pred(s) }}
	}
	need := Need{Test: pred}
	if (n.op == opContains || n.op == opEq) && len(n.vals) == 1 && n.vals[0].kind == litString {
		need.Substring = n.vals[0].s
	}
	return need
}

func allOf(tests []func(string) bool) func(string) bool {
	switch len(tests) {
	case 0:
		return nil
	case 1:
		return tests[0]
	}
	return func(s string) bool {
		for _, t := range tests {
			if !t(s) {
				return false
			}
		}
		return true
	}
}

func anyOf(tests []func(string) bool) func(string) bool {
	switch len(tests) {
	case 0:
		return nil // the parser never builds an empty "or"
	case 1:
		return tests[0]
	}
	return func(s string) bool {
		for _, t := range tests {
			if t(s) {
				return true
			}
		}
		return false
	}
}

// RequiresAnyOf lets a list read only the records indexed under some values
// of one list field: it returns values such that every record the condition
// matches has at least one of them in field, or nil when the condition does
// not say so on every path. Only "anyOf(field) = v" and "anyOf(field) in
// [...]" name such values ("!=", "not in", allOf and count do not: an empty
// list can match them); an "and" takes the smallest set of its children, an
// "or" the union of all of them. Like Requires it is a necessary condition:
// callers must still Match the records it lets through.
func (q *Query) RequiresAnyOf(field string) []string {
	if q == nil || q.expr == nil {
		return nil
	}
	return requiresAnyOf(q.expr, field, true)
}

func requiresAnyOf(n node, field string, pos bool) []string {
	switch n := n.(type) {
	case *notNode:
		return requiresAnyOf(n.x, field, !pos)
	case *cmpNode:
		// "not (anyOf(f) != v)" is "allOf(f) = v", which an empty list meets.
		if !pos {
			return nil
		}
		return anyOfValues(n, field)
	case *logicNode:
		if n.or != pos {
			// Every child holds: the smallest set any child names will do.
			var best []string
			for _, k := range n.kids {
				if vals := requiresAnyOf(k, field, pos); vals != nil && (best == nil || len(vals) < len(best)) {
					best = vals
				}
			}
			return best
		}
		// One child holds: each must name values, and any of them may be it.
		var all []string
		for _, k := range n.kids {
			vals := requiresAnyOf(k, field, pos)
			if vals == nil {
				return nil
			}
			for _, v := range vals {
				if !slices.Contains(all, v) {
					all = append(all, v)
				}
			}
		}
		return all
	}
	return nil
}

// IsAnyOf returns v when the query's whole condition is that the list field
// holds v (`anyOf(field) = v`, or `in` with the one value v), so that the
// records it matches are exactly those an index of the field's values lists
// under v and their number is that index's count for v.
func (q *Query) IsAnyOf(field string) (v string, ok bool) {
	if q == nil {
		return "", false
	}
	if n, isCmp := q.expr.(*cmpNode); isCmp {
		if vals := anyOfValues(n, field); len(vals) == 1 {
			return vals[0], true
		}
	}
	return "", false
}

// anyOfValues returns the values of n when it is "anyOf(field) = v" or
// "anyOf(field) in [...]" with non-empty strings, nil otherwise.
func anyOfValues(n *cmpNode, field string) []string {
	if n.neg || n.fn != fnAnyOf || n.field.name != field || (n.op != opEq && n.op != opIn) {
		return nil
	}
	vals := make([]string, 0, len(n.vals))
	for _, v := range n.vals {
		if v.kind != litString || v.s == "" {
			return nil
		}
		vals = append(vals, v.s)
	}
	return vals
}
