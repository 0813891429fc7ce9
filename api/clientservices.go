package api

import (
	"encoding/json"
	"sort"

	"edgectl/policy"
	"edgectl/store"
)

// The Client API view of services: what the calling identity may use, with
// its permissions, the configs its API session asked for, and the posture
// each granting policy needs. Every answer comes from policy's engine over
// the store's link index, the same as the Management views.

// passing is whether the caller's posture satisfies a grant's checks, judged
// at the request's time. A grant without checks always passes.
func (s *Server) passing(tx *store.Tx, sess *store.APISession) policy.Passing {
	return tx.Passing(sess, s.now())
}

// checkPasses judges one posture check for an API session now, and says
// what was expected and found when it fails.
func (s *Server) checkPasses(tx *store.Tx, sess *store.APISession, checkID string) (bool, *store.CheckFailure) {
	r, pc := s.evaluate(tx, sess, checkID)
	if pc == nil {
		return false, nil
	}
	if r.Passing {
		return true, nil
	}
	return false, &store.CheckFailure{PostureCheckID: pc.ID, PostureCheckName: pc.Name, PostureCheckType: pc.TypeID,
		ActualValue: r.Actual, ExpectedValue: r.Expected}
}

// evaluate judges one posture check for an API session now.
func (s *Server) evaluate(tx *store.Tx, sess *store.APISession, checkID string) (policy.Result, *store.PostureCheck) {
	pc, err := store.GetAs[*store.PostureCheck](tx, store.KindPostureCheck, checkID)
	if err != nil {
		return policy.Result{Timeout: -1, TimeoutRemaining: -1}, nil
	}
	return policy.Evaluate(store.CheckOf(pc), tx.PostureInput(sess), s.now()), pc
}

// wantsConfigType reports whether the API session asked for configs of type t.
func wantsConfigType(sess *store.APISession, t *store.ConfigType) bool {
	for _, want := range sess.ConfigTypes {
		if want == "all" || want == t.ID || want == t.Name {
			return true
		}
	}
	return false
}

// clientServiceView is a service as the Client API shows it to one caller.
func (s *Server) clientServiceView(tx *store.Tx, svc *store.Service, grants []policy.Grant, sess *store.APISession, passing policy.Passing) map[string]any {
	// The service's configs, then the identity's overrides per config type.
	byType := map[string]*store.Config{}
	for _, id := range svc.Configs {
		if cfg, err := store.GetAs[*store.Config](tx, store.KindConfig, id); err == nil {
			byType[cfg.ConfigTypeID] = cfg
		}
	}
	tx.Each(store.KindIdentityServiceConfig, "identity", func(r store.Record) bool {
		o := r.(*store.IdentityServiceConfig)
		if o.ServiceID == svc.ID {
			if cfg, err := store.GetAs[*store.Config](tx, store.KindConfig, o.ConfigID); err == nil {
				byType[cfg.ConfigTypeID] = cfg
			}
		}
		return true
	}, sess.IdentityID)
	config := map[string]json.RawMessage{}
	configs := []string{}
	for typeID, cfg := range byType {
		configs = append(configs, cfg.ID)
		t, err := store.GetAs[*store.ConfigType](tx, store.KindConfigType, typeID)
		if err == nil && wantsConfigType(sess, t) {
			config[t.Name] = rawOrEmpty(cfg.Data)
		}
	}
	sort.Strings(configs)

	perms := []string{}
	dial, bind := false, false
	queries := []any{}
	for _, g := range grants {
		dial, bind = dial || g.Type == policy.Dial, bind || g.Type == policy.Bind
		queries = append(queries, s.policyPostureQueries(tx, sess, g))
	}
	if dial {
		perms = append(perms, policy.Dial)
	}
	if bind {
		perms = append(perms, policy.Bind)
	}
	return map[string]any{
		"_links":             selfLinks("services", svc.ID),
		"id":                 svc.ID,
		"createdAt":          svc.CreatedAt,
		"updatedAt":          svc.UpdatedAt,
		"tags":               tagsOrEmpty(svc.Tags),
		"name":               svc.Name,
		"config":             config,
		"configs":            configs,
		"encryptionRequired": svc.EncryptionRequired,
		"terminatorStrategy": svc.TerminatorStrategy,
		"roleAttributes":     nonNilStrings(svc.RoleAttributes),
		"maxIdleTimeMillis":  svc.MaxIdleTimeMillis,
		"permissions":        perms,
		"postureQueries":     queries,
	}
}

// policyPostureQueries is the PolicyPostureQueries of one granting policy.
func (s *Server) policyPostureQueries(tx *store.Tx, sess *store.APISession, g policy.Grant) map[string]any {
	qs := []any{}
	all := true
	for _, id := range g.Checks {
		pc, err := store.GetAs[*store.PostureCheck](tx, store.KindPostureCheck, id)
		if err != nil {
			continue
		}
		r, _ := s.evaluate(tx, sess, id)
		all = all && r.Passing
		q := map[string]any{
			"_links": selfLinks("posture-checks", pc.ID), "id": pc.ID, "createdAt": pc.CreatedAt, "updatedAt": pc.UpdatedAt,
			"tags": tagsOrEmpty(pc.Tags), "queryType": pc.TypeID, "isPassing": r.Passing, "timeout": r.Timeout, "timeoutRemaining": r.TimeoutRemaining,
		}
		if pc.Process != nil {
			q["process"] = map[string]any{"osType": pc.Process.OSType, "path": pc.Process.Path}
		}
		if len(pc.Processes) > 0 {
			ps := []any{}
			for _, p := range pc.Processes {
				ps = append(ps, map[string]any{"osType": p.OSType, "path": p.Path})
			}
			q["processes"] = ps
		}
		qs = append(qs, q)
	}
	return map[string]any{"policyId": g.PolicyID, "policyType": g.Type, "isPassing": all, "postureQueries": qs}
}

// visibleServices returns the grants of the caller per visible service.
func visibleServices(tx *store.Tx, identityID string) map[string][]policy.Grant {
	return policy.IdentityServices(tx, identityID)
}

// listClientServices lists the services the caller may use (LQ+).
func (s *Server) listClientServices(c *call) error {
	lr, err := c.parseList(store.KindService.Fields, true)
	if err != nil {
		return err
	}
	grants := visibleServices(c.tx, c.identity.ID)
	recs := make([]store.Record, 0, len(grants))
	for id := range grants {
		if r, err := c.tx.Get(store.KindService, id); err == nil {
			recs = append(recs, r)
		}
	}
	sortByName(recs)
	passing := s.passing(c.tx, c.session)
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any {
		return s.clientServiceView(c.tx, r.(*store.Service), grants[r.GetID()], c.session, passing)
	})
}

// sortByName orders records by name then id, the default list order.
func sortByName(recs []store.Record) {
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if a.RecordName() != b.RecordName() {
			return a.RecordName() < b.RecordName()
		}
		return a.GetID() < b.GetID()
	})
}

// visibleService returns a service the caller may use, or 404: a service the
// caller cannot see is answered as if it did not exist.
func (s *Server) visibleService(c *call) (*store.Service, []policy.Grant, error) {
	id := c.param("id")
	grants := policy.PairGrants(c.tx, c.identity.ID, id)
	svc, err := store.GetAs[*store.Service](c.tx, store.KindService, id)
	if err != nil || len(grants) == 0 {
		return nil, nil, notFound("service", id)
	}
	return svc, grants, nil
}

func (s *Server) getClientService(c *call) error {
	svc, grants, err := s.visibleService(c)
	if err != nil {
		return err
	}
	c.ok(s.clientServiceView(c.tx, svc, grants, c.session, s.passing(c.tx, c.session)))
	return nil
}

// clientServiceTerminators lists the terminators of a service the caller may use.
func (s *Server) clientServiceTerminators(c *call) error {
	if _, _, err := s.visibleService(c); err != nil {
		return err
	}
	return s.listIndexed(c, store.KindTerminator, "service", c.param("id"), func(r store.Record) any {
		return s.terminatorView(c.tx, r.(*store.Terminator))
	})
}

// clientServiceEdgeRouters lists the edge routers the caller may use for a service.
func (s *Server) clientServiceEdgeRouters(c *call) error {
	if _, _, err := s.visibleService(c); err != nil {
		return err
	}
	ids := idSet{}
	for _, id := range policy.SessionEdgeRouters(c.tx, c.identity.ID, c.param("id")) {
		ids.add(id)
	}
	return s.listEdgeRouterIDs(c, ids)
}

// currentIdentityEdgeRouters lists the edge routers the caller may use.
func (s *Server) currentIdentityEdgeRouters(c *call) error {
	ids := idSet{}
	for id := range policy.IdentityEdgeRouters(c.tx, c.identity.ID) {
		ids.add(id)
	}
	return s.listEdgeRouterIDs(c, ids)
}

func (s *Server) listEdgeRouterIDs(c *call, ids idSet) error {
	lr, err := c.parseList(store.KindEdgeRouter.Fields, false)
	if err != nil {
		return err
	}
	recs := make([]store.Record, 0, len(ids))
	for id := range ids {
		if r, err := c.tx.Get(store.KindEdgeRouter, id); err == nil {
			recs = append(recs, r)
		}
	}
	sortByName(recs)
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return clientEdgeRouterView(r.(*store.EdgeRouter)) })
}

// clientEdgeRouterView is an edge router as clients see it.
func clientEdgeRouterView(er *store.EdgeRouter) map[string]any {
	return map[string]any{
		"_links": selfLinks("edge-routers", er.ID), "id": er.ID, "createdAt": er.CreatedAt, "updatedAt": er.UpdatedAt,
		"tags": tagsOrEmpty(er.Tags), "name": er.Name, "appData": objOrEmpty(er.AppData), "cost": er.Cost,
		"disabled": er.Disabled, "hostname": er.Hostname, "isOnline": false, "noTraversal": er.NoTraversal,
		"supportedProtocols": strMapOrEmpty(er.SupportedProtocols), "syncStatus": "SYNC_UNKNOWN",
		"urls": strMapOrEmpty(er.SupportedProtocols),
	}
}

// serviceUpdates answers when the caller's service list last changed.
func (s *Server) serviceUpdates(c *call) error {
	c.ok(map[string]any{"lastChangeAt": c.tx.LastServiceChange(c.identity)})
	return nil
}

// listProtocols names the protocols this node serves and where.
func (s *Server) listProtocols(c *call) error {
	host := s.cfg.AdvertiseURL
	if len(host) > len("https://") {
		host = host[len("https://"):]
	}
	c.ok(map[string]any{"https": map[string]string{"address": host}})
	return nil
}
