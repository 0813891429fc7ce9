package store

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
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

func TestRelations_IncrementalLinksEqualBruteForce(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		s := New()
		var idents, services []string
		for step := 0; step < 200; step++ {
			mustWrite(t, s, func(tx *Tx) error {
				switch op := r.Intn(8); {
				case op == 0 || len(idents) == 0:
					id := fmt.Sprintf("i%d", step)
					idents = append(idents, id)
					return tx.Insert(KindIdentity, &Identity{Base: Base{ID: id, CreatedAt: t0}, Named: Named{Name: id}, RoleAttributes: randAttrs(r)})
				case op == 1:
					id := fmt.Sprintf("s%d", step)
					services = append(services, id)
					return tx.Insert(KindService, &Service{Base: Base{ID: id, CreatedAt: t0}, Named: Named{Name: id}, RoleAttributes: randAttrs(r)})
				case op == 2:
					id := fmt.Sprintf("p%d", step)
					return tx.Insert(KindServicePolicy, &ServicePolicy{Base: Base{ID: id, CreatedAt: t0}, Named: Named{Name: id}, Type: "Dial",
						Semantic: semantic(r), IdentityRoles: randRoles(r, idents), ServiceRoles: randRoles(r, services)})
				case op == 3:
					id := idents[r.Intn(len(idents))]
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
					n.IdentityRoles, n.Semantic = randRoles(r, idents), semantic(r)
					return tx.Replace(KindServicePolicy, &n)
				case op == 5:
					id := idents[r.Intn(len(idents))]
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
					if len(services) == 0 {
						return nil
					}
					id := services[r.Intn(len(services))]
					sv, err := GetAs[*Service](tx, KindService, id)
					if err != nil {
						return nil
					}
					n := *sv
					n.RoleAttributes = randAttrs(r)
					return tx.Replace(KindService, &n)
				}
			})
		}
		tx := s.Read()
		for _, rel := range allRelations[:2] {
			want, got, rev := brute(tx, rel), indexed(tx, rel), reverse(tx, rel)
			if fmt.Sprint(want) != fmt.Sprint(got) || fmt.Sprint(want) != fmt.Sprint(rev) {
				t.Fatalf("seed %d %s:\nbrute   %v\nindexed %v\nreverse %v", seed, rel.name, want, got, rev)
			}
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
