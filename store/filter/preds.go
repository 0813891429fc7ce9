package filter

import (
	"strings"
	"time"
)

// Predicates over one non-null value of each field type. They type-check the
// literals against the field and convert them once, at compile time.

func mismatch(l literal, s subject, why string) *Error {
	return errorf(l.pos, "cannot compare %s with %s%s", s.desc, l.describe(), why)
}

// predFunc builds the test of one non-null value, and says whether a null
// value matches (before negation). It type-checks the literals.
type predFunc[T any] func(n *cmpNode, s subject) (pred func(T) bool, nullMatches bool, err *Error)

// scalar wires a getter and a predicate into a matchFunc. A nil getter means
// the schema gave none; the caller reports it.
func scalar[T any](n *cmpNode, s subject, get func(any) (T, bool), build predFunc[T]) (matchFunc, *Error) {
	if err := checkOp(n, s); err != nil {
		return nil, err
	}
	pred, nullMatches, err := build(n, s)
	if err != nil || get == nil {
		return nil, err
	}
	if n.neg {
		return func(rec any) bool {
			v, ok := get(rec)
			if !ok {
				return !nullMatches
			}
			return !pred(v)
		}, nil
	}
	return func(rec any) bool {
		v, ok := get(rec)
		if !ok {
			return nullMatches
		}
		return pred(v)
	}, nil
}

// convert type-checks each non-null literal into T; it reports whether a null
// literal was among them.
func convert[T any](n *cmpNode, s subject, conv func(literal) (T, string, bool)) ([]T, bool, *Error) {
	vals := make([]T, 0, len(n.vals))
	hasNull := false
	for _, l := range n.vals {
		if l.kind == litNull {
			hasNull = true
			continue
		}
		v, why, ok := conv(l)
		if !ok {
			return nil, false, mismatch(l, s, why)
		}
		vals = append(vals, v)
	}
	return vals, hasNull, nil
}

// ordered builds the predicate of every operator but contains from a
// comparison function.
func ordered[T any](op cmpOp, vals []T, compare func(a, b T) int) func(T) bool {
	if len(vals) == 0 {
		return func(T) bool { return false } // "= null" or "in []"
	}
	v := vals[0]
	switch op {
	case opLt:
		return func(x T) bool { return compare(x, v) < 0 }
	case opLe:
		return func(x T) bool { return compare(x, v) <= 0 }
	case opGt:
		return func(x T) bool { return compare(x, v) > 0 }
	case opGe:
		return func(x T) bool { return compare(x, v) >= 0 }
	case opBetween:
		hi := vals[1]
		return func(x T) bool { return compare(x, v) >= 0 && compare(x, hi) <= 0 }
	case opIn:
		return func(x T) bool {
			for _, v := range vals {
				if compare(x, v) == 0 {
					return true
				}
			}
			return false
		}
	}
	return func(x T) bool { return compare(x, v) == 0 }
}

func numPred(n *cmpNode, s subject) (func(num) bool, bool, *Error) {
	vals, hasNull, err := convert(n, s, func(l literal) (num, string, bool) {
		return litNum(l), "", l.kind == litInt || l.kind == litFloat
	})
	if err != nil {
		return nil, false, err
	}
	return ordered(n.op, vals, cmpNum), hasNull, nil
}

func boolPred(n *cmpNode, s subject) (func(bool) bool, bool, *Error) {
	vals, hasNull, err := convert(n, s, func(l literal) (bool, string, bool) {
		return l.b, "", l.kind == litBool
	})
	if err != nil {
		return nil, false, err
	}
	return ordered(n.op, vals, cmpBool), hasNull, nil
}

func timePred(n *cmpNode, s subject) (func(time.Time) bool, bool, *Error) {
	vals, hasNull, err := convert(n, s, func(l literal) (time.Time, string, bool) {
		if l.kind == litString {
			t, err := time.Parse(time.RFC3339Nano, l.s)
			return t, " (not an RFC 3339 datetime)", err == nil
		}
		return l.t, "", l.kind == litTime
	})
	if err != nil {
		return nil, false, err
	}
	return ordered(n.op, vals, time.Time.Compare), hasNull, nil
}

// stringPred specializes equality, membership and substring tests, the
// operators list pages use most.
func stringPred(n *cmpNode, s subject) (func(string) bool, bool, *Error) {
	vals, hasNull, err := convert(n, s, func(l literal) (string, string, bool) {
		return l.s, "", l.kind == litString
	})
	if err != nil || len(vals) == 0 {
		return func(string) bool { return false }, hasNull, err
	}
	v := vals[0]
	switch n.op {
	case opEq:
		return func(x string) bool { return x == v }, hasNull, nil
	case opContains:
		return func(x string) bool { return strings.Contains(x, v) }, hasNull, nil
	case opIContains:
		return func(x string) bool { return containsFold(x, v) }, hasNull, nil
	case opIn:
		if len(vals) >= 8 {
			set := make(map[string]struct{}, len(vals))
			for _, v := range vals {
				set[v] = struct{}{}
			}
			return func(x string) bool { _, ok := set[x]; return ok }, hasNull, nil
		}
		return func(x string) bool {
			for _, v := range vals {
				if x == v {
					return true
				}
			}
			return false
		}, hasNull, nil
	}
	return ordered(n.op, vals, strings.Compare), hasNull, nil
}

// dynPred compares dynamic values: a value of another kind than the literal
// matches no operator (so only the negated ones hold).
func dynPred(n *cmpNode, s subject) (func(any) bool, bool, *Error) {
	var lits []dynLit
	hasNull := false
	for _, l := range n.vals {
		switch {
		case l.kind == litNull:
			hasNull = true
			continue
		case (n.op == opContains || n.op == opIContains) && l.kind != litString:
			return nil, false, mismatch(l, s, ": "+n.op.name(n.neg)+" needs a string")
		case n.op.ordering() && l.kind == litBool:
			return nil, false, mismatch(l, s, ": "+n.op.name(n.neg)+" needs a number, string or datetime")
		}
		lits = append(lits, newDynLit(l))
	}
	if len(lits) == 0 {
		return func(any) bool { return false }, hasNull, nil
	}
	l := &lits[0]
	switch n.op {
	case opContains:
		return func(x any) bool { s, ok := x.(string); return ok && strings.Contains(s, l.s) }, hasNull, nil
	case opIContains:
		return func(x any) bool { s, ok := x.(string); return ok && containsFold(s, l.s) }, hasNull, nil
	case opIn:
		return func(x any) bool {
			for i := range lits {
				if c, ok := dynCompare(x, &lits[i]); ok && c == 0 {
					return true
				}
			}
			return false
		}, hasNull, nil
	case opBetween:
		hi := &lits[1]
		return func(x any) bool {
			c1, ok1 := dynCompare(x, l)
			c2, ok2 := dynCompare(x, hi)
			return ok1 && ok2 && c1 >= 0 && c2 <= 0
		}, hasNull, nil
	}
	op := n.op
	return func(x any) bool { c, ok := dynCompare(x, l); return ok && holds(op, c) }, hasNull, nil
}

// holds applies a single-value operator to the result of a comparison.
func holds(op cmpOp, c int) bool {
	switch op {
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	case opGe:
		return c >= 0
	}
	return c == 0
}
