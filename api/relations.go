package api

import (
	"edgectl/store"
	"errors"
	"strings"
)

// The relation lists: which entities a policy selects, which policies select
// an entity, and what an entity reaches through policies. They read the link
// index the store keeps, so each costs the size of its answer.

// idSet collects ids without duplicates.
type idSet map[string]struct{}

func (ids idSet) add(id string) bool { ids[id] = struct{}{}; return true }

// listIDs serves a list of the records of k with the given ids, by name then id.
func (s *Server) listIDs(c *call, k *store.Kind, ids idSet) error {
	lr, err := c.parseList(k.Fields, false)
	if err != nil {
		return err
	}
	var recs []store.Record
	if c.tx.Count(k) <= scanPerLookup*len(ids) {
		// A good part of the table: filter its cached list order rather
		// than look each record up and sort them (as visibleInOrder does).
		recs = make([]store.Record, 0, len(ids))
		for _, r := range c.tx.Sorted(k) {
			if _, ok := ids[r.GetID()]; ok {
				recs = append(recs, r)
			}
		}
	} else {
		recs = make([]store.Record, 0, len(ids))
		for id := range ids {
			if r, err := c.tx.Get(k, id); err == nil {
				recs = append(recs, r)
			}
		}
		sortDefault(k, recs)
	}
	view := s.viewOf(k)
	src := func(fn func(store.Record) bool) {
		for _, r := range recs {
			if !fn(r) {
				return
			}
		}
	}
	return c.page(lr, src, len(recs), func(r store.Record) any { return view(c.tx, r) })
}

// policyEntities lists what a policy selects in one of its role arrays.
func (s *Server) policyEntities(rel string, ek *store.Kind) func(c *call) error {
	return s.relationList(ek, func(tx *store.Tx, id string, add func(string) bool) { tx.PolicyEntities(rel, id, add) })
}

// entityPolicies lists the policies that select an entity.
func (s *Server) entityPolicies(rel string, pk *store.Kind) func(c *call) error {
	return s.relationList(pk, func(tx *store.Tx, id string, add func(string) bool) { tx.EntityPolicies(rel, id, add) })
}

// relationList serves a list of the records of kind listed that related
// gives for the record of the path (which exists: ofExistingRecords).
func (s *Server) relationList(listed *store.Kind, related func(tx *store.Tx, id string, add func(string) bool)) func(c *call) error {
	return func(c *call) error {
		id := c.param("id")
		ids := idSet{}
		related(c.tx, id, ids.add)
		return s.listIDs(c, listed, ids)
	}
}

// reach collects what an entity reaches through the policies that select it:
// the entities those policies select in their other role array.
func reach(tx *store.Tx, fromRel, id, toRel string) idSet {
	ids := idSet{}
	tx.EntityPolicies(fromRel, id, func(p string) bool {
		tx.PolicyEntities(toRel, p, ids.add)
		return true
	})
	return ids
}

// reachList lists what an entity reaches through policies. Through service
// policies, ?policyType=dial or bind keeps the policies of that type (as
// OpenZiti's `ziti edge validate service-hosting` asks).
func (s *Server) reachList(fromRel, toRel string, tk *store.Kind) func(c *call) error {
	return func(c *call) error {
		id := c.param("id") // an existing record (ofExistingRecords)
		pt := c.r.URL.Query().Get("policyType")
		if pt == "" {
			return s.listIDs(c, tk, reach(c.tx, fromRel, id, toRel))
		}
		if fromRel != store.RelServicePolicyService && fromRel != store.RelServicePolicyIdentity {
			return badQuery("policyType", errors.New("only lists through service policies take a policy type"))
		}
		var want string
		switch strings.ToLower(pt) {
		case "dial":
			want = "Dial"
		case "bind":
			want = "Bind"
		default:
			return badQuery("policyType", errors.New("must be dial or bind"))
		}
		ids := idSet{}
		c.tx.EntityPolicies(fromRel, id, func(p string) bool {
			if sp, err := store.GetAs[*store.ServicePolicy](c.tx, store.KindServicePolicy, p); err == nil && sp.Type == want {
				c.tx.PolicyEntities(toRel, p, ids.add)
			}
			return true
		})
		return s.listIDs(c, tk, ids)
	}
}

// relationRoutes are the relation lists of routes.md.
func (s *Server) relationRoutes() []route {
	var out []route
	for _, pf := range s.policyFamilies() {
		title := opTitle(pf.path)
		for _, pr := range pf.roles {
			out = append(out, route{managementAPI, get, "/" + pf.path + "/:id/" + pr.path,
				"list" + title + opPlural(opTitle(pr.path)), title, admin, s.policyEntities(pr.rel, pr.entity)})
		}
	}
	I, S, E := store.KindIdentity, store.KindService, store.KindEdgeRouter
	SP, ERP, SERP := store.KindServicePolicy, store.KindEdgeRouterPolicy, store.KindServiceEdgeRouterPolicy
	out = append(out,
		route{managementAPI, get, "/identities/:id/service-policies", "listIdentityServicePolicies", "Identity", admin, s.entityPolicies(store.RelServicePolicyIdentity, SP)},
		route{managementAPI, get, "/identities/:id/edge-router-policies", "listIdentitysEdgeRouterPolicies", "Identity", admin, s.entityPolicies(store.RelEdgeRouterPolicyIdentity, ERP)},
		route{managementAPI, get, "/identities/:id/services", "listIdentityServices", "Identity", admin, s.reachList(store.RelServicePolicyIdentity, store.RelServicePolicyService, S)},
		route{managementAPI, get, "/identities/:id/edge-routers", "listIdentityEdgeRouters", "Identity", admin, s.reachList(store.RelEdgeRouterPolicyIdentity, store.RelEdgeRouterPolicyEdgeRouter, E)},
		route{managementAPI, get, "/services/:id/service-policies", "listServiceServicePolicies", "Service", admin, s.entityPolicies(store.RelServicePolicyService, SP)},
		route{managementAPI, get, "/services/:id/service-edge-router-policies", "listServiceServiceEdgeRouterPolicies", "Service", admin, s.entityPolicies(store.RelSERPService, SERP)},
		route{managementAPI, get, "/services/:id/identities", "listServiceIdentities", "Service", admin, s.reachList(store.RelServicePolicyService, store.RelServicePolicyIdentity, I)},
		route{managementAPI, get, "/services/:id/edge-routers", "listServiceEdgeRouters", "Service", admin, s.reachList(store.RelSERPService, store.RelSERPEdgeRouter, E)},
		route{managementAPI, get, "/edge-routers/:id/edge-router-policies", "listEdgeRouterEdgeRouterPolicies", "Edge Router", admin, s.entityPolicies(store.RelEdgeRouterPolicyEdgeRouter, ERP)},
		route{managementAPI, get, "/edge-routers/:id/service-edge-router-policies", "listEdgeRouterServiceEdgeRouterPolicies", "Edge Router", admin, s.entityPolicies(store.RelSERPEdgeRouter, SERP)},
		route{managementAPI, get, "/edge-routers/:id/identities", "listEdgeRouterIdentities", "Edge Router", admin, s.reachList(store.RelEdgeRouterPolicyEdgeRouter, store.RelEdgeRouterPolicyIdentity, I)},
		route{managementAPI, get, "/edge-routers/:id/services", "listEdgeRouterServices", "Edge Router", admin, s.reachList(store.RelSERPEdgeRouter, store.RelSERPService, S)},
	)
	return out
}
