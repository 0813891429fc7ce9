package api

import (
	"edgectl/fsm"
	"edgectl/store"
)

func (s *Server) listIdentityTypes(c *call) error {
	return c.listKind(store.KindIdentityType, false, func(r store.Record) any { return namedView(r, "identity-types") })
}

func (s *Server) getIdentityType(c *call) error {
	r, err := c.tx.Get(store.KindIdentityType, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(namedView(r, "identity-types"))
	return nil
}

// namedView shows a record that has only the base fields and a name.
func namedView(r store.Record, path string) map[string]any {
	return map[string]any{
		"_links": selfLinks(path, r.GetID()), "id": r.GetID(), "name": r.RecordName(),
		"createdAt": created(r), "updatedAt": updated(r), "tags": map[string]any{},
	}
}

func created(r store.Record) any { return store.BaseOf(r).CreatedAt }
func updated(r store.Record) any { return store.BaseOf(r).UpdatedAt }

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
