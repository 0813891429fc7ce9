package filter

import (
	"cmp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Values as the compiled closures see them, and the getters that produce
// them. Everything here runs once per record, so it avoids allocation: the
// typed getters of Field are used as they are, and Get's result is only type
// switched, never re-boxed.

// num is a number that remembers whether it is integral, because integers
// compare as int64 (exactly) unless the other side is a decimal.
type num struct {
	i       int64
	f       float64
	isFloat bool
}

func (n num) float() float64 {
	if n.isFloat {
		return n.f
	}
	return float64(n.i)
}

// cmpNum orders numbers; cmp.Compare puts NaN first, which keeps sorting a
// total order rather than panicking or looping.
func cmpNum(a, b num) int {
	if !a.isFloat && !b.isFloat {
		return cmp.Compare(a.i, b.i)
	}
	return cmp.Compare(a.float(), b.float())
}

func litNum(l literal) num {
	if l.kind == litFloat {
		return num{f: l.f, isFloat: true}
	}
	return num{i: l.i}
}

// toNum accepts every Go number type, since getters are written by hand.
func toNum(v any) (num, bool) {
	switch x := v.(type) {
	case int64:
		return num{i: x}, true
	case float64:
		return num{f: x, isFloat: true}, true
	case int:
		return num{i: int64(x)}, true
	case int32:
		return num{i: int64(x)}, true
	case int16:
		return num{i: int64(x)}, true
	case int8:
		return num{i: int64(x)}, true
	case uint:
		return uintNum(uint64(x)), true
	case uint64:
		return uintNum(x), true
	case uint32:
		return num{i: int64(x)}, true
	case uint16:
		return num{i: int64(x)}, true
	case uint8:
		return num{i: int64(x)}, true
	case float32:
		return num{f: float64(x), isFloat: true}, true
	}
	return num{}, false
}

func uintNum(u uint64) num {
	if u > 1<<63-1 {
		return num{f: float64(u), isFloat: true}
	}
	return num{i: int64(u)}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func toTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x, true
	case *time.Time:
		if x != nil {
			return *x, true
		}
	}
	return time.Time{}, false
}

func stringGetter(f Field) func(any) (string, bool) {
	if f.GetString != nil {
		return f.GetString
	}
	if g := f.Get; g != nil {
		return func(rec any) (string, bool) { s, ok := g(rec).(string); return s, ok }
	}
	return nil
}

func numGetter(f Field) func(any) (num, bool) {
	if g := f.GetInt; g != nil {
		return func(rec any) (num, bool) { i, ok := g(rec); return num{i: i}, ok }
	}
	if g := f.GetFloat; g != nil {
		return func(rec any) (num, bool) { x, ok := g(rec); return num{f: x, isFloat: true}, ok }
	}
	if g := f.Get; g != nil {
		return func(rec any) (num, bool) { return toNum(g(rec)) }
	}
	return nil
}

func boolGetter(f Field) func(any) (bool, bool) {
	if f.GetBool != nil {
		return f.GetBool
	}
	if g := f.Get; g != nil {
		return func(rec any) (bool, bool) { b, ok := g(rec).(bool); return b, ok }
	}
	return nil
}

func timeGetter(f Field) func(any) (time.Time, bool) {
	if f.GetTime != nil {
		return f.GetTime
	}
	if g := f.Get; g != nil {
		return func(rec any) (time.Time, bool) { return toTime(g(rec)) }
	}
	return nil
}

func listGetter(f Field) func(any) []string {
	if f.GetStrings != nil {
		return f.GetStrings
	}
	if g := f.Get; g != nil {
		return func(rec any) []string { l, _ := g(rec).([]string); return l }
	}
	return nil
}

// dynGetter reads an Any field; values of unknown Go types read as null, as
// they do for typed fields.
func dynGetter(f Field) func(any) (any, bool) {
	g := f.Get
	if g == nil {
		return nil
	}
	return func(rec any) (any, bool) {
		v := g(rec)
		switch v.(type) {
		case string, bool, time.Time:
			return v, true
		}
		if _, ok := toNum(v); ok {
			return v, true
		}
		return nil, false
	}
}

// dynLit is a literal prepared for comparison with dynamic values.
type dynLit struct {
	kind    litKind
	s       string
	n       num
	b       bool
	t       time.Time
	hasTime bool // t is valid: a datetime, or a string that parses as one
}

func newDynLit(l literal) dynLit {
	d := dynLit{kind: l.kind, s: l.s, b: l.b, t: l.t, hasTime: l.kind == litTime}
	switch l.kind {
	case litInt, litFloat:
		d.n = litNum(l)
	case litString:
		if t, err := time.Parse(time.RFC3339Nano, l.s); err == nil {
			d.t, d.hasTime = t, true
		}
	}
	return d
}

// dynCompare compares a non-null dynamic value with a literal; ok is false
// when their kinds cannot be compared, which makes every operator false.
func dynCompare(v any, l *dynLit) (c int, ok bool) {
	switch x := v.(type) {
	case string:
		switch l.kind {
		case litString:
			return strings.Compare(x, l.s), true
		case litTime:
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return t.Compare(l.t), true
			}
		}
		return 0, false
	case bool:
		if l.kind == litBool {
			return cmpBool(x, l.b), true
		}
		return 0, false
	case time.Time:
		if l.hasTime {
			return x.Compare(l.t), true
		}
		return 0, false
	}
	if n, isNum := toNum(v); isNum && (l.kind == litInt || l.kind == litFloat) {
		return cmpNum(n, l.n), true
	}
	return 0, false
}

// dynRank orders the kinds of dynamic values for sorting mixed columns.
func dynRank(v any) int {
	switch v.(type) {
	case bool:
		return 1
	case string:
		return 3
	case time.Time:
		return 4
	}
	return 2 // dynGetter only lets numbers through otherwise
}

func cmpDyn(a, b any) int {
	if ra, rb := dynRank(a), dynRank(b); ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch x := a.(type) {
	case bool:
		return cmpBool(x, b.(bool))
	case string:
		return strings.Compare(x, b.(string))
	case time.Time:
		return x.Compare(b.(time.Time))
	}
	na, _ := toNum(a)
	nb, _ := toNum(b)
	return cmpNum(na, nb)
}

// containsFold reports whether sub occurs in s under Unicode simple case
// folding (what strings.EqualFold uses), without allocating lowered copies.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	if c0 := sub[0]; c0 < utf8.RuneSelf {
		// Only try positions that could start a match: the same ASCII letter
		// in either case, or a multi-byte rune (the Kelvin sign folds to k).
		l0 := lowerASCII(c0)
		for i := 0; i < len(s); i++ {
			if b := s[i]; b < utf8.RuneSelf && lowerASCII(b) != l0 || !utf8.RuneStart(b) {
				continue
			}
			if hasPrefixFold(s[i:], sub) {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(s); {
		if hasPrefixFold(s[i:], sub) {
			return true
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	for prefix != "" {
		if s == "" {
			return false
		}
		a, b := prefix[0], s[0]
		if a < utf8.RuneSelf && b < utf8.RuneSelf {
			// Two ASCII bytes only fold together as upper and lower case.
			if a != b && lowerASCII(a) != lowerASCII(b) {
				return false
			}
			prefix, s = prefix[1:], s[1:]
			continue
		}
		ra, wa := utf8.DecodeRuneInString(prefix)
		rb, wb := utf8.DecodeRuneInString(s)
		badA, badB := ra == utf8.RuneError && wa == 1, rb == utf8.RuneError && wb == 1
		if badA || badB {
			// Invalid UTF-8 only matches the same invalid byte.
			if !badA || !badB || prefix[0] != s[0] {
				return false
			}
		} else if !equalFoldRune(ra, rb) {
			return false
		}
		prefix, s = prefix[wa:], s[wb:]
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func equalFoldRune(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}
