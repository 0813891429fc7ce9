package api

// identityTypeRoutes are the identity type operations.
func (s *Server) identityTypeRoutes() []route {
	return []route{
		{managementAPI, get, "/identity-types", "listIdentityTypes", "Identity", admin, s.listIdentityTypes},
		{managementAPI, get, "/identity-types/:id", "detailIdentityType", "Identity", admin, s.getIdentityType},
	}
}
