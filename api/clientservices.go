package api

import (
	"encoding/json"
	"sort"
	"time"

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

// href and links are the typed form of _links for the hot Client API views:
// struct encoding skips the map sorting that map-based views pay per field.
type href struct {
	Href string `json:"href"`
}

type selfLink struct {
	Self href `json:"self"`
}

func linkTo(path, id string) selfLink { return selfLink{Self: href{Href: "./" + path + "/" + id}} }

// jsonTime formats a time as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds), as a plain string: encoding/json re-scans every Marshaler's
// output, which showed in the profile of the hottest list.
func jsonTime(t time.Time) string { return t.Format(time.RFC3339Nano) }

// clientService is a service as the Client API shows it to one caller.
type clientService struct {
	Links              selfLink                   `json:"_links"`
	ID                 string                     `json:"id"`
	CreatedAt          string                     `json:"createdAt"`
	UpdatedAt          string                     `json:"updatedAt"`
	Tags               map[string]any             `json:"tags"`
	Name               string                     `json:"name"`
	Config             map[string]json.RawMessage `json:"config"`
	Configs            []string                   `json:"configs"`
	EncryptionRequired bool                       `json:"encryptionRequired"`
	TerminatorStrategy string                     `json:"terminatorStrategy"`
	RoleAttributes     []string                   `json:"roleAttributes"`
	MaxIdleTimeMillis  int64                      `json:"maxIdleTimeMillis"`
	Permissions        []string                   `json:"permissions"`
	PostureQueries     []policyPostureQueries     `json:"postureQueries"`
}

// policyPostureQueries is the PolicyPostureQueries of one granting policy.
type policyPostureQueries struct {
	PolicyID       string         `json:"policyId"`
	PolicyType     string         `json:"policyType"`
	IsPassing      bool           `json:"isPassing"`
	PostureQueries []postureQuery `json:"postureQueries"`
}

// postureQuery is one posture check of a policy as a query to answer.
type postureQuery struct {
	Links            selfLink       `json:"_links"`
	ID               string         `json:"id"`
	CreatedAt        string         `json:"createdAt"`
	UpdatedAt        string         `json:"updatedAt"`
	Tags             map[string]any `json:"tags"`
	QueryType        string         `json:"queryType"`
	IsPassing        bool           `json:"isPassing"`
	Timeout          int64          `json:"timeout"`
	TimeoutRemaining int64          `json:"timeoutRemaining"`
	Process          *queryProcess  `json:"process,omitempty"`
	Processes        []queryProcess `json:"processes,omitempty"`
}

type queryProcess struct {
	OSType string `json:"osType"`
	Path   string `json:"path"`
}

// postureEval judges posture checks for one API session at one time,
// each check once per request however many policies name it.
type postureEval struct {
	s     *Server
	tx    *store.Tx
	data  *policy.Data
	now   time.Time
	cache map[string]postureVerdict
}

type postureVerdict struct {
	r  policy.Result
	pc *store.PostureCheck
}

func (s *Server) newPostureEval(tx *store.Tx, sess *store.APISession) *postureEval {
	return &postureEval{s: s, tx: tx, data: tx.PostureInput(sess), now: s.now(), cache: map[string]postureVerdict{}}
}

func (e *postureEval) check(id string) postureVerdict {
	if v, ok := e.cache[id]; ok {
		return v
	}
	v := postureVerdict{r: policy.Result{Timeout: -1, TimeoutRemaining: -1}}
	if pc, err := store.GetAs[*store.PostureCheck](e.tx, store.KindPostureCheck, id); err == nil {
		v = postureVerdict{r: policy.Evaluate(store.CheckOf(pc), e.data, e.now), pc: pc}
	}
	e.cache[id] = v
	return v
}

// clientServiceView builds the Client API view of a service for one caller.
func (s *Server) clientServiceView(tx *store.Tx, svc *store.Service, grants []policy.Grant, sess *store.APISession, pe *postureEval) *clientService {
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
	v := &clientService{
		Links: linkTo("services", svc.ID), ID: svc.ID, CreatedAt: jsonTime(svc.CreatedAt), UpdatedAt: jsonTime(svc.UpdatedAt),
		Tags: tagsOrEmpty(svc.Tags), Name: svc.Name, Config: map[string]json.RawMessage{}, Configs: []string{},
		EncryptionRequired: svc.EncryptionRequired, TerminatorStrategy: svc.TerminatorStrategy,
		RoleAttributes: nonNilStrings(svc.RoleAttributes), MaxIdleTimeMillis: svc.MaxIdleTimeMillis,
		Permissions: []string{}, PostureQueries: []policyPostureQueries{},
	}
	for typeID, cfg := range byType {
		v.Configs = append(v.Configs, cfg.ID)
		t, err := store.GetAs[*store.ConfigType](tx, store.KindConfigType, typeID)
		if err == nil && wantsConfigType(sess, t) {
			v.Config[t.Name] = rawOrEmpty(cfg.Data)
		}
	}
	sort.Strings(v.Configs)
	dial, bind := false, false
	for _, g := range grants {
		dial, bind = dial || g.Type == policy.Dial, bind || g.Type == policy.Bind
		v.PostureQueries = append(v.PostureQueries, pe.policyQueries(g))
	}
	if dial {
		v.Permissions = append(v.Permissions, policy.Dial)
	}
	if bind {
		v.Permissions = append(v.Permissions, policy.Bind)
	}
	return v
}

// policyQueries is the PolicyPostureQueries of one granting policy.
func (e *postureEval) policyQueries(g policy.Grant) policyPostureQueries {
	out := policyPostureQueries{PolicyID: g.PolicyID, PolicyType: g.Type, IsPassing: true, PostureQueries: []postureQuery{}}
	for _, id := range g.Checks {
		v := e.check(id)
		pc := v.pc
		if pc == nil {
			continue
		}
		out.IsPassing = out.IsPassing && v.r.Passing
		q := postureQuery{Links: linkTo("posture-checks", pc.ID), ID: pc.ID, CreatedAt: jsonTime(pc.CreatedAt), UpdatedAt: jsonTime(pc.UpdatedAt),
			Tags: tagsOrEmpty(pc.Tags), QueryType: pc.TypeID, IsPassing: v.r.Passing, Timeout: v.r.Timeout, TimeoutRemaining: v.r.TimeoutRemaining}
		if pc.Process != nil {
			q.Process = &queryProcess{OSType: pc.Process.OSType, Path: pc.Process.Path}
		}
		for _, p := range pc.Processes {
			q.Processes = append(q.Processes, queryProcess{OSType: p.OSType, Path: p.Path})
		}
		out.PostureQueries = append(out.PostureQueries, q)
	}
	return out
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
	pe := s.newPostureEval(c.tx, c.session)
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any {
		return s.clientServiceView(c.tx, r.(*store.Service), grants[r.GetID()], c.session, pe)
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
	c.ok(s.clientServiceView(c.tx, svc, grants, c.session, s.newPostureEval(c.tx, c.session)))
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
