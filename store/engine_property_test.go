package store

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"edgectl/policy"
)

// naive answers by brute force over every policy, from the records alone.
type naive struct{ tx *Tx }

func (n naive) selects(roles []string, semantic, id string, attrs []string) bool {
	sel, err := policy.ParseSelector(roles, semantic)
	return err == nil && sel.Matches(id, attrs)
}

func (n naive) perms(identity *Identity, service *Service) (dial, bind bool) {
	n.tx.Each(KindServicePolicy, "id", func(r Record) bool {
		p := r.(*ServicePolicy)
		if n.selects(p.IdentityRoles, p.Semantic, identity.ID, identity.RoleAttributes) &&
			n.selects(p.ServiceRoles, p.Semantic, service.ID, service.RoleAttributes) {
			dial, bind = dial || p.Type == "Dial", bind || p.Type == "Bind"
		}
		return true
	})
	return dial, bind
}

func (n naive) routers(identity *Identity, service *Service) []string {
	var out []string
	n.tx.Each(KindEdgeRouter, "id", func(r Record) bool {
		er := r.(*EdgeRouter)
		byIdentity, byService := false, false
		n.tx.Each(KindEdgeRouterPolicy, "id", func(r Record) bool {
			p := r.(*EdgeRouterPolicy)
			byIdentity = byIdentity || (n.selects(p.IdentityRoles, p.Semantic, identity.ID, identity.RoleAttributes) &&
				n.selects(p.EdgeRouterRoles, p.Semantic, er.ID, er.RoleAttributes))
			return true
		})
		n.tx.Each(KindServiceEdgeRouterPolicy, "id", func(r Record) bool {
			p := r.(*ServiceEdgeRouterPolicy)
			byService = byService || (n.selects(p.ServiceRoles, p.Semantic, service.ID, service.RoleAttributes) &&
				n.selects(p.EdgeRouterRoles, p.Semantic, er.ID, er.RoleAttributes))
			return true
		})
		if byIdentity && byService {
			out = append(out, er.ID)
		}
		return true
	})
	sort.Strings(out)
	return out
}

func TestEngine_EqualsNaiveEvaluatorOnRandomNetworks(t *testing.T) {
	for seed := int64(1); seed <= 15; seed++ {
		r := rand.New(rand.NewSource(seed))
		s := New()
		var ids, svcs, ers []string
		mustWrite(t, s, func(tx *Tx) error {
			for i := 0; i < 12; i++ {
				id := fmt.Sprintf("i%d", i)
				ids = append(ids, id)
				if err := tx.Insert(KindIdentity, &Identity{Base: Base{ID: id}, Named: Named{Name: id}, RoleAttributes: randAttrs(r)}); err != nil {
					return err
				}
				sid := fmt.Sprintf("s%d", i)
				svcs = append(svcs, sid)
				if err := tx.Insert(KindService, &Service{Base: Base{ID: sid}, Named: Named{Name: sid}, RoleAttributes: randAttrs(r)}); err != nil {
					return err
				}
				eid := fmt.Sprintf("e%d", i)
				ers = append(ers, eid)
				if err := tx.Insert(KindEdgeRouter, &EdgeRouter{Base: Base{ID: eid}, Named: Named{Name: eid}, RoleAttributes: randAttrs(r)}); err != nil {
					return err
				}
			}
			for i := 0; i < 10; i++ {
				typ := "Dial"
				if r.Intn(2) == 0 {
					typ = "Bind"
				}
				if err := tx.Insert(KindServicePolicy, &ServicePolicy{Base: Base{ID: fmt.Sprintf("sp%d", i)}, Named: Named{Name: fmt.Sprintf("sp%d", i)},
					Type: typ, Semantic: semantic(r), IdentityRoles: randRoles(r, ids), ServiceRoles: randRoles(r, svcs)}); err != nil {
					return err
				}
				if err := tx.Insert(KindEdgeRouterPolicy, &EdgeRouterPolicy{Base: Base{ID: fmt.Sprintf("erp%d", i)}, Named: Named{Name: fmt.Sprintf("erp%d", i)},
					Semantic: semantic(r), IdentityRoles: randRoles(r, ids), EdgeRouterRoles: randRoles(r, ers)}); err != nil {
					return err
				}
				if err := tx.Insert(KindServiceEdgeRouterPolicy, &ServiceEdgeRouterPolicy{Base: Base{ID: fmt.Sprintf("serp%d", i)}, Named: Named{Name: fmt.Sprintf("serp%d", i)},
					Semantic: semantic(r), ServiceRoles: randRoles(r, svcs), EdgeRouterRoles: randRoles(r, ers)}); err != nil {
					return err
				}
			}
			return nil
		})
		tx := s.Read()
		n := naive{tx}
		all := func(policy.Grant) bool { return true }
		for _, iid := range ids {
			ident, _ := GetAs[*Identity](tx, KindIdentity, iid)
			visible := policy.IdentityServices(tx, iid)
			for _, sid := range svcs {
				svc, _ := GetAs[*Service](tx, KindService, sid)
				wd, wb := n.perms(ident, svc)
				gd, gb := policy.Permissions(policy.PairGrants(tx, iid, sid), all)
				vd, vb := policy.Permissions(visible.Get(sid), all)
				if wd != gd || wb != gb || wd != vd || wb != vb {
					t.Fatalf("seed %d %s/%s: naive dial=%v bind=%v, pair %v %v, list %v %v", seed, iid, sid, wd, wb, gd, gb, vd, vb)
				}
				if want, got := n.routers(ident, svc), policy.SessionEdgeRouters(tx, iid, sid); fmt.Sprint(want) != fmt.Sprint(got) {
					t.Fatalf("seed %d %s/%s: naive routers %v, engine %v", seed, iid, sid, want, got)
				}
			}
		}
	}
}
