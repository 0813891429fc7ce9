package policy

import (
	"slices"
	"strings"
	"sync"
)

// Sorted id sets. The store keeps the entities a policy selects as a sorted
// slice; what an identity reaches through several policies is the union of
// those slices, and a session's edge routers are the part of that union that
// the service's sets hold. Merging sorted slices needs no hashing and no
// map, and the answer comes out sorted.

// unionSorted merges sorted sets into one sorted set without duplicates.
// The inputs are not modified; the result is new, or one of the inputs when
// only one is non-empty (so the caller must not modify it either).
func unionSorted(sets [][]string) []string {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	u, shared := sc.union(sets)
	if shared || len(u) == 0 {
		return u
	}
	return slices.Clone(u)
}

// scratch holds the two buffers a union merges between, reused through
// scratchPool: a session create merges a few hundred router ids, and
// allocating each intermediate merge was most of what it allocated.
type scratch struct {
	a, b []string
	keep []bool
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

// union merges sets into sc's buffers. The result is valid until sc is used
// again; shared says it is one of the inputs (one non-empty set).
func (sc *scratch) union(sets [][]string) (u []string, shared bool) {
	var first []string
	n := 0
	for _, s := range sets {
		if len(s) > 0 {
			if n == 0 {
				first = s
			}
			n++
		}
	}
	if n <= 1 {
		return first, n == 1
	}
	cur, spare := sc.a[:0], sc.b[:0]
	started := false
	for _, s := range sets {
		if len(s) == 0 {
			continue
		}
		if !started {
			cur, started = append(cur, s...), true
			continue
		}
		spare = mergeInto(spare[:0], cur, s)
		cur, spare = spare, cur
	}
	sc.a, sc.b = cur, spare
	return cur, false
}

// mergeInto appends the sorted union of a and b (both sorted) to dst.
func mergeInto(dst, a, b []string) []string {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c < 0:
			dst = append(dst, a[i])
			i++
		case c > 0:
			dst = append(dst, b[j])
			j++
		default:
			dst = append(dst, a[i])
			i++
			j++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

// markCommon sets keep[i] for every a[i] that is also in b (both sorted).
// A b much longer than a is searched rather than walked.
func markCommon(a, b []string, keep []bool) {
	if len(a)*8 < len(b) {
		for i, x := range a {
			if _, ok := slices.BinarySearch(b, x); ok {
				keep[i] = true
			}
		}
		return
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			keep[i] = true
			i++
			j++
		}
	}
}
