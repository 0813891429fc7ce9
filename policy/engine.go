package policy

import "slices"

// Relation names: which policy kind selects which entity kind through which
// role array. The store keeps the resolved sets of each as link rows.
const (
	RelServicePolicyIdentity      = "sp.identity"
	RelServicePolicyService       = "sp.service"
	RelServicePolicyPostureCheck  = "sp.postureCheck"
	RelEdgeRouterPolicyIdentity   = "erp.identity"
	RelEdgeRouterPolicyEdgeRouter = "erp.edgeRouter"
	RelSERPService                = "serp.service"
	RelSERPEdgeRouter             = "serp.edgeRouter"
)

// Session and permission types.
const (
	Dial = "Dial"
	Bind = "Bind"
)

// Graph is what the engine reads of the model: the resolved policy sets the
// store maintains incrementally. store.Tx implements it.
type Graph interface {
	EntityPolicies(rel, entityID string, fn func(policyID string) bool)
	PolicyEntities(rel, policyID string, fn func(entityID string) bool)
	// PolicySet returns the ids PolicyEntities would give, sorted; the
	// caller must not modify the slice (it may be the model's own).
	PolicySet(rel, policyID string) []string
	Linked(rel, policyID, entityID string) bool
	// ServicePolicyType returns Dial or Bind for a service policy, "" if there is none.
	ServicePolicyType(policyID string) string
}

// Grant is one service policy that gives an identity a permission on a
// service, with the posture checks that policy requires.
type Grant struct {
	PolicyID string
	Type     string
	Checks   []string
}

// Passing decides whether a grant's posture checks pass for the caller. A
// grant without checks always passes (spec: a policy with no posture checks
// always passes); nil means "no posture data": only such grants pass.
type Passing func(Grant) bool

func (p Passing) ok(g Grant) bool {
	if len(g.Checks) == 0 {
		return true
	}
	return p != nil && p(g)
}

func grant(g Graph, policyID string) Grant {
	gr := Grant{PolicyID: policyID, Type: g.ServicePolicyType(policyID)}
	g.PolicyEntities(RelServicePolicyPostureCheck, policyID, func(c string) bool {
		gr.Checks = append(gr.Checks, c)
		return true
	})
	return gr
}

// ServiceGrants are the grants of one identity, per service, in service id
// order: what IdentityServices answers.
type ServiceGrants struct {
	ids    []string
	grants [][]Grant // grants[i] are those of ids[i]; read-only, shared between services
}

// Len is the number of services granted.
func (sg *ServiceGrants) Len() int { return len(sg.ids) }

// ID is the id of the i-th service, in id order.
func (sg *ServiceGrants) ID(i int) string { return sg.ids[i] }

// At is the grants of the i-th service.
func (sg *ServiceGrants) At(i int) []Grant { return sg.grants[i] }

// Get returns the grants of a service, none if it is not granted.
func (sg *ServiceGrants) Get(serviceID string) []Grant {
	if i, ok := slices.BinarySearch(sg.ids, serviceID); ok {
		return sg.grants[i]
	}
	return nil
}

// Has reports whether some policy grants the service.
func (sg *ServiceGrants) Has(serviceID string) bool {
	_, ok := slices.BinarySearch(sg.ids, serviceID)
	return ok
}

// IdentityServices returns, for every service an identity is granted by some
// service policy, the grants. It reads the identity's policies and their
// services: the cost is the size of the answer. Each policy's services are a
// sorted set, so the services are their merge, and a service's grants are
// those of the policies whose set holds it (in policy order), gathered in one
// walk over the sets.
func IdentityServices(g Graph, identityID string) *ServiceGrants {
	var grants []Grant
	var sets [][]string
	g.EntityPolicies(RelServicePolicyIdentity, identityID, func(p string) bool {
		set := g.PolicySet(RelServicePolicyService, p)
		if len(set) > 0 {
			grants, sets = append(grants, grant(g, p)), append(sets, set)
		}
		return true
	})
	out := &ServiceGrants{ids: unionSorted(sets)}
	out.grants = make([][]Grant, len(out.ids))
	next := make([]int, len(sets)) // the position of each set's next id
	// Services granted by the same policies share one slice: there are
	// few such combinations, however many services.
	var shared map[uint64][]Grant
	if len(sets) <= 64 {
		shared = map[uint64][]Grant{}
	}
	for i, id := range out.ids {
		var mask uint64
		var list []Grant
		for k, set := range sets {
			if next[k] < len(set) && set[next[k]] == id {
				next[k]++
				if shared != nil {
					mask |= 1 << k
				} else {
					list = append(list, grants[k])
				}
			}
		}
		if shared != nil {
			var ok bool
			if list, ok = shared[mask]; !ok {
				for k := range sets {
					if mask&(1<<k) != 0 {
						list = append(list, grants[k])
					}
				}
				list = slices.Clip(list)
				shared[mask] = list
			}
		}
		out.grants[i] = list
	}
	return out
}

// PairGrants returns the grants of one identity on one service.
func PairGrants(g Graph, identityID, serviceID string) []Grant {
	var out []Grant
	g.EntityPolicies(RelServicePolicyIdentity, identityID, func(p string) bool {
		if g.Linked(RelServicePolicyService, p, serviceID) {
			out = append(out, grant(g, p))
		}
		return true
	})
	return out
}

// Permissions returns whether the grants allow Dial and Bind, counting only
// grants whose posture passes. One passing policy is enough.
func Permissions(grants []Grant, passing Passing) (dial, bind bool) {
	for _, gr := range grants {
		if !passing.ok(gr) {
			continue
		}
		switch gr.Type {
		case Dial:
			dial = true
		case Bind:
			bind = true
		}
	}
	return dial, bind
}

// Allowed reports whether the grants allow a session of type typ.
func Allowed(grants []Grant, typ string, passing Passing) bool {
	dial, bind := Permissions(grants, passing)
	return (typ == Dial && dial) || (typ == Bind && bind)
}

// reach collects what an entity reaches through the policies that select it.
func reach(g Graph, fromRel, id, toRel string) map[string]struct{} {
	out := map[string]struct{}{}
	g.EntityPolicies(fromRel, id, func(p string) bool {
		g.PolicyEntities(toRel, p, func(e string) bool {
			out[e] = struct{}{}
			return true
		})
		return true
	})
	return out
}

// IdentityEdgeRouters are the edge routers edge router policies give an identity.
func IdentityEdgeRouters(g Graph, identityID string) map[string]struct{} {
	return reach(g, RelEdgeRouterPolicyIdentity, identityID, RelEdgeRouterPolicyEdgeRouter)
}

// ServiceEdgeRouters are the edge routers service edge router policies give a service.
func ServiceEdgeRouters(g Graph, serviceID string) map[string]struct{} {
	return reach(g, RelSERPService, serviceID, RelSERPEdgeRouter)
}

// SessionEdgeRouters are the edge routers a session of identity on service
// may use: those the identity may use and the service may use, sorted. The
// identity's routers are the union of its edge router policies' sets; the
// service side is never merged into one set: each of its policies' sets only
// marks which of the identity's routers it holds.
func SessionEdgeRouters(g Graph, identityID, serviceID string) []string {
	var sets [][]string
	g.EntityPolicies(RelEdgeRouterPolicyIdentity, identityID, func(p string) bool {
		sets = append(sets, g.PolicySet(RelEdgeRouterPolicyEdgeRouter, p))
		return true
	})
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	mine, _ := sc.union(sets)
	if len(mine) == 0 {
		return nil
	}
	keep := sc.keep[:0]
	keep = append(keep, make([]bool, len(mine))...)
	sc.keep = keep
	g.EntityPolicies(RelSERPService, serviceID, func(p string) bool {
		markCommon(mine, g.PolicySet(RelSERPEdgeRouter, p), keep)
		return true
	})
	var out []string
	for i, k := range keep {
		if k {
			out = append(out, mine[i])
		}
	}
	return out
}
