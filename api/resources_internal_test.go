package api

import (
	"testing"

	"edgectl/store"
)

// TestResources_EveryKindOfARelationHasItsView: relation lists show the
// records of both sides of every store relation with the kind's own view, so
// each of those kinds must have a resource (viewOf panics otherwise).
func TestResources_EveryKindOfARelationHasItsView(t *testing.T) {
	t.Parallel()
	s := New(Deps{Store: store.New()}, Config{})
	has := map[*store.Kind]bool{}
	paths := map[string]bool{}
	for _, r := range s.resources {
		if r.view == nil || r.routes == nil {
			t.Errorf("resource %s lacks a view or routes", r.path)
		}
		if has[r.kind] || paths[r.path] {
			t.Errorf("resource %s (%s) is listed twice", r.path, r.kind.Table)
		}
		has[r.kind], paths[r.path] = true, true
	}
	for _, rel := range store.Relations() {
		for _, k := range []*store.Kind{rel.Policy, rel.Entity} {
			if !has[k] {
				t.Errorf("relation %s: kind %s has no resource, so no view", rel.Name, k.Table)
			}
		}
	}
}
