package store

import (
	"fmt"
	"testing"
)

func TestIntegrity_FindsAndFixesBrokenDerivedStateAndDanglingRecords(t *testing.T) {
	s := New()
	mustWrite(t, s, func(tx *Tx) error {
		if err := tx.Insert(KindIdentityType, &IdentityType{Base: Base{ID: "User"}, Named: Named{Name: "User"}}); err != nil {
			return err
		}
		if err := tx.Insert(KindAuthPolicy, &AuthPolicy{Base: Base{ID: "default"}, Named: Named{Name: "Default"}}); err != nil {
			return err
		}
		if err := tx.Insert(KindIdentity, &Identity{Base: Base{ID: "i1"}, Named: Named{Name: "i1"}, TypeID: "User", AuthPolicyID: "default", RoleAttributes: []string{"a"}}); err != nil {
			return err
		}
		return tx.Insert(KindServicePolicy, &ServicePolicy{Base: Base{ID: "p1"}, Named: Named{Name: "p1"}, Semantic: "AllOf", IdentityRoles: []string{"#a"}})
	})
	tx := s.Read()
	if f, err := tx.CheckIntegrity(false, 0); err != nil || len(f) != 0 {
		t.Fatalf("a consistent model has findings: %v %v", f, err)
	}
	// Break it behind the model's back: drop the ref that lets p1 find i1, and leave an authenticator whose identity is gone.
	mustWrite(t, s, func(tx *Tx) error {
		if n, err := tx.txn.DeleteAll(refsTable, "id", RelServicePolicyIdentity, "#a", "p1"); n != 1 || err != nil {
			t.Fatalf("deleted %d refs: %v", n, err)
		}
		return tx.txn.Insert(KindAuthenticator.Table, &Authenticator{Base: Base{ID: "a1"}, IdentityID: "gone", Method: "updb"})
	})
	// Many writes of one table: its generation is past its record count.
	for i := range 5 {
		mustWrite(t, s, func(tx *Tx) error {
			r, err := tx.Get(KindIdentity, "i1")
			if err != nil {
				return err
			}
			n := *r.(*Identity)
			n.Name = fmt.Sprint("i1-", i)
			return tx.Replace(KindIdentity, &n)
		})
	}
	gens := map[*Kind]uint64{}
	for _, k := range AllKinds {
		if k != KindEvent {
			gens[k] = s.Read().gen(k)
		}
	}
	found, _ := s.Read().CheckIntegrity(false, 0)
	if len(found) < 3 { // missing ref, dangling authenticator, wrong authenticator count
		t.Fatalf("scan found %v", found)
	}
	for _, f := range found {
		if f.Fixed {
			t.Fatalf("a scan must not fix: %v", f)
		}
	}
	wtx := s.Write()
	fixed, err := wtx.CheckIntegrity(true, 0)
	if err != nil {
		t.Fatal(err)
	}
	wtx.Commit()
	for _, f := range fixed {
		if !f.Fixed {
			t.Fatalf("not fixed: %v", f)
		}
	}
	if f, _ := s.Read().CheckIntegrity(false, 0); len(f) != 0 {
		t.Fatalf("after the fix: %v", f)
	}
	// The rebuild moved every generation forward, as a write does: a list
	// order cached before it must not serve views after it.
	for k, before := range gens {
		if after := s.Read().gen(k); after <= before {
			t.Errorf("%s: generation %d before the fix, %d after", k.Table, before, after)
		}
	}
	var linked []string
	s.Read().PolicyEntities(RelServicePolicyIdentity, "p1", func(e string) bool { linked = append(linked, e); return true })
	if len(linked) != 1 {
		t.Fatalf("link not restored: %v", linked)
	}
}

func TestIntegrity_FindsAndFixesABrokenLinkSet(t *testing.T) {
	s := New()
	mustWrite(t, s, func(tx *Tx) error {
		if err := tx.Insert(KindService, &Service{Base: Base{ID: "s1"}, Named: Named{Name: "s1"}, RoleAttributes: []string{"a"}}); err != nil {
			return err
		}
		return tx.Insert(KindServicePolicy, &ServicePolicy{Base: Base{ID: "p1"}, Named: Named{Name: "p1"}, Semantic: "AllOf", ServiceRoles: []string{"#a"}})
	})
	if !s.Read().Linked(RelServicePolicyService, "p1", "s1") {
		t.Fatal("p1 does not select s1")
	}
	// Drop the entity side of the link only: the policy side still has it.
	mustWrite(t, s, func(tx *Tx) error {
		if !tx.removeFromLinkSet(treeByEntity, RelServicePolicyService, "s1", "p1") {
			t.Fatal("no link to remove")
		}
		return nil
	})
	if found, _ := s.Read().CheckIntegrity(false, 0); len(found) != 1 {
		t.Fatalf("scan found %v, want the missing link", found)
	}
	wtx := s.Write()
	if _, err := wtx.CheckIntegrity(true, 0); err != nil {
		t.Fatal(err)
	}
	wtx.Commit()
	tx := s.Read()
	var policies []string
	tx.EntityPolicies(RelServicePolicyService, "s1", func(p string) bool { policies = append(policies, p); return true })
	if f, _ := tx.CheckIntegrity(false, 0); len(f) != 0 || len(policies) != 1 {
		t.Fatalf("after the fix: %v, policies of s1 %v", f, policies)
	}
}
