package policy

import (
	"slices"
	"strings"
)

// Sorted id sets. The store keeps the entities a policy selects as a sorted
// slice; what an identity reaches through several policies is the union of
// those slices, and a session's edge routers are the part of that union that
// the service's sets hold. Merging sorted slices needs no hashing and no
// map, and the answer comes out sorted.

// unionSorted merges sorted sets into one sorted set without duplicates.
// The inputs are not modified; the result may be one of them when only one
// is non-empty.
func unionSorted(sets [][]string) []string {
	var nonEmpty [][]string
	for _, s := range sets {
		if len(s) > 0 {
			nonEmpty = append(nonEmpty, s)
		}
	}
	switch len(nonEmpty) {
	case 0:
		return nil
	case 1:
		return nonEmpty[0]
	}
	// Merge pairwise in rounds: each id is copied about log2(len(sets)) times.
	for len(nonEmpty) > 1 {
		next := nonEmpty[:0:0]
		for i := 0; i+1 < len(nonEmpty); i += 2 {
			next = append(next, merge2(nonEmpty[i], nonEmpty[i+1]))
		}
		if len(nonEmpty)%2 == 1 {
			next = append(next, nonEmpty[len(nonEmpty)-1])
		}
		nonEmpty = next
	}
	return nonEmpty[0]
}

// merge2 is the sorted union of two sorted sets.
func merge2(a, b []string) []string {
	out := make([]string, 0, max(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c < 0:
			out = append(out, a[i])
			i++
		case c > 0:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
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
