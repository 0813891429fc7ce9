package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"edgectl/policy"
)

var t0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

func mustWrite(t *testing.T, s *Store, fn func(tx *Tx) error) {
	t.Helper()
	tx := s.Write()
	if err := fn(tx); err != nil {
		tx.Abort()
		t.Fatal(err)
	}
	tx.Commit()
}

func randAttrs(r *rand.Rand) []string {
	var out []string
	for _, a := range []string{"a", "b", "c", "d"} {
		if r.Intn(3) == 0 {
			out = append(out, a)
		}
	}
	return out
}

func randRoles(r *rand.Rand, ids []string) []string {
	var out []string
	if r.Intn(10) == 0 {
		out = append(out, "#all")
	}
	for _, a := range randAttrs(r) {
		out = append(out, "#"+a)
	}
	if len(ids) > 0 && r.Intn(3) == 0 {
		out = append(out, "@"+ids[r.Intn(len(ids))])
	}
	return out
}

func semantic(r *rand.Rand) string {
	if r.Intn(2) == 0 {
		return policy.AllOf
	}
	return policy.AnyOf
}

// brute computes the links of rel by evaluating every policy against every entity.
func brute(tx *Tx, rel *relation) []string {
	var out []string
	tx.Each(rel.policy, "id", func(p Record) bool {
		sel, _ := policy.ParseSelector(rel.roles(p), rel.semantic(p))
		tx.Each(rel.entity, "id", func(e Record) bool {
			if sel.Matches(e.GetID(), rolesOf(e)) {
				out = append(out, p.GetID()+"→"+e.GetID())
			}
			return true
		})
		return true
	})
	sort.Strings(out)
	return out
}

func indexed(tx *Tx, rel *relation) []string {
	var out []string
	tx.Each(rel.policy, "id", func(p Record) bool {
		tx.PolicyEntities(rel.name, p.GetID(), func(e string) bool {
			out = append(out, p.GetID()+"→"+e)
			return true
		})
		return true
	})
	sort.Strings(out)
	return out
}

func reverse(tx *Tx, rel *relation) []string {
	var out []string
	tx.Each(rel.entity, "id", func(e Record) bool {
		tx.EntityPolicies(rel.name, e.GetID(), func(p string) bool {
			out = append(out, p+"→"+e.GetID())
			return true
		})
		return true
	})
	sort.Strings(out)
	return out
}

// randomModel makes random changes to identities, services and service policies.
type randomModel struct {
	r                *rand.Rand
	idents, services []string
	at               time.Time
}

// step applies one random change in tx.
func (m *randomModel) step(tx *Tx, step int) error {
	r := m.r
	switch op := r.Intn(8); {
	case op == 0 || len(m.idents) == 0:
		id := fmt.Sprintf("i%d", step)
		m.idents = append(m.idents, id)
		return tx.Insert(KindIdentity, &Identity{Base: Base{ID: id, CreatedAt: m.at}, Named: Named{Name: id}, RoleAttributes: randAttrs(r)})
	case op == 1:
		id := fmt.Sprintf("s%d", step)
		m.services = append(m.services, id)
		return tx.Insert(KindService, &Service{Base: Base{ID: id, CreatedAt: m.at}, Named: Named{Name: id}, RoleAttributes: randAttrs(r)})
	case op == 2:
		id := fmt.Sprintf("p%d", step)
		return tx.Insert(KindServicePolicy, &ServicePolicy{Base: Base{ID: id, CreatedAt: m.at}, Named: Named{Name: id}, Type: "Dial",
			Semantic: semantic(r), IdentityRoles: randRoles(r, m.idents), ServiceRoles: randRoles(r, m.services)})
	case op == 3:
		id := m.idents[r.Intn(len(m.idents))]
		i, err := GetAs[*Identity](tx, KindIdentity, id)
		if err != nil {
			return nil
		}
		n := *i
		n.RoleAttributes = randAttrs(r)
		return tx.Replace(KindIdentity, &n)
	case op == 4:
		var pols []string
		tx.Each(KindServicePolicy, "id", func(p Record) bool { pols = append(pols, p.GetID()); return true })
		if len(pols) == 0 {
			return nil
		}
		p, _ := GetAs[*ServicePolicy](tx, KindServicePolicy, pols[r.Intn(len(pols))])
		n := *p
		n.IdentityRoles, n.Semantic = randRoles(r, m.idents), semantic(r)
		return tx.Replace(KindServicePolicy, &n)
	case op == 5:
		id := m.idents[r.Intn(len(m.idents))]
		if !tx.Exists(KindIdentity, id) {
			return nil
		}
		return tx.Remove(KindIdentity, id)
	case op == 6:
		var pols []string
		tx.Each(KindServicePolicy, "id", func(p Record) bool { pols = append(pols, p.GetID()); return true })
		if len(pols) == 0 {
			return nil
		}
		return tx.Remove(KindServicePolicy, pols[r.Intn(len(pols))])
	default:
		if len(m.services) == 0 {
			return nil
		}
		id := m.services[r.Intn(len(m.services))]
		sv, err := GetAs[*Service](tx, KindService, id)
		if err != nil {
			return nil
		}
		n := *sv
		n.RoleAttributes = randAttrs(r)
		return tx.Replace(KindService, &n)
	}
}

func TestRelations_IncrementalLinksEqualBruteForce(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		m := &randomModel{r: rand.New(rand.NewSource(seed)), at: t0}
		s := New()
		for step := 0; step < 200; step++ {
			mustWrite(t, s, func(tx *Tx) error { return m.step(tx, step) })
		}
		tx := s.Read()
		for _, rel := range allRelations[:2] {
			want, got, rev := brute(tx, rel), indexed(tx, rel), reverse(tx, rel)
			if fmt.Sprint(want) != fmt.Sprint(got) || fmt.Sprint(want) != fmt.Sprint(rev) {
				t.Fatalf("seed %d %s:\nbrute   %v\nindexed %v\nreverse %v", seed, rel.name, want, got, rev)
			}
			if problems := tx.checkDerived(); len(problems) > 0 {
				t.Fatalf("seed %d: integrity: %v", seed, problems)
			}
		}
	}
}

// grantsOf is what an identity's service list shows of the model, by brute
// force: every (service, policy type) a matching policy grants.
func grantsOf(tx *Tx, identity Record) string {
	var out []string
	tx.Each(KindServicePolicy, "id", func(p Record) bool {
		sp := p.(*ServicePolicy)
		if sel, _ := policy.ParseSelector(sp.IdentityRoles, sp.Semantic); !sel.Matches(identity.GetID(), rolesOf(identity)) {
			return true
		}
		sel, _ := policy.ParseSelector(sp.ServiceRoles, sp.Semantic)
		tx.Each(KindService, "id", func(sv Record) bool {
			if sel.Matches(sv.GetID(), rolesOf(sv)) {
				out = append(out, sv.GetID()+":"+sp.Type)
			}
			return true
		})
		return true
	})
	sort.Strings(out)
	return strings.Join(dedupe(out), ",")
}

func TestRelations_ChangeMarkersMoveWhenTheServiceListChanges(t *testing.T) {
	t.Run("identities listed", func(t *testing.T) { changeMarkersMove(t, defaultCoarseLoss) })
	// Every policy that stops selecting identities marks its selector's terms.
	t.Run("selector terms marked", func(t *testing.T) { changeMarkersMove(t, 0) })
}

func changeMarkersMove(t *testing.T, coarseLoss int) {
	for seed := int64(1); seed <= 20; seed++ {
		m := &randomModel{r: rand.New(rand.NewSource(seed)), at: t0}
		s := New()
		s.coarseLoss = coarseLoss
		for step := 0; step < 150; step++ {
			before := map[string]string{}
			tx := s.Read()
			tx.Each(KindIdentity, "id", func(i Record) bool { before[i.GetID()] = grantsOf(tx, i); return true })
			m.at = t0.Add(time.Duration(step+1) * time.Second)
			mustWrite(t, s, func(tx *Tx) error {
				tx.SetTime(m.at)
				if err := m.step(tx, step); err != nil {
					return err
				}
				return tx.Finish()
			})
			tx = s.Read()
			tx.Each(KindIdentity, "id", func(raw Record) bool {
				i := raw.(*Identity)
				was, known := before[i.ID]
				if known && was != grantsOf(tx, i) && !tx.LastServiceChange(i).Equal(m.at) {
					t.Fatalf("seed %d step %d: the services of %s changed from %q to %q, lastChangeAt stayed %v",
						seed, step, i.ID, was, grantsOf(tx, i), tx.LastServiceChange(i))
				}
				return true
			})
		}
	}
}

func TestRoleAttributes_CountsFollowChanges(t *testing.T) {
	s := New()
	mustWrite(t, s, func(tx *Tx) error {
		if err := tx.Insert(KindIdentity, &Identity{Base: Base{ID: "1"}, Named: Named{Name: "1"}, RoleAttributes: []string{"x", "y"}}); err != nil {
			return err
		}
		return tx.Insert(KindIdentity, &Identity{Base: Base{ID: "2"}, Named: Named{Name: "2"}, RoleAttributes: []string{"y"}})
	})
	mustWrite(t, s, func(tx *Tx) error { return tx.Remove(KindIdentity, "1") })
	var got []string
	s.Read().RoleAttributes(KindIdentity, func(a string) bool { got = append(got, a); return true })
	if fmt.Sprint(got) != "[y]" {
		t.Fatalf("role attributes %v, want [y]", got)
	}
}

func TestPatchJSON_IsTheObjectOfItsFields(t *testing.T) {
	p := Patch{"name": []byte(`"x"`), "roleAttributes": []byte(`["a"]`), "tags": []byte(`{"k":1}`)}
	var got map[string]any
	if err := json.Unmarshal(p.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	if got["name"] != "x" || len(got["roleAttributes"].([]any)) != 1 || got["tags"].(map[string]any)["k"].(float64) != 1 || len(got) != 3 {
		t.Fatalf("decoded %v", got)
	}
	if string(Patch{}.JSON()) != "{}" {
		t.Fatal("empty patch")
	}
}

func TestPolicies_SystemPoliciesAreRefusedAsBadRequests(t *testing.T) {
	s := New()
	mustWrite(t, s, func(tx *Tx) error {
		return tx.Insert(KindEdgeRouterPolicy, &EdgeRouterPolicy{Base: Base{ID: "sys"}, Named: Named{Name: "sys"}, Semantic: "AnyOf", IsSystem: true})
	})
	tx := s.Write()
	defer tx.Abort()
	for name, err := range map[string]error{
		"update": tx.UpdatePolicy(KindEdgeRouterPolicy, "sys", Patch{"name": []byte(`"x"`)}, t0),
		"delete": tx.DeletePolicy(KindEdgeRouterPolicy, "sys"),
	} {
		var e *Error
		if !errors.As(err, &e) || e.Kind != "invalid" || e.Field != "id" {
			t.Errorf("%s of a system policy: %v, want an invalid id", name, err)
		}
	}
}

func TestRelations_AllOfReadsTheRarestAttribute(t *testing.T) {
	s := New()
	mustWrite(t, s, func(tx *Tx) error {
		for i := range 20 {
			roles := []string{"common"}
			if i%10 == 0 {
				roles = append(roles, "rare")
			}
			if err := tx.Insert(KindIdentity, &Identity{Base: Base{ID: fmt.Sprintf("i%02d", i)}, Named: Named{Name: fmt.Sprintf("i%02d", i)}, RoleAttributes: roles}); err != nil {
				return err
			}
		}
		return tx.Insert(KindServicePolicy, &ServicePolicy{Base: Base{ID: "p"}, Named: Named{Name: "p"}, Type: "Dial", Semantic: "AllOf",
			IdentityRoles: []string{"#common", "#rare", "#missing-here"}})
	})
	tx := s.Read()
	if got, _ := tx.rarestRole(KindIdentity, []string{"common", "rare"}); got != "rare" {
		t.Fatalf("rarest of common and rare: %s", got)
	}
	if got, _ := tx.rarestRole(KindIdentity, []string{"common", "rare", "nobody"}); got != "nobody" {
		t.Fatalf("an attribute nobody carries is the rarest: %s", got)
	}
	var selected []string
	tx.PolicyEntities(RelServicePolicyIdentity, "p", func(e string) bool { selected = append(selected, e); return true })
	if len(selected) != 0 {
		t.Fatalf("AllOf with an attribute nobody has selects %v", selected)
	}
}

// TestRelations_APolicyAddedInTheTransactionSelectsLaterEntities: a write
// transaction remembers that no policy names anything in a relation (so an
// FSM batch of creates looks it up once); a policy added later in the same
// transaction must still select the entities written after it, in the link
// rows and in the change markers.
func TestRelations_APolicyAddedInTheTransactionSelectsLaterEntities(t *testing.T) {
	t.Parallel()
	s := New()
	tx := s.Write()
	tx.SetTime(time.Unix(100, 0))
	must(t, tx.Insert(KindEdgeRouter, &EdgeRouter{Base: Base{ID: "er1"}, Named: Named{Name: "er1"}}))
	must(t, tx.Insert(KindIdentity, &Identity{Base: Base{ID: "i1"}, Named: Named{Name: "i1"}, TypeID: "Device", AuthPolicyID: "default"}))
	must(t, tx.Insert(KindEdgeRouterPolicy, &EdgeRouterPolicy{Base: Base{ID: "erp"}, Named: Named{Name: "erp"},
		Semantic: "AnyOf", EdgeRouterRoles: []string{"#all"}, IdentityRoles: []string{"#all"}}))
	must(t, tx.Insert(KindServicePolicy, &ServicePolicy{Base: Base{ID: "sp"}, Named: Named{Name: "sp"},
		Type: "Dial", Semantic: "AnyOf", IdentityRoles: []string{"#all"}}))
	must(t, tx.Insert(KindEdgeRouter, &EdgeRouter{Base: Base{ID: "er2"}, Named: Named{Name: "er2"}}))
	must(t, tx.Insert(KindIdentity, &Identity{Base: Base{ID: "i2"}, Named: Named{Name: "i2"}, TypeID: "Device", AuthPolicyID: "default"}))
	for _, er := range []string{"er1", "er2"} {
		if !tx.Linked(RelEdgeRouterPolicyEdgeRouter, "erp", er) {
			t.Errorf("edge router %s not linked to the #all policy", er)
		}
	}
	tx.Commit()
	if s.Read().changedAt("i:i2").IsZero() {
		t.Error("identity i2, selected by the #all service policy added before it, has no change marker")
	}
}
