package api

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"edgectl/policy"
	"edgectl/store"
	"edgectl/store/filter"
)

// List limits (conventions §4).
const (
	defaultLimit = 10
	maxLimit     = 500
)

// listReq is a parsed list request: paging, filter, role filter.
type listReq struct {
	limit, offset int
	all           bool // `limit none` in the filter
	q             *filter.Query
	roles         *policy.Selector
	fields        *filter.Schema
}

// roled is a record with role attributes.
type roled interface{ Roles() []string }

// parseList reads limit, offset, filter and (for LQ+ lists) roleFilter and roleSemantic.
func (c *call) parseList(fields *filter.Schema, roleFilter bool) (*listReq, error) {
	qs := c.r.URL.Query()
	lr := &listReq{limit: defaultLimit, fields: fields}
	q, err := filter.Compile(qs.Get("filter"), fields)
	if err != nil {
		return nil, badQuery("filter", err)
	}
	lr.q = q
	if n, ok := q.Skip(); ok {
		lr.offset = n
	}
	if n, ok, none := q.Limit(); ok {
		if none {
			lr.all = true
		} else if n > maxLimit {
			return nil, badQuery("filter", fmt.Errorf("limit %d is larger than the maximum %d", n, maxLimit))
		} else {
			lr.limit = n
		}
	}
	if v := qs.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, badQuery("limit", errors.New("must be a whole number from 0 to 500"))
		}
		if n > maxLimit {
			return nil, badQuery("limit", fmt.Errorf("%d is larger than the maximum %d", n, maxLimit))
		}
		lr.limit, lr.all = n, false
	}
	if v := qs.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, badQuery("offset", errors.New("must be a whole number of at least 0"))
		}
		lr.offset = n
	}
	if roles := qs["roleFilter"]; len(roles) > 0 || qs.Get("roleSemantic") != "" {
		if !roleFilter {
			return nil, badQuery("roleFilter", errors.New("this list does not take a role filter"))
		}
		sel, err := policy.ParseSelector(roles, qs.Get("roleSemantic"))
		if err != nil {
			return nil, badQuery("roleFilter", err)
		}
		if len(roles) > 0 {
			lr.roles = sel
		}
	}
	return lr, nil
}

// match reports whether r passes the filter and the role filter.
func (lr *listReq) match(r store.Record) bool {
	if lr.roles != nil {
		rr, ok := r.(roled)
		if !ok || !lr.roles.Matches(r.GetID(), rr.Roles()) {
			return false
		}
	}
	return lr.q.Match(r)
}

// source iterates the candidate records of a list in their natural order.
type source func(fn func(store.Record) bool)

// kindSource lists every record of k by name then id (or creation then id).
func kindSource(tx *store.Tx, k *store.Kind) source {
	return func(fn func(store.Record) bool) {
		for _, r := range tx.Sorted(k) {
			if !fn(r) {
				return
			}
		}
	}
}

// page runs a list: filters, sorts and pages the records of src. total is
// the number of records in src when known (-1 otherwise); with no filter and
// no sort it lets the page stop early instead of scanning everything.
func (c *call) page(lr *listReq, src source, total int, view func(store.Record) any) error {
	data := []any{}
	count := 0
	want := func() bool { return lr.all || len(data) < lr.limit }
	if !lr.q.HasCondition() && !lr.q.HasSort() && lr.roles == nil && total >= 0 {
		count = total
		skipped := 0
		src(func(r store.Record) bool {
			if skipped < lr.offset {
				skipped++
				return true
			}
			if !want() {
				return false
			}
			data = append(data, view(r))
			return true
		})
	} else {
		var matches []store.Record
		src(func(r store.Record) bool {
			if lr.match(r) {
				matches = append(matches, r)
			}
			return true
		})
		if lr.q.HasSort() {
			sort.SliceStable(matches, func(i, j int) bool { return lr.q.Compare(matches[i], matches[j]) < 0 })
		}
		count = len(matches)
		for i := lr.offset; i < len(matches) && want(); i++ {
			data = append(data, view(matches[i]))
		}
	}
	limit := lr.limit
	if lr.all {
		limit = count
	}
	c.okMeta(data, map[string]any{
		"pagination":       map[string]any{"limit": limit, "offset": lr.offset, "totalCount": count},
		"filterableFields": lr.fields.Names(),
	})
	return nil
}

// listKind serves the plain list of a kind.
func (c *call) listKind(k *store.Kind, roleFilter bool, view func(store.Record) any) error {
	lr, err := c.parseList(k.Fields, roleFilter)
	if err != nil {
		return err
	}
	return c.page(lr, kindSource(c.tx, k), c.tx.Count(k), view)
}
