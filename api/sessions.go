package api

import (
	"crypto"
	"net/http"
	"time"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/policy"
	"edgectl/store"
)

// sessionFields are the writable fields of a session create.
var sessionFields = []field{
	{name: "serviceId", kind: fString, required: true, min: 1, ref: "services"},
	{name: "type", kind: fString, enum: []string{policy.Dial, policy.Bind}, def: policy.Dial, nullable: true},
	tagsField,
}

// createSession creates a Dial or Bind session when a service policy grants
// that permission and its posture passes. A refusal is recorded as a failed
// service request (the last fifty per identity).
func (s *Server) createSession(c *call) error {
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(raw, sessionFields, modeCreate)
	if err != nil {
		return err
	}
	serviceID, typ := p.values["serviceId"].(string), p.values["type"].(string)
	svc, err := store.GetAs[*store.Service](c.tx, store.KindService, serviceID)
	if err != nil {
		return notFound("service", serviceID)
	}
	grants := policy.PairGrants(c.tx, c.identity.ID, serviceID)
	now := s.now()
	if len(grants) == 0 {
		// The caller may not see the service: it is answered as if it did
		// not exist, and the denial is recorded for admins like any other.
		s.recordServiceFailure(c, svc, typ, "permission", nil, now)
		return notFound("service", serviceID)
	}
	if !policy.Allowed(grants, typ, s.passing(c.tx, c.session)) {
		failures := s.policyFailures(c.tx, c.session, grants, typ)
		if len(failures) == 0 {
			s.recordServiceFailure(c, svc, typ, "permission", nil, now)
			return forbidden("no service policy grants " + typ + " on this service")
		}
		s.recordServiceFailure(c, svc, typ, "posture", failures, now)
		return invalidPosture(failures)
	}
	id := auth.NewID()
	token, err := s.serviceSessionToken(c.tx, id, c.session.ID, c.identity.ID, svc.ID, typ, now)
	if err != nil {
		return err
	}
	sess := &store.Session{Base: store.Base{ID: id, CreatedAt: now, UpdatedAt: now},
		TokenHash: auth.HashToken(token), APISessionID: c.session.ID, IdentityID: c.identity.ID, ServiceID: svc.ID, Type: typ}
	if tags, ok := p.values["tags"].(map[string]any); ok {
		sess.Tags = tags
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdSessionCreate, sess); err != nil {
		return err
	}
	return s.writeSession(c, http.StatusCreated, s.Store.Read(), sess, token)
}

// recordServiceFailure records a refused session create as a failed service request
// (the store keeps the last fifty per identity). The refusal stands even
// when the record cannot be written.
func (s *Server) recordServiceFailure(c *call, svc *store.Service, typ, reason string, failures []store.PolicyFailure, now time.Time) {
	failure := &store.FailedServiceRequest{Base: store.Base{ID: auth.NewID(), CreatedAt: now, UpdatedAt: now},
		IdentityID: c.identity.ID, APISessionID: c.session.ID, ServiceID: svc.ID, ServiceName: svc.Name,
		SessionType: typ, When: now, Reason: reason, PolicyFailures: failures}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdFailedRequest, failure); err != nil {
		s.Log.Warn("could not record a failed service request", "error", err)
	}
}

// policyFailures lists, for the grants of the wanted type, the posture checks that fail.
func (s *Server) policyFailures(tx *store.Tx, sess *store.APISession, grants []policy.Grant, typ string) []store.PolicyFailure {
	var out []store.PolicyFailure
	for _, g := range grants {
		if g.Type != typ || len(g.Checks) == 0 {
			continue
		}
		pf := store.PolicyFailure{PolicyID: g.PolicyID, Checks: []store.CheckFailure{}}
		if p, err := tx.Get(store.KindServicePolicy, g.PolicyID); err == nil {
			pf.PolicyName = p.RecordName()
		}
		for _, id := range g.Checks {
			if ok, f := s.checkPasses(tx, sess, id); !ok && f != nil {
				pf.Checks = append(pf.Checks, *f)
			}
		}
		out = append(out, pf)
	}
	return out
}

// sessionView is a session with the edge routers it may use (sessions_json.go).
func (s *Server) sessionView(tx *store.Tx, sess *store.Session) any {
	return sessionJSON{s: s, tx: tx, sess: sess}
}

// listSessions lists sessions: a client sees its own, an admin on the Management API all.
func (s *Server) listSessions(c *call) error {
	lr, err := c.parseList(store.KindSession.Fields, false)
	if err != nil {
		return err
	}
	view := func(r store.Record) any { return s.sessionView(c.tx, r.(*store.Session)) }
	if c.api == managementAPI {
		return c.page(lr, kindSource(c.tx, store.KindSession), c.tx.Count(store.KindSession), view)
	}
	recs := ownedRecords(c.tx, store.KindSession, "identity", c.identity.ID)
	return c.page(lr, recordsSource(recs), len(recs), view)
}

// ownSession returns a session the caller may see: its own, or any for an admin on the Management API.
func (s *Server) ownSession(c *call) (*store.Session, error) {
	sess, err := store.GetAs[*store.Session](c.tx, store.KindSession, c.param("id"))
	if err != nil || (c.api != managementAPI && sess.IdentityID != c.identity.ID) {
		return nil, notFound("session", c.param("id"))
	}
	return sess, nil
}

func (s *Server) getSession(c *call) error {
	sess, err := s.ownSession(c)
	if err != nil {
		return err
	}
	c.ok(s.sessionView(c.tx, sess))
	return nil
}

func (s *Server) deleteSession(c *call) error {
	sess, err := s.ownSession(c)
	if err != nil {
		return err
	}
	_, err = s.Writer.Do(c.r.Context(), fsm.CmdSessionDelete, fsm.Delete{ID: sess.ID})
	return err
}

// failedServiceRequests lists an identity's last fifty refused session requests.
func (s *Server) failedServiceRequests(c *call) error {
	id := c.param("id") // an existing identity (ofExistingRecords)
	out := []any{}
	for _, f := range c.tx.FailedRequests(id) {
		pfs := f.PolicyFailures
		if pfs == nil {
			pfs = []store.PolicyFailure{}
		}
		out = append(out, map[string]any{"apiSessionId": f.APISessionID, "serviceId": f.ServiceID, "serviceName": f.ServiceName,
			"sessionType": f.SessionType, "when": f.When, "reason": f.Reason, "policyFailures": pfs})
	}
	c.ok(out)
	return nil
}

// policyAdvice explains whether an identity may dial or bind a service and
// through which edge routers, computed by the same engine clients get.
func (s *Server) policyAdvice(c *call) error {
	ident, err := store.GetAs[*store.Identity](c.tx, store.KindIdentity, c.param("id"))
	if err != nil {
		return err
	}
	svc, err := store.GetAs[*store.Service](c.tx, store.KindService, c.param("serviceId"))
	if err != nil {
		return err
	}
	dial, bind := policy.Permissions(policy.PairGrants(c.tx, ident.ID, svc.ID), func(policy.Grant) bool { return true })
	mine, theirs := policy.IdentityEdgeRouters(c.tx, ident.ID), policy.ServiceEdgeRouters(c.tx, svc.ID)
	common := []any{}
	for _, id := range policy.SessionEdgeRouters(c.tx, ident.ID, svc.ID) {
		ref := s.entityRef(c.tx, store.KindEdgeRouter, "edge-routers", id)
		ref["isOnline"] = s.routerLive(id).Online
		// An extension for `edgectl why` and `verify`: whether it was ever enrolled.
		if er, err := store.GetAs[*store.EdgeRouter](c.tx, store.KindEdgeRouter, id); err == nil {
			ref["isVerified"] = er.IsVerified
		}
		common = append(common, ref)
	}
	grants := policy.PairGrants(c.tx, ident.ID, svc.ID)
	c.ok(map[string]any{
		"identityId": ident.ID, "identity": s.entityRef(c.tx, store.KindIdentity, "identities", ident.ID),
		"serviceId": svc.ID, "service": s.entityRef(c.tx, store.KindService, "services", svc.ID),
		"isDialAllowed": dial, "isBindAllowed": bind,
		"identityRouterCount": len(mine), "serviceRouterCount": len(theirs), "commonRouters": common,
		// Extensions for `edgectl why`: the granting policies by type, and
		// each of their posture checks judged for every API session of the
		// identity now (a grant with checks holds for a session that passes
		// them all).
		"dialPolicies": s.grantPolicies(c.tx, grants, "Dial"), "bindPolicies": s.grantPolicies(c.tx, grants, "Bind"),
		"postureChecks": s.grantChecks(c.tx, ident.ID, grants),
	})
	return nil
}

// grantPolicies are the policies of grants of type typ, as references.
func (s *Server) grantPolicies(tx *store.Tx, grants []policy.Grant, typ string) []any {
	out := []any{}
	for _, g := range grants {
		if g.Type == typ {
			out = append(out, s.entityRef(tx, store.KindServicePolicy, "service-policies", g.PolicyID))
		}
	}
	return out
}

// grantChecks judges each posture check of grants for every API session of
// the identity.
func (s *Server) grantChecks(tx *store.Tx, identityID string, grants []policy.Grant) []any {
	var sessions []*store.APISession
	tx.Each(store.KindAPISession, "identity", func(r store.Record) bool {
		sessions = append(sessions, r.(*store.APISession))
		return true
	}, identityID)
	out := []any{}
	seen := map[string]bool{}
	for _, g := range grants {
		for _, id := range g.Checks {
			if seen[g.PolicyID+"/"+id] {
				continue
			}
			seen[g.PolicyID+"/"+id] = true
			ref := s.entityRef(tx, store.KindPostureCheck, "posture-checks", id)
			ref["policyId"], ref["policyType"] = g.PolicyID, g.Type
			judged := []any{}
			for _, sess := range sessions {
				ok, fail := s.checkPasses(tx, sess, id)
				j := map[string]any{"apiSessionId": sess.ID, "passed": ok}
				if fail != nil {
					j["expected"], j["actual"] = fail.ExpectedValue, fail.ActualValue
				}
				judged = append(judged, j)
			}
			ref["apiSessions"] = judged
			out = append(out, ref)
		}
	}
	return out
}

// sessionRoutes are the session operations, and what an identity's session requests met.
func (s *Server) sessionRoutes() []route {
	return []route{
		{clientAPI, get, "/sessions", "listSessions", "Session", full, s.listSessions},
		{clientAPI, post, "/sessions", "createSession", "Session", full, s.createSession},
		{clientAPI, get, "/sessions/:id", "detailSession", "Session", full, s.getSession},
		{clientAPI, del, "/sessions/:id", "deleteSession", "Session", full, s.deleteSession},
		{managementAPI, get, "/sessions", "listSessions", "Session", admin, s.listSessions},
		{managementAPI, get, "/sessions/:id", "detailSession", "Session", admin, s.getSession},
		{managementAPI, del, "/sessions/:id", "deleteSession", "Session", admin, s.deleteSession},
		{managementAPI, get, "/identities/:id/failed-service-requests", "getIdentityFailedServiceRequests", "Identity", admin, s.failedServiceRequests},
		{managementAPI, get, "/identities/:id/policy-advice/:serviceId", "getIdentityPolicyAdvice", "Identity", admin, s.policyAdvice},
	}
}

// serviceSessionToken is a new session's token: with the cluster's
// data-plane keys, the JWT OpenZiti routers verify (pki.SignServiceAccess,
// its key published in the router data model); before a cluster has its
// keys, a random token that routers cannot use.
func (s *Server) serviceSessionToken(tx *store.Tx, id, apiSessionID, identityID, serviceID, typ string, now time.Time) (string, error) {
	k := tx.DataPlaneKeys()
	if k == nil {
		return auth.NewToken(), nil
	}
	key, err := s.sessionSigner(k.SigningKeyPEM)
	if err != nil {
		return "", err
	}
	return pki.SignServiceAccess(key, k.KeyID, pki.ServiceAccess{Issuer: s.cfg.AdvertiseURL, ServiceID: serviceID, SessionID: id,
		APISessionID: apiSessionID, IdentityID: identityID, Type: typ, IssuedAt: now,
		// A year, as OpenZiti's: the session ends with its API session, and routers are told.
		ExpiresAt: now.AddDate(1, 0, 0)})
}

// sessionSigner is the parsed session signing key, kept while the model's PEM is the same.
func (s *Server) sessionSigner(pemKey string) (crypto.Signer, error) {
	s.pkiMu.Lock()
	defer s.pkiMu.Unlock()
	if s.signerPEM == pemKey && s.signer != nil {
		return s.signer, nil
	}
	key, err := pki.ParseKeyPEM([]byte(pemKey))
	if err != nil {
		return nil, err
	}
	s.signer, s.signerPEM = key, pemKey
	return key, nil
}
