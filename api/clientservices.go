package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"edgectl/dataplane"
	"edgectl/pki"
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

// href and links are the typed form of _links for the typed views (and the
// cached fragments of the client service views): struct encoding skips the
// map sorting that map-based views pay per field.
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

// postureEval judges posture checks for one API session at one time,
// each check once per request however many policies name it. Posture
// queries show no failure details, so it judges without them (policy.Judge).
type postureEval struct {
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
	return &postureEval{tx: tx, data: tx.PostureInput(sess), now: s.now(), cache: map[string]postureVerdict{}}
}

func (e *postureEval) check(id string) postureVerdict {
	if v, ok := e.cache[id]; ok {
		return v
	}
	v := postureVerdict{r: policy.Result{Timeout: -1, TimeoutRemaining: -1}}
	if pc, err := store.GetAs[*store.PostureCheck](e.tx, store.KindPostureCheck, id); err == nil {
		v = postureVerdict{r: policy.Judge(judgedCheck(pc), e.data, e.now), pc: pc}
	}
	e.cache[id] = v
	return v
}

// clientViews is what writing the client service views of one request
// needs: the read transaction, the caller's API session, its identity's
// service config overrides (read once, not once per service), the posture
// verdicts, and scratch slices reused from one service to the next.
type clientViews struct {
	tx        *store.Tx
	sess      *store.APISession
	overrides []*store.IdentityServiceConfig
	pe        *postureEval
	policies  map[string][]byte // policy id → its PolicyPostureQueries JSON in this request
	byType    []typedConfig
	named     []namedConfig
	ids       []string
}

func (s *Server) newClientViews(tx *store.Tx, sess *store.APISession) *clientViews {
	v := &clientViews{tx: tx, sess: sess, pe: s.newPostureEval(tx, sess)}
	tx.Each(store.KindIdentityServiceConfig, "identity", func(r store.Record) bool {
		v.overrides = append(v.overrides, r.(*store.IdentityServiceConfig))
		return true
	}, sess.IdentityID)
	return v
}

// visibleServices returns the grants of the caller per visible service.
func visibleServices(tx *store.Tx, identityID string) *policy.ServiceGrants {
	return policy.IdentityServices(tx, identityID)
}

// listClientServices lists the services the caller may use (LQ+).
func (s *Server) listClientServices(c *call) error {
	lr, err := c.parseList(store.KindService.Fields, true)
	if err != nil {
		return err
	}
	grants := visibleServices(c.tx, c.identity.ID)
	recs := visibleInOrder(c.tx, grants)
	page, count, limit := lr.pick(recordsSource(recs), len(recs))
	v := s.newClientViews(c.tx, c.session)
	buf := getJSONBuf()
	defer putJSONBuf(buf)
	b := append((*buf)[:0], `{"data":[`...)
	for i, r := range page {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = v.appendClientService(b, r.(*store.Service), grants.Get(r.GetID())); err != nil {
			return err
		}
	}
	b = append(b, "],"...)
	b = appendListMeta(b, lr, limit, count)
	*buf = append(b, "}\n"...)
	c.writeJSONBytes(http.StatusOK, *buf)
	return nil
}

// visibleInOrder returns the services of grants in list order (name, then
// id). When the caller sees a good part of all services, it filters the
// store's sorted list of services (cached per table generation) instead of
// looking each one up and sorting: a lookup costs tens of times more than a
// membership test. Both give the same records in the same order.
func visibleInOrder(tx *store.Tx, grants *policy.ServiceGrants) []store.Record {
	recs := make([]store.Record, 0, grants.Len())
	if grants.Len() == 0 {
		return recs
	}
	if tx.Count(store.KindService) <= scanPerLookup*grants.Len() {
		for _, r := range tx.Sorted(store.KindService) {
			if grants.Has(r.GetID()) {
				recs = append(recs, r)
			}
		}
		return recs
	}
	for i := range grants.Len() {
		if r, err := tx.Get(store.KindService, grants.ID(i)); err == nil {
			recs = append(recs, r)
		}
	}
	sortByName(recs)
	return recs
}

// scanPerLookup is how many records a sorted scan may test per service the
// caller sees before lookups and a sort are cheaper.
const scanPerLookup = 16

// sortByName orders records by name then id, the default list order.
func sortByName(recs []store.Record) {
	slices.SortFunc(recs, func(a, b store.Record) int {
		if c := strings.Compare(a.RecordName(), b.RecordName()); c != 0 {
			return c
		}
		return strings.Compare(a.GetID(), b.GetID())
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
	buf := getJSONBuf()
	defer putJSONBuf(buf)
	b := append((*buf)[:0], `{"data":`...)
	if b, err = s.newClientViews(c.tx, c.session).appendClientService(b, svc, grants); err != nil {
		return err
	}
	b = append(b, ',')
	b = appendMetaVersions(b)
	*buf = append(b, "}}\n"...)
	c.writeJSONBytes(http.StatusOK, *buf)
	return nil
}

// clientServiceTerminators lists the terminators of a service the caller may use.
func (s *Server) clientServiceTerminators(c *call) error {
	if _, _, err := s.visibleService(c); err != nil {
		return err
	}
	return s.listIndexed(c, store.KindTerminator, "service", c.param("id"), func(r store.Record) any {
		return s.terminatorView(c.tx, r.(*store.Terminator), c.api)
	})
}

// clientServiceEdgeRouters answers the edge routers the caller may use for
// a service as OpenZiti's controller does: one object, {"edgeRouters":
// [...]} (ServiceEdgeRouters), which sdk-golang reads when it refreshes a
// session from its token.
func (s *Server) clientServiceEdgeRouters(c *call) error {
	// An SDK refreshes a session by asking its service's edge routers with
	// the session's token: a token no longer good (its signing key retired,
	// its session ended, another API session's) is 401, as OpenZiti's
	// controller answers, and the SDK makes a new session.
	tok := c.r.Header.Get("session-token") // the edge API's parameter is a header
	if tok == "" {
		tok = c.r.URL.Query().Get("sessionToken")
	}
	if tok != "" {
		if err := s.sessionTokenValid(c, tok); err != nil {
			return unauthorized("the session token is not valid: " + err.Error())
		}
	}
	if _, _, err := s.visibleService(c); err != nil {
		return err
	}
	var recs []store.Record
	for _, id := range policy.SessionEdgeRouters(c.tx, c.identity.ID, c.param("id")) {
		if r, err := c.tx.Get(store.KindEdgeRouter, id); err == nil {
			recs = append(recs, r)
		}
	}
	sortByName(recs)
	ers := make([]any, 0, len(recs))
	for _, r := range recs {
		ers = append(ers, clientEdgeRouterView(r.(*store.EdgeRouter), s.routerLive(r.GetID())))
	}
	c.ok(map[string]any{"edgeRouters": ers})
	return nil
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
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return clientEdgeRouterView(r.(*store.EdgeRouter), s.routerLive(r.GetID())) })
}

// clientEdgeRouterView is an edge router as clients see it.
func clientEdgeRouterView(er *store.EdgeRouter, live dataplane.Status) map[string]any {
	return map[string]any{
		"_links": selfLinks("edge-routers", er.ID), "id": er.ID, "createdAt": er.CreatedAt, "updatedAt": er.UpdatedAt,
		"tags": tagsOrEmpty(er.Tags), "name": er.Name, "appData": objOrEmpty(er.AppData), "cost": er.Cost,
		"disabled": er.Disabled, "hostname": er.Hostname, "isOnline": live.Online, "noTraversal": er.NoTraversal,
		"supportedProtocols": strMapOrEmpty(er.SupportedProtocols), "syncStatus": live.SyncStatus,
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

// clientServiceRoutes are the services as a client sees them, and what reaches them.
func (s *Server) clientServiceRoutes() []route {
	return []route{
		{clientAPI, get, "/services", "listServices", "Service", full, s.listClientServices},
		{clientAPI, get, "/services/:id", "detailService", "Service", full, s.getClientService},
		{clientAPI, get, "/services/:id/terminators", "listServiceTerminators", "Service", full, s.clientServiceTerminators},
		{clientAPI, get, "/services/:id/edge-routers", "listServiceEdgeRouters", "Service", full, s.clientServiceEdgeRouters},
		{clientAPI, get, "/current-identity/edge-routers", "getCurrentIdentityEdgeRouters", "Current Identity, Edge Router", full, s.currentIdentityEdgeRouters},
		{clientAPI, get, "/current-api-session/service-updates", "listServiceUpdates", "Current API Session, Services", full, s.serviceUpdates},
	}
}

// sessionTokenValid checks a service session token as a router would, for
// the caller's API session: signed by a trusted key, not expired, its
// session still there, the caller's, and of this service.
func (s *Server) sessionTokenValid(c *call, token string) error {
	keys := c.tx.DataPlaneKeys()
	if keys == nil {
		return errors.New("the cluster has no session signing key yet")
	}
	trusted, err := dataplane.SessionKeys(keys)
	if err != nil {
		return err
	}
	claims, err := pki.ParseServiceAccess(token, trusted, s.now())
	if err != nil {
		return err
	}
	if c.session == nil || claims.APISessionID != c.session.ID {
		return errors.New("it belongs to another API session")
	}
	sess, err := store.GetAs[*store.Session](c.tx, store.KindSession, claims.SessionID)
	if err != nil || sess.APISessionID != c.session.ID {
		return fmt.Errorf("session %s has ended", claims.SessionID)
	}
	if sess.ServiceID != c.param("id") {
		return errors.New("it is a session of another service")
	}
	return nil
}
