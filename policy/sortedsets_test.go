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

func TestSortedSets_UnionAndIntersectionEqualMapSets(t *testing.T) {
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
		var inter []string
		for _, x := range other {
			if union[x] {
				inter = append(inter, x)
			}
		}
		if g := intersectSorted(got, other); !slices.Equal(g, inter) {
			t.Fatalf("intersection of %v and %v = %v, want %v", got, other, g, inter)
		}
	}
}
