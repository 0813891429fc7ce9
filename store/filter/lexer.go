package filter

import (
	"fmt"
	"strings"
)

type tokKind uint8

const (
	tEOF      tokKind = iota
	tIdent            // field name, possibly dotted; text as written
	tKeyword          // reserved word; text lowercased
	tFunc             // anyof/allof/isempty/count directly followed by "("; text lowercased
	tString           // text is the decoded value
	tNumber           // text as written
	tDatetime         // text is what stood between the parentheses
	tOp               // = != < <= > >=
	tLParen
	tRParen
	tLBrack
	tRBrack
	tComma
)

// keywords are reserved so that a bare word is never both a field and an
// operator; that keeps the grammar LL(1). Dotted names are never keywords.
var keywords = map[string]bool{
	"and": true, "or": true, "not": true, "in": true, "contains": true,
	"icontains": true, "between": true, "true": true, "false": true,
	"null": true, "sort": true, "by": true, "skip": true, "limit": true,
}

// funcs are only functions when "(" follows, so they stay usable as field
// names; datetime is lexed as a literal of its own.
var funcs = map[string]bool{"anyof": true, "allof": true, "isempty": true, "count": true}

type token struct {
	kind tokKind
	pos  int
	text string
	// vpos is where the value of a datetime(...) starts, for errors about it.
	vpos int
}

// describe names the token for "found ..." in error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of query"
	case tIdent:
		return fmt.Sprintf("name %q", t.text)
	case tKeyword:
		return fmt.Sprintf("keyword %q", t.text)
	case tFunc:
		return fmt.Sprintf("%q", t.text+"(")
	case tString:
		return fmt.Sprintf("string %s", quote(t.text))
	case tNumber:
		return "number " + t.text
	case tDatetime:
		return "datetime(" + t.text + ")"
	}
	return fmt.Sprintf("%q", t.text)
}

// lexer produces tokens on demand so that the first error reported is the
// leftmost one, whether it is lexical or syntactic.
type lexer struct {
	src string
	pos int
}

func isSpace(c byte) bool      { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }

func (l *lexer) skipSpace() {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
}

func (l *lexer) next() (token, *Error) {
	l.skipSpace()
	start := l.pos
	if start >= len(l.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := l.src[start]
	single := func(k tokKind) (token, *Error) {
		l.pos++
		return token{kind: k, pos: start, text: l.src[start:l.pos]}, nil
	}
	switch {
	case c == '(':
		return single(tLParen)
	case c == ')':
		return single(tRParen)
	case c == '[':
		return single(tLBrack)
	case c == ']':
		return single(tRBrack)
	case c == ',':
		return single(tComma)
	case c == '=':
		return single(tOp)
	case c == '<' || c == '>':
		l.pos++
		if l.pos < len(l.src) && l.src[l.pos] == '=' {
			l.pos++
		}
		return token{kind: tOp, pos: start, text: l.src[start:l.pos]}, nil
	case c == '!':
		if start+1 < len(l.src) && l.src[start+1] == '=' {
			l.pos += 2
			return token{kind: tOp, pos: start, text: "!="}, nil
		}
		return token{}, errorf(start, `unexpected "!": use "!=" or "not"`)
	case c == '"':
		return l.lexString()
	case isDigit(c) || c == '-':
		return l.lexNumber()
	case isIdentStart(c):
		return l.lexWord()
	}
	return token{}, errorf(start, "unexpected character %s", quoteChar(l.src[start:]))
}

func (l *lexer) lexString() (token, *Error) {
	start := l.pos
	i := start + 1
	// Fast path: no escapes means the value is a substring of the query.
	for i < len(l.src) && l.src[i] != '"' && l.src[i] != '\\' {
		i++
	}
	if i < len(l.src) && l.src[i] == '"' {
		l.pos = i + 1
		return token{kind: tString, pos: start, text: l.src[start+1 : i]}, nil
	}
	var b strings.Builder
	b.WriteString(l.src[start+1 : i])
	for i < len(l.src) {
		c := l.src[i]
		switch c {
		case '"':
			l.pos = i + 1
			return token{kind: tString, pos: start, text: b.String()}, nil
		case '\\':
			if i+1 >= len(l.src) {
				return token{}, errorf(start, "unterminated string: missing closing quote")
			}
			switch l.src[i+1] {
			case '"':
				b.WriteByte('"')
			case '\\':
				b.WriteByte('\\')
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				esc := `\` + strings.Trim(quoteChar(l.src[i+1:]), `"`)
				return token{}, errorf(i, `invalid escape %s in string: expected \", \\, \n or \t`, esc)
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return token{}, errorf(start, "unterminated string: missing closing quote")
}

// lexNumber accepts -?digits(.digits)?; the parser converts the text so that
// range errors point at the whole number.
func (l *lexer) lexNumber() (token, *Error) {
	start := l.pos
	i := start
	if l.src[i] == '-' {
		i++
	}
	if i >= len(l.src) || !isDigit(l.src[i]) {
		return token{}, errorf(start, `expected a digit after "-"`)
	}
	for i < len(l.src) && isDigit(l.src[i]) {
		i++
	}
	if i < len(l.src) && l.src[i] == '.' {
		i++
		if i >= len(l.src) || !isDigit(l.src[i]) {
			return token{}, errorf(i, "expected a digit after the decimal point in %q", l.src[start:i])
		}
		for i < len(l.src) && isDigit(l.src[i]) {
			i++
		}
	}
	// "12abc" or "1.2.3" is one malformed token, not a number and a name.
	if i < len(l.src) && (isIdentPart(l.src[i]) || l.src[i] == '.') {
		return token{}, errorf(i, "unexpected %s after number %q", quoteChar(l.src[i:]), l.src[start:i])
	}
	l.pos = i
	return token{kind: tNumber, pos: start, text: l.src[start:i]}, nil
}

func (l *lexer) lexWord() (token, *Error) {
	start := l.pos
	i := start
	dotted := false
	for {
		for i < len(l.src) && isIdentPart(l.src[i]) {
			i++
		}
		if i >= len(l.src) || l.src[i] != '.' {
			break
		}
		dotted = true
		i++
		if i >= len(l.src) || !isIdentStart(l.src[i]) {
			return token{}, errorf(i, "expected a name after %q", l.src[start:i])
		}
	}
	l.pos = i
	text := l.src[start:i]
	if dotted {
		return token{kind: tIdent, pos: start, text: text}, nil
	}
	lower := strings.ToLower(text)
	if keywords[lower] {
		return token{kind: tKeyword, pos: start, text: lower}, nil
	}
	// Peek past spaces: "anyOf (x)" is a call, "count = 3" is a field.
	j := i
	for j < len(l.src) && isSpace(l.src[j]) {
		j++
	}
	if j >= len(l.src) || l.src[j] != '(' {
		return token{kind: tIdent, pos: start, text: text}, nil
	}
	if lower == "datetime" {
		return l.lexDatetime(start, j)
	}
	if funcs[lower] {
		return token{kind: tFunc, pos: start, text: lower}, nil
	}
	return token{kind: tIdent, pos: start, text: text}, nil
}

// lexDatetime reads datetime(...) as one token because an RFC 3339 value is
// not made of this language's tokens; the parser validates the text.
func (l *lexer) lexDatetime(start, open int) (token, *Error) {
	end := strings.IndexByte(l.src[open:], ')')
	if end < 0 {
		return token{}, errorf(start, `unterminated datetime(: missing ")"`)
	}
	end += open
	inner := l.src[open+1 : end]
	trimmed := strings.Trim(inner, " \t\n\r")
	vpos := open + 1
	for vpos < end && isSpace(l.src[vpos]) {
		vpos++
	}
	l.pos = end + 1
	return token{kind: tDatetime, pos: start, text: trimmed, vpos: vpos}, nil
}

// quoteChar quotes the first character of s (a whole UTF-8 sequence).
func quoteChar(s string) string {
	for _, r := range s {
		return fmt.Sprintf("%q", string(r))
	}
	return `""`
}
