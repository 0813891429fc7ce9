package filter

import (
	"math"
	"strconv"
	"strings"
)

// The clauses after the condition: sort by, skip and limit, each optional,
// each at most once, in that order.

func (p *parser) parseClauses(a *ast) *Error {
	if p.isKeyword("sort") {
		if err := p.advance(); err != nil {
			return err
		}
		if !p.isKeyword("by") {
			return p.fail(`"by" after "sort"`)
		}
		for {
			if err := p.advance(); err != nil {
				return err
			}
			if p.tok.kind != tIdent {
				return p.fail("a field name to sort by")
			}
			k := sortKey{field: fieldRef{name: p.tok.text, pos: p.tok.pos}}
			if err := p.advance(); err != nil {
				return err
			}
			if p.tok.kind == tIdent && (strings.EqualFold(p.tok.text, "asc") || strings.EqualFold(p.tok.text, "desc")) {
				k.desc = strings.EqualFold(p.tok.text, "desc")
				if err := p.advance(); err != nil {
					return err
				}
			}
			a.sort = append(a.sort, k)
			if p.tok.kind != tComma {
				break
			}
		}
	}
	if p.isKeyword("skip") {
		n, err := p.parseCount()
		if err != nil {
			return err
		}
		a.hasSkip, a.skip = true, n
	}
	if p.isKeyword("limit") {
		if err := p.advance(); err != nil {
			return err
		}
		if p.tok.kind == tIdent && strings.EqualFold(p.tok.text, "none") {
			a.hasLimit, a.noLimit = true, true
			if err := p.advance(); err != nil {
				return err
			}
		} else {
			n, err := p.countValue("limit")
			if err != nil {
				return err
			}
			a.hasLimit, a.limit = true, n
		}
	}
	if p.tok.kind == tEOF {
		return nil
	}
	return p.trailing(a)
}

// trailing explains why the query did not end where it should have.
func (p *parser) trailing(a *ast) *Error {
	switch {
	case p.tok.kind == tRParen:
		return errorf(p.tok.pos, `unexpected ")" without a matching "("`)
	case p.isKeyword("sort", "skip", "limit"):
		return p.fail(`end of query ("sort by", "skip" and "limit" come at most once each, in that order)`)
	case a.hasLimit:
		return p.fail("end of query")
	case a.hasSkip:
		return p.fail(`"limit" or end of query`)
	case len(a.sort) > 0:
		return p.fail(`",", "asc", "desc", "skip", "limit" or end of query`)
	case a.expr != nil:
		return p.fail(`"and", "or", "sort by", "skip", "limit" or end of query`)
	}
	return p.fail("a condition, \"sort by\", \"skip\", \"limit\" or end of query")
}

// parseCount parses the number after skip.
func (p *parser) parseCount() (int, *Error) {
	if err := p.advance(); err != nil {
		return 0, err
	}
	return p.countValue("skip")
}

func (p *parser) countValue(clause string) (int, *Error) {
	if p.tok.kind != tNumber {
		if clause == "limit" {
			return 0, p.fail(`a number or "none" after "limit"`)
		}
		return 0, p.fail(`a number after "skip"`)
	}
	n, err := strconv.ParseInt(p.tok.text, 10, 32)
	if err != nil || n < 0 {
		return 0, errorf(p.tok.pos, "%s must be a whole number from 0 to %d, found %s", clause, math.MaxInt32, p.tok.text)
	}
	return int(n), p.advance()
}
