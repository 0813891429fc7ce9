package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func randomSet(r *rand.Rand) []string {
	seen := map[string]bool{}
	for range r.IntN(20) {
		seen[fmt.Sprintf("er-%02d", r.IntN(40))] = true
	}
	var out []string
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func TestSortedSets_UnionAndCommonEqualMapSets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var sets [][]string
		union := map[string]bool{}
		for range r.IntN(7) {
			s := randomSet(r)
			sets = append(sets, s)
			for _, x := range s {
				union[x] = true
			}
		}
		var want []string
		for x := range union {
			want = append(want, x)
		}
		sort.Strings(want)
		got := unionSorted(sets)
		if !slices.Equal(got, want) {
			t.Fatalf("union of %v = %v, want %v", sets, got, want)
		}
		other := randomSet(r)
		for _, long := range [][]string{other, append(slices.Clone(other), randomLong(r)...)} {
			slices.Sort(long)
			long = slices.Compact(long)
			keep := make([]bool, len(got))
			markCommon(got, long, keep)
			for i, x := range got {
				if _, in := slices.BinarySearch(long, x); keep[i] != in {
					t.Fatalf("markCommon(%v, %v) = %v", got, long, keep)
				}
			}
		}
	}
}

// randomLong is a set long enough that markCommon searches it.
func randomLong(r *rand.Rand) []string {
	out := make([]string, 0, 400)
	for range 400 {
		out = append(out, fmt.Sprintf("er-%02d", r.IntN(60)))
	}
	return out
}
