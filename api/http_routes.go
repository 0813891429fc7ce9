package api

import "net/http"

// routeTable lists every operation this node serves: the routes of every
// resource, then the operations that are not a resource's. It drives the
// router, the OpenAPI documents and the route tests alike.
func (s *Server) routeTable() []route {
	var all []route
	for _, r := range s.resources {
		all = append(all, r.routes()...)
	}
	for _, ops := range []func() []route{
		s.infoRoutes,
		s.authenticateRoutes,
		s.currentIdentityRoutes,
		s.mfaRoutes,
		s.enrollRoutes,
		s.sessionCertRoutes,
		s.certExtendRoutes,
		s.clientServiceRoutes,
		s.postureDataRoutes,
		s.roleAttributeRoutes,
		s.serviceConfigRoutes,
		s.relationRoutes,
		s.clusterRoutes,
		s.joinRoutes,
	} {
		all = append(all, ops()...)
	}
	return all
}

// Methods, short, for the route tables.
const (
	get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
)
