package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// fakeGraph is a model of service policies: which identities and services
// each selects, and its type.
type fakeGraph struct {
	identities, services map[string][]string // policy → sorted ids
	types                map[string]string
}

func (f *fakeGraph) EntityPolicies(rel, entityID string, fn func(string) bool) {
	var ps []string
	for p, ids := range f.identities {
		if rel == RelServicePolicyIdentity && slices.Contains(ids, entityID) {
			ps = append(ps, p)
		}
	}
	sort.Strings(ps)
	for _, p := range ps {
		if !fn(p) {
			return
		}
	}
}

func (f *fakeGraph) PolicyEntities(rel, policyID string, fn func(string) bool) {
	for _, id := range f.PolicySet(rel, policyID) {
		if !fn(id) {
			return
		}
	}
}

func (f *fakeGraph) PolicySet(rel, policyID string) []string {
	if rel == RelServicePolicyService {
		return f.services[policyID]
	}
	return nil
}

func (f *fakeGraph) Linked(rel, policyID, entityID string) bool {
	return slices.Contains(f.PolicySet(rel, policyID), entityID)
}

func (f *fakeGraph) ServicePolicyType(policyID string) string { return f.types[policyID] }

func TestIdentityServices_EqualsAMapOfGrantsForFewAndManyPolicies(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, policies := range []int{0, 1, 3, 64, 65, 130} {
		f := &fakeGraph{identities: map[string][]string{}, services: map[string][]string{}, types: map[string]string{}}
		for i := range policies {
			p := fmt.Sprintf("p%03d", i)
			f.identities[p] = []string{"me"}
			var svcs []string
			for s := range 40 {
				if r.IntN(4) == 0 {
					svcs = append(svcs, fmt.Sprintf("s%02d", s))
				}
			}
			f.services[p] = svcs
			f.types[p] = []string{Dial, Bind}[r.IntN(2)]
		}
		want := map[string][]string{}
		for p := range f.identities {
			for _, s := range f.services[p] {
				want[s] = append(want[s], p+":"+f.types[p])
			}
		}
		got := IdentityServices(f, "me")
		if got.Len() != len(want) {
			t.Fatalf("%d policies: %d services, want %d", policies, got.Len(), len(want))
		}
		for i := range got.Len() {
			id := got.ID(i)
			if i > 0 && got.ID(i-1) >= id {
				t.Fatalf("%d policies: services out of order at %d", policies, i)
			}
			var have []string
			for _, g := range got.At(i) {
				have = append(have, g.PolicyID+":"+g.Type)
			}
			w := want[id]
			sort.Strings(w)
			if !slices.Equal(have, w) || !slices.Equal(have, func() []string {
				var h []string
				for _, g := range got.Get(id) {
					h = append(h, g.PolicyID+":"+g.Type)
				}
				return h
			}()) {
				t.Fatalf("%d policies, service %s: grants %v, want %v", policies, id, have, w)
			}
		}
		if got.Has("nope") || got.Get("nope") != nil {
			t.Fatalf("%d policies: an ungranted service is granted", policies)
		}
	}
}
