package api

import "edgectl/store"

// identityTypeRoutes are the identity type operations.
func (s *Server) identityTypeRoutes() []route {
	return []route{
		{managementAPI, get, "/identity-types", "listIdentityTypes", "Identity", admin, s.listIdentityTypes},
		{managementAPI, get, "/identity-types/:id", "detailIdentityType", "Identity", admin, s.getIdentityType},
	}
}

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
