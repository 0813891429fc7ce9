package api

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

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
	// matches is the number of records the list matches when an index gave
	// it before the scan (kindList), -1 otherwise.
	matches int
}

// roled is a record with role attributes.
type roled interface{ Roles() []string }

// parseList reads limit, offset, filter and (for LQ+ lists) roleFilter and roleSemantic.
func (c *call) parseList(fields *filter.Schema, roleFilter bool) (*listReq, error) {
	qs := c.r.URL.Query()
	lr := &listReq{limit: defaultLimit, fields: fields, matches: -1}
	// In the request's read transaction, where the fields read through a
	// reference ("service.name") find the records they read.
	q, err := filter.CompileIn(qs.Get("filter"), fields, c.tx)
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
		} else if n > maxLimit && qs.Get("limit") == "" { // the query parameter wins over it
			return nil, badQuery("filter", fmt.Errorf("limit %d is larger than the maximum %d", n, maxLimit))
		} else {
			lr.limit = n
		}
	}
	if v := qs.Get("limit"); v != "" {
		// As OpenZiti's clients send it: -1 is no limit (the filter's
		// `limit none`), a limit above the maximum is served as the maximum,
		// which meta.pagination.limit shows (docs/api.md).
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n < -1:
			return nil, badQuery("limit", errors.New("must be a whole number from 0 to 500, or -1 for no limit"))
		case n == -1:
			lr.all = true
		default:
			lr.limit, lr.all = min(n, maxLimit), false
		}
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
		if v := qs.Get("roleSemantic"); v != "" && v != policy.AllOf && v != policy.AnyOf {
			return nil, badQuery("roleSemantic", fmt.Errorf("must be AllOf or AnyOf, found %q", v))
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
// A page that stops early reads only up to its end (store.Tx.EachSorted).
func kindSource(tx *store.Tx, k *store.Kind) source {
	return func(fn func(store.Record) bool) { tx.EachSorted(k, fn) }
}

// namedSource lists the records of a named kind in list order whose name
// meets need (what every match of the filter has in its name,
// filter.Query.Requires). It reads the packed name column, looking for the
// substring the need implies first, and touches only the records that pass;
// page then matches them against the whole filter.
func namedSource(tx *store.Tx, k *store.Kind, need *filter.Need) source {
	return func(fn func(store.Record) bool) {
		recs, names := tx.SortedNames(k)
		names.EachContaining(need.Substring, func(i int) bool {
			return !need.Test(names.At(i)) || fn(recs.At(i))
		})
	}
}

// rolesSource lists, in list order, the records of the named kind k that
// have one of the role attributes attrs (what every match of the filter has,
// filter.Query.RequiresAnyOf). It reads them from the role attribute index
// and sorts them by name, the list order of a named kind (names are unique),
// instead of matching the filter against every record of the kind. k must
// have the index (Kind.HasRoleIndex).
func rolesSource(tx *store.Tx, k *store.Kind, attrs []string) source {
	return func(fn func(store.Record) bool) {
		var recs []store.Record
		seen := map[string]struct{}{} // a record with two of the attributes comes once
		for _, a := range attrs {
			tx.EachWithRole(k, a, func(r store.Record) bool {
				if len(attrs) > 1 {
					if _, dup := seen[r.GetID()]; dup {
						return true
					}
					seen[r.GetID()] = struct{}{}
				}
				recs = append(recs, r)
				return true
			})
		}
		slices.SortFunc(recs, func(a, b store.Record) int { return strings.Compare(a.RecordName(), b.RecordName()) })
		for _, r := range recs {
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
	recs, count, limit := lr.pick(src, total)
	data := make([]any, 0, len(recs))
	for _, r := range recs {
		data = append(data, view(r))
	}
	c.okMeta(data, map[string]any{
		"pagination":       map[string]any{"limit": limit, "offset": lr.offset, "totalCount": count},
		"filterableFields": lr.fields.Names(),
	})
	return nil
}

// pick selects the records of one page of src (see page) and returns them
// with the number of matching records and the limit the answer reports.
// When that number is known before the scan (no condition and total known,
// or lr.matches) and no sort reorders src, the scan stops once the page is
// full; otherwise it matches every record of src.
func (lr *listReq) pick(src source, total int) (recs []store.Record, count, limit int) {
	want := func() bool { return lr.all || len(recs) < lr.limit }
	count = lr.matches
	if !lr.q.HasCondition() && lr.roles == nil && total >= 0 {
		count = total
	}
	if count >= 0 && !lr.q.HasSort() {
		if n := count - lr.offset; n > 0 {
			if !lr.all {
				n = min(n, lr.limit)
			}
			recs = make([]store.Record, 0, n)
		}
		skipped := 0
		src(func(r store.Record) bool {
			if !lr.match(r) {
				return true
			}
			if skipped < lr.offset {
				skipped++
				return true
			}
			if !want() {
				return false
			}
			recs = append(recs, r)
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
			recs = append(recs, matches[i])
		}
	}
	limit = lr.limit
	if lr.all {
		limit = count
	}
	return recs, count, limit
}

// listKind serves the plain list of a kind.
func (c *call) listKind(k *store.Kind, roleFilter bool, view func(store.Record) any) error {
	lr, src, err := c.kindList(k, roleFilter)
	if err != nil {
		return err
	}
	return c.page(lr, src, c.tx.Count(k), view)
}

// kindList parses the list request of a kind and returns the source of its
// candidates: every record, or, when the filter constrains the name of a
// named kind, only the records whose name passes that test, or when it
// requires role attributes, the records the role index lists under them
// (unless the walk in list order is cheaper; then it also sets lr.matches).
func (c *call) kindList(k *store.Kind, roleFilter bool) (*listReq, source, error) {
	lr, err := c.parseList(k.Fields, roleFilter)
	if err != nil {
		return nil, nil, err
	}
	src := kindSource(c.tx, k)
	if k.Named {
		// The filter field "name" of a named kind reads RecordName, the
		// value the column holds, so a test of it may skip records unread.
		if need := lr.q.Requires("name"); need != nil {
			return lr, namedSource(c.tx, k, need), nil
		}
	}
	if attrs := lr.q.RequiresAnyOf("roleAttributes"); attrs != nil && k.Named && k.HasRoleIndex() {
		if v, ok := lr.q.IsAnyOf("roleAttributes"); ok && lr.roles == nil && !lr.q.HasSort() && !lr.all {
			// The matches are exactly the records the index lists under v, so
			// their number is its count. Walking the whole list in order
			// fills the page after about (offset+limit)·N/n records; reading
			// the n from the index costs sorting them by name. Walk when that
			// is the smaller.
			if n, all := c.tx.CountWithRole(k, v), c.tx.Count(k); n > 0 && (min(lr.offset, all)+lr.limit)*all < n*n {
				lr.matches = n
				return lr, src, nil
			}
		}
		src = rolesSource(c.tx, k, attrs)
	}
	return lr, src, nil
}
