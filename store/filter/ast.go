package filter

import (
	"strconv"
	"strings"
	"time"
)

// The AST is the parser's output and the compiler's input. It is also printed
// back as canonical text (Query.Expr), so that tests can check precedence and
// a compiled query can be logged unambiguously.

type cmpOp uint8

const (
	opEq cmpOp = iota
	opLt
	opLe
	opGt
	opGe
	opContains
	opIContains
	opIn
	opBetween
)

var opNames = [...]string{
	opEq: "=", opLt: "<", opLe: "<=", opGt: ">", opGe: ">=",
	opContains: "contains", opIContains: "icontains", opIn: "in", opBetween: "between",
}

// ordering reports whether the operator needs ordered values.
func (o cmpOp) ordering() bool { return o >= opLt && o <= opGe || o == opBetween }

// name is the operator as written, with its negation.
func (o cmpOp) name(neg bool) string {
	switch {
	case !neg:
		return opNames[o]
	case o == opEq:
		return "!="
	}
	return "not " + opNames[o]
}

type funcKind uint8

const (
	fnNone funcKind = iota
	fnAnyOf
	fnAllOf
	fnCount
	fnIsEmpty
)

var funcNames = [...]string{fnAnyOf: "anyOf", fnAllOf: "allOf", fnCount: "count", fnIsEmpty: "isEmpty"}

type litKind uint8

const (
	litString litKind = iota
	litInt
	litFloat
	litBool
	litNull
	litTime
)

// literal is one value of a comparison, already converted from its text.
type literal struct {
	kind litKind
	pos  int
	s    string
	i    int64
	f    float64
	b    bool
	t    time.Time
}

func (l literal) write(b *strings.Builder) {
	switch l.kind {
	case litString:
		b.WriteString(quote(l.s))
	case litInt:
		b.WriteString(strconv.FormatInt(l.i, 10))
	case litFloat:
		s := strconv.FormatFloat(l.f, 'f', -1, 64)
		b.WriteString(s)
		// Keep the literal a decimal when printed back, so that reparsing
		// the canonical text compares the same way.
		if !strings.Contains(s, ".") {
			b.WriteString(".0")
		}
	case litBool:
		b.WriteString(strconv.FormatBool(l.b))
	case litNull:
		b.WriteString("null")
	case litTime:
		b.WriteString("datetime(" + l.t.Format(time.RFC3339Nano) + ")")
	}
}

// describe names the literal for type errors.
func (l literal) describe() string {
	var b strings.Builder
	switch l.kind {
	case litString:
		b.WriteString("string ")
	case litInt, litFloat:
		b.WriteString("number ")
	case litBool:
		b.WriteString("bool ")
	}
	l.write(&b)
	return b.String()
}

// quote writes s as a string literal of the language, using only the escapes
// the lexer understands.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fieldRef is a field name as written, with its position for errors.
type fieldRef struct {
	name string
	pos  int
}

// node is a boolean expression.
type node interface {
	// write prints the node; parent is the logic node it sits in (or nil),
	// to decide whether parentheses are needed.
	write(b *strings.Builder, parent node)
}

// logicNode is a flattened chain of "and" or of "or".
type logicNode struct {
	or   bool
	kids []node
}

type notNode struct {
	pos int
	x   node
}

// cmpNode is a comparison: a field, optionally through anyOf/allOf/count,
// an operator and its values (one, two for between, any number for in).
type cmpNode struct {
	fn    funcKind
	fnPos int
	field fieldRef
	op    cmpOp
	opPos int
	neg   bool
	vals  []literal
}

type isEmptyNode struct {
	pos   int
	field fieldRef
}

// constNode is "true" or "false" as a whole condition (OpenZiti's clients
// send "true limit 10" to list everything).
type constNode struct {
	pos   int
	value bool
}

func (n *constNode) write(b *strings.Builder, _ node) { b.WriteString(strconv.FormatBool(n.value)) }

func (n *logicNode) write(b *strings.Builder, parent node) {
	// "or" binds looser than "and" and "not"; "and" only looser than "not".
	paren := false
	switch p := parent.(type) {
	case *notNode:
		paren = true
	case *logicNode:
		paren = n.or && !p.or
	}
	if paren {
		b.WriteByte('(')
	}
	sep := " and "
	if n.or {
		sep = " or "
	}
	for i, k := range n.kids {
		if i > 0 {
			b.WriteString(sep)
		}
		k.write(b, n)
	}
	if paren {
		b.WriteByte(')')
	}
}

func (n *notNode) write(b *strings.Builder, _ node) {
	b.WriteString("not ")
	n.x.write(b, n)
}

func (n *cmpNode) write(b *strings.Builder, _ node) {
	if n.fn != fnNone {
		b.WriteString(funcNames[n.fn] + "(" + n.field.name + ")")
	} else {
		b.WriteString(n.field.name)
	}
	b.WriteString(" " + n.op.name(n.neg) + " ")
	switch n.op {
	case opIn:
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			v.write(b)
		}
		b.WriteByte(']')
	case opBetween:
		n.vals[0].write(b)
		b.WriteString(" and ")
		n.vals[1].write(b)
	default:
		n.vals[0].write(b)
	}
}

func (n *isEmptyNode) write(b *strings.Builder, _ node) {
	b.WriteString("isEmpty(" + n.field.name + ")")
}

type sortKey struct {
	field fieldRef
	desc  bool
}

// ast is a whole parsed query; expr is nil when the query has no condition.
type ast struct {
	expr     node
	sort     []sortKey
	hasSkip  bool
	skip     int
	hasLimit bool
	limit    int
	noLimit  bool
}

func (a *ast) String() string {
	var b strings.Builder
	if a.expr != nil {
		a.expr.write(&b, nil)
	}
	clause := func(s string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	if len(a.sort) > 0 {
		clause("sort by ")
		for i, k := range a.sort {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k.field.name)
			if k.desc {
				b.WriteString(" desc")
			}
		}
	}
	if a.hasSkip {
		clause("skip " + strconv.Itoa(a.skip))
	}
	switch {
	case a.noLimit:
		clause("limit none")
	case a.hasLimit:
		clause("limit " + strconv.Itoa(a.limit))
	}
	return b.String()
}
