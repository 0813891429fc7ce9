package controller

import (
	"testing"

	"edgectl/store"
)

// A service counts as unhosted when a Dial policy grants it to an identity
// and it has no terminator; a hosted one, one only bound, and one whose
// Dial policy selects nobody do not.
func TestUnhostedServices_CountsDialableServicesWithoutTerminators(t *testing.T) {
	s := store.New()
	tx := s.Write()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tx.Insert(store.KindIdentity, &store.Identity{Base: store.Base{ID: "i1"}, Named: store.Named{Name: "i1"}, RoleAttributes: []string{"staff"}}))
	for _, id := range []string{"unhosted", "hosted", "bound", "nobody"} {
		must(tx.Insert(store.KindService, &store.Service{Base: store.Base{ID: id}, Named: store.Named{Name: id}}))
	}
	for _, p := range []*store.ServicePolicy{
		{Base: store.Base{ID: "d1"}, Named: store.Named{Name: "d1"}, Type: "Dial", Semantic: "AnyOf", IdentityRoles: []string{"#staff"}, ServiceRoles: []string{"@unhosted", "@hosted"}},
		{Base: store.Base{ID: "b1"}, Named: store.Named{Name: "b1"}, Type: "Bind", Semantic: "AnyOf", IdentityRoles: []string{"#staff"}, ServiceRoles: []string{"@bound"}},
		{Base: store.Base{ID: "d2"}, Named: store.Named{Name: "d2"}, Type: "Dial", Semantic: "AnyOf", IdentityRoles: []string{"#contractors"}, ServiceRoles: []string{"@nobody"}},
	} {
		must(tx.Insert(store.KindServicePolicy, p))
	}
	must(tx.Insert(store.KindTerminator, &store.Terminator{Base: store.Base{ID: "t1"}, ServiceID: "hosted", RouterID: "r1", Binding: "edge", Address: "a"}))
	tx.Commit()

	if got := unhostedServices(s.Read()); got != 1 {
		t.Fatalf("unhosted services: %d, want 1 (only the dialable service without a terminator)", got)
	}
}
