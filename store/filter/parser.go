package filter

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The grammar, one token of lookahead:
//
//	query   = [ or ] [ "sort" "by" key { "," key } ] [ "skip" int ] [ "limit" ( int | "none" ) ]
//	or      = and { "or" and }
//	and     = unary { "and" unary }
//	unary   = "not" unary | "(" or ")" | "isEmpty" "(" field ")" | "true" | "false" | operand cmp
//	operand = field | ( "anyOf" | "allOf" | "count" ) "(" field ")"
//	cmp     = ( "=" | "!=" | "<" | "<=" | ">" | ">=" ) value
//	        | [ "not" ] ( "contains" | "icontains" ) value
//	        | [ "not" ] "in" "[" [ value { "," value } ] "]"
//	        | [ "not" ] "between" value "and" value
//	key     = field [ "asc" | "desc" ]
//
// Recursion only happens through "(", "not" and functions, each of which
// counts against MaxDepth before recursing, so the Go stack stays small
// whatever the input.

type parser struct {
	lx    lexer
	tok   token
	prev  token
	depth int
}

func parse(src string) (*ast, *Error) {
	if len(src) > MaxQueryLen {
		return nil, errorf(MaxQueryLen, "query is %d bytes long, at most %d are allowed", len(src), MaxQueryLen)
	}
	p := &parser{lx: lexer{src: src}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	a := &ast{}
	if p.tok.kind != tEOF && !p.isKeyword("sort", "skip", "limit") {
		e, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		a.expr = e
	}
	if err := p.parseClauses(a); err != nil {
		return nil, err
	}
	return a, nil
}

func (p *parser) advance() *Error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.prev, p.tok = p.tok, t
	return nil
}

func (p *parser) isKeyword(words ...string) bool {
	if p.tok.kind != tKeyword {
		return false
	}
	for _, w := range words {
		if p.tok.text == w {
			return true
		}
	}
	return false
}

// fail reports that the current token is not what was expected.
func (p *parser) fail(expected string) *Error {
	return errorf(p.tok.pos, "expected %s, found %s", expected, p.tok.describe())
}

// after names the previous token for "expected X after Y" messages.
func (p *parser) after() string {
	if p.prev.kind == tFunc {
		return fmt.Sprintf("%q", p.prev.text+"(")
	}
	return fmt.Sprintf("%q", p.prev.text)
}

// enter accounts for one level of nesting starting at pos.
func (p *parser) enter(pos int) *Error {
	if p.depth >= MaxDepth {
		return errorf(pos, "query nested too deeply: at most %d levels of parentheses, \"not\" and functions", MaxDepth)
	}
	p.depth++
	return nil
}

func (p *parser) parseOr() (node, *Error) {
	return p.parseChain(true)
}

// parseChain parses a chain of "or" (or of "and") into one flat node, so that
// a long chain costs neither recursion nor nested closures.
func (p *parser) parseChain(or bool) (node, *Error) {
	sub, word := p.parseChainAnd, "or"
	if !or {
		sub, word = p.parseUnary, "and"
	}
	first, err := sub()
	if err != nil || !p.isKeyword(word) {
		return first, err
	}
	ln := &logicNode{or: or}
	ln.add(first)
	for p.isKeyword(word) {
		if err := p.advance(); err != nil {
			return nil, err
		}
		k, err := sub()
		if err != nil {
			return nil, err
		}
		ln.add(k)
	}
	return ln, nil
}

func (p *parser) parseChainAnd() (node, *Error) { return p.parseChain(false) }

// add appends k, splicing in a parenthesized chain of the same kind.
func (n *logicNode) add(k node) {
	if l, ok := k.(*logicNode); ok && l.or == n.or {
		n.kids = append(n.kids, l.kids...)
		return
	}
	n.kids = append(n.kids, k)
}

func (p *parser) parseUnary() (node, *Error) {
	start := p.tok
	switch {
	case p.isKeyword("not"):
		if err := p.enter(start.pos); err != nil {
			return nil, err
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		p.depth--
		return &notNode{pos: start.pos, x: x}, nil
	case start.kind == tLParen:
		if err := p.enter(start.pos); err != nil {
			return nil, err
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, p.fail(fmt.Sprintf(`"and", "or" or ")" to close the "(" at position %d`, start.pos))
		}
		p.depth--
		return x, p.advance()
	case p.isKeyword("true", "false"):
		return &constNode{pos: start.pos, value: start.text == "true"}, p.advance()
	case start.kind == tFunc:
		fn, ref, err := p.parseCall()
		if err != nil {
			return nil, err
		}
		if fn == fnIsEmpty {
			return &isEmptyNode{pos: start.pos, field: ref}, nil
		}
		return p.parseCmp(&cmpNode{fn: fn, fnPos: start.pos, field: ref})
	case start.kind == tIdent:
		if err := p.advance(); err != nil {
			return nil, err
		}
		return p.parseCmp(&cmpNode{field: fieldRef{name: start.text, pos: start.pos}})
	}
	what := `a condition (a field, "(", "not", isEmpty(...), true or false)`
	if p.prev.kind != tEOF {
		what += " after " + p.after()
	}
	return nil, p.fail(what)
}

// parseCall parses name(field) for anyOf, allOf, count and isEmpty.
func (p *parser) parseCall() (funcKind, fieldRef, *Error) {
	var fn funcKind
	switch p.tok.text {
	case "anyof":
		fn = fnAnyOf
	case "allof":
		fn = fnAllOf
	case "count":
		fn = fnCount
	default:
		fn = fnIsEmpty
	}
	if err := p.enter(p.tok.pos); err != nil {
		return 0, fieldRef{}, err
	}
	p.depth--
	// The lexer only emits tFunc when "(" follows, so this skips both.
	if err := p.advance(); err != nil {
		return 0, fieldRef{}, err
	}
	if err := p.advance(); err != nil {
		return 0, fieldRef{}, err
	}
	if p.tok.kind != tIdent {
		return 0, fieldRef{}, p.fail(fmt.Sprintf("a list field name inside %s(...)", funcNames[fn]))
	}
	ref := fieldRef{name: p.tok.text, pos: p.tok.pos}
	if err := p.advance(); err != nil {
		return 0, fieldRef{}, err
	}
	if p.tok.kind != tRParen {
		return 0, fieldRef{}, p.fail(fmt.Sprintf(`")" after %s(%s`, funcNames[fn], ref.name))
	}
	return fn, ref, p.advance()
}

var tokOps = map[string]struct {
	op  cmpOp
	neg bool
}{"=": {opEq, false}, "!=": {opEq, true}, "<": {opLt, false}, "<=": {opLe, false}, ">": {opGt, false}, ">=": {opGe, false}}

func (p *parser) parseCmp(n *cmpNode) (node, *Error) {
	n.opPos = p.tok.pos
	if p.tok.kind == tOp {
		o := tokOps[p.tok.text]
		n.op, n.neg = o.op, o.neg
		return p.parseValues(n)
	}
	if p.isKeyword("not") {
		n.neg = true
		if err := p.advance(); err != nil {
			return nil, err
		}
		if !p.isKeyword("contains", "icontains", "in", "between") {
			return nil, p.fail(`"contains", "icontains", "in" or "between" after "not"`)
		}
	}
	switch {
	case p.isKeyword("contains"):
		n.op = opContains
	case p.isKeyword("icontains"):
		n.op = opIContains
	case p.isKeyword("in"):
		n.op = opIn
	case p.isKeyword("between"):
		n.op = opBetween
	default:
		subject := n.field.name
		if n.fn != fnNone {
			subject = funcNames[n.fn] + "(" + subject + ")"
		}
		return nil, p.fail(fmt.Sprintf("an operator (=, !=, <, <=, >, >=, contains, icontains, in, between) after %q", subject))
	}
	return p.parseValues(n)
}

// parseValues parses what follows the operator, which is the current token.
func (p *parser) parseValues(n *cmpNode) (node, *Error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	switch n.op {
	case opIn:
		return n, p.parseList(n)
	case opBetween:
		lo, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		if !p.isKeyword("and") {
			return nil, p.fail(`"and" between the bounds of "between"`)
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		hi, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		n.vals = []literal{lo, hi}
		return n, nil
	}
	v, err := p.parseValue()
	if err != nil {
		return nil, err
	}
	n.vals = []literal{v}
	return n, nil
}

func (p *parser) parseList(n *cmpNode) *Error {
	if p.tok.kind != tLBrack {
		return p.fail(`"[" to start the list after "in"`)
	}
	if err := p.advance(); err != nil {
		return err
	}
	if p.tok.kind == tRBrack {
		n.vals = []literal{}
		return p.advance()
	}
	for {
		if len(n.vals) == MaxListItems {
			return errorf(p.tok.pos, "list has too many values: at most %d are allowed", MaxListItems)
		}
		v, err := p.parseValue()
		if err != nil {
			return err
		}
		n.vals = append(n.vals, v)
		switch p.tok.kind {
		case tRBrack:
			return p.advance()
		case tComma:
			if err := p.advance(); err != nil {
				return err
			}
		default:
			return p.fail(`"," or "]" in the list`)
		}
	}
}

// parseValue converts the current token into a literal and moves past it.
func (p *parser) parseValue() (literal, *Error) {
	t := p.tok
	l := literal{pos: t.pos}
	switch {
	case t.kind == tString:
		l.kind, l.s = litString, t.text
	case t.kind == tNumber:
		if strings.Contains(t.text, ".") {
			f, err := strconv.ParseFloat(t.text, 64)
			if err != nil || math.IsInf(f, 0) {
				return l, errorf(t.pos, "number %s is out of range", t.text)
			}
			l.kind, l.f = litFloat, f
		} else {
			i, err := strconv.ParseInt(t.text, 10, 64)
			if err != nil {
				return l, errorf(t.pos, "integer %s is out of range (at most 19 digits)", t.text)
			}
			l.kind, l.i = litInt, i
		}
	case t.kind == tDatetime:
		tm, err := time.Parse(time.RFC3339Nano, t.text)
		if err != nil {
			return l, errorf(t.vpos, "invalid datetime %q: expected RFC 3339, like 2026-01-02T15:04:05Z", t.text)
		}
		l.kind, l.t = litTime, tm
	case p.isKeyword("true", "false"):
		l.kind, l.b = litBool, t.text == "true"
	case p.isKeyword("null"):
		l.kind = litNull
	default:
		return l, p.fail("a value after " + p.after())
	}
	return l, p.advance()
}
