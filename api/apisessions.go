package api

import (
	"math"

	"edgectl/fsm"
	"edgectl/store"
)

func (s *Server) listAPISessions(c *call) error {
	return c.listKind(store.KindAPISession, false, func(r store.Record) any {
		return s.apiSessionView(c.tx, r.(*store.APISession), "")
	})
}

func (s *Server) getAPISession(c *call) error {
	sess, err := store.GetAs[*store.APISession](c.tx, store.KindAPISession, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(s.apiSessionView(c.tx, sess, ""))
	return nil
}

// deleteAPISession ends an API session on every node.
func (s *Server) deleteAPISession(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindAPISession, id) {
		return notFound("API session", id)
	}
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdAPISessionsDelete, fsm.DeleteMany{IDs: []string{id}})
	if err == nil {
		s.Activity.Forget([]string{id})
	}
	return err
}

// apiSessionRoutes are the API session operations.
func (s *Server) apiSessionRoutes() []route {
	return []route{
		// API sessions
		{managementAPI, get, "/api-sessions", "listAPISessions", "API Session", admin, s.listAPISessions},
		{managementAPI, get, "/api-sessions/:id", "detailAPISessions", "API Session", admin, s.getAPISession},
		{managementAPI, del, "/api-sessions/:id", "deleteAPISessions", "API Session", admin, s.deleteAPISession},
	}
}

// apiSessionView is the API session as the APIs show it. token is shown only
// to its owner, who sent it.
func (s *Server) apiSessionView(tx *store.Tx, sess *store.APISession, token string) map[string]any {
	last := s.Activity.Last(sess)
	v := map[string]any{
		"_links":               selfLinks("api-sessions", sess.ID),
		"id":                   sess.ID,
		"createdAt":            sess.CreatedAt,
		"updatedAt":            sess.UpdatedAt,
		"tags":                 tagsOrEmpty(sess.Tags),
		"authQueries":          nonNilQueries(sess.AuthQueries),
		"authenticatorId":      sess.AuthenticatorID,
		"cachedLastActivityAt": sess.CachedLastActivityAt,
		"lastActivityAt":       last,
		"configTypes":          nonNilStrings(sess.ConfigTypes),
		"identity":             s.entityRef(tx, store.KindIdentity, "identities", sess.IdentityID),
		"identityId":           sess.IdentityID,
		"ipAddress":            sess.IPAddress,
		"isMfaComplete":        sess.IsMfaComplete,
		"isMfaRequired":        sess.IsMfaRequired,
	}
	if token != "" {
		exp := last.Add(s.cfg.SessionTimeout)
		v["token"] = token
		v["expiresAt"] = exp
		// Rounded up: 1800 at authenticate even when the write took a while.
		v["expirationSeconds"] = int64(math.Ceil(exp.Sub(s.now()).Seconds()))
	}
	return v
}

func nonNilQueries(q []store.AuthQuery) []store.AuthQuery {
	if q == nil {
		return []store.AuthQuery{}
	}
	return q
}
