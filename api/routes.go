package api

import "net/http"

// routeTable lists every operation this node serves. It drives the router,
// the OpenAPI documents and the route tests alike.
func (s *Server) routeTable() []route {
	var all []route
	for _, family := range []func() []route{
		s.coreRoutes,
		s.authnRoutes,
		s.authFlowRoutes,
		s.serviceFamilyRoutes,
		s.routerRoutes,
		s.policyRoutes,
		s.relationRoutes,
		s.clusterRoutes,
		s.joinRoutes,
		s.clientRoutes,
		s.enrollRoutes,
		s.postureDataRoutes,
	} {
		all = append(all, family()...)
	}
	return all
}

// Methods, short, for the route tables.
const (
	get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
)

// coreRoutes are the informational, authentication, identity and API session operations.
func (s *Server) coreRoutes() []route {
	return []route{
		// Informational
		{bothAPIs, get, "/", "listRoot", "Informational", public, s.getVersion},
		{bothAPIs, get, "/version", "listVersion", "Informational", public, s.getVersion},
		{bothAPIs, get, "/specs", "listSpecs", "Informational", public, s.listSpecs},
		{bothAPIs, get, "/specs/:id", "detailSpec", "Informational", public, s.getSpec},
		{bothAPIs, get, "/specs/:id/spec", "detailSpecBody", "Informational", public, s.getSpecBody},
		{bothAPIs, get, "/.well-known/est/cacerts", "listWellKnownCas", "Well Known", public, s.wellKnownCACerts},
		{managementAPI, get, "/summary", "listSummary", "Informational", admin, s.summary},
		{bothAPIs, get, "/controllers", "listControllers", "Controllers", full, s.listControllers},

		// Authentication and the caller's own session
		{bothAPIs, post, "/authenticate", "authenticate", "Authentication", public, s.authenticate},
		{bothAPIs, get, "/current-api-session", "getCurrentAPISession", "Current API Session", partial, s.currentAPISession},
		{bothAPIs, del, "/current-api-session", "logout", "Current API Session", partial, s.logout},
		{bothAPIs, get, "/current-identity", "getCurrentIdentity", "Current Identity", full, s.getCurrentIdentity},

		// Identities
		{managementAPI, get, "/identities", "listIdentities", "Identity", admin, s.listIdentities},
		{managementAPI, post, "/identities", "createIdentity", "Identity", admin, s.createIdentity},
		{managementAPI, get, "/identities/:id", "detailIdentity", "Identity", admin, s.getIdentity},
		{managementAPI, put, "/identities/:id", "updateIdentity", "Identity", admin, s.updateIdentity(modePut)},
		{managementAPI, patch, "/identities/:id", "patchIdentity", "Identity", admin, s.updateIdentity(modePatch)},
		{managementAPI, del, "/identities/:id", "deleteIdentity", "Identity", admin, s.deleteIdentity},
		{managementAPI, get, "/identities/:id/authenticators", "getIdentityAuthenticators", "Identity", admin, s.identityAuthenticators},
		{managementAPI, post, "/identities/:id/disable", "disableIdentity", "Identity", admin, s.disableIdentity},
		{managementAPI, post, "/identities/:id/enable", "enableIdentity", "Identity", admin, s.enableIdentity},
		{managementAPI, put, "/identities/:id/trace", "updateIdentityTracing", "Identity, Tracing", admin, s.traceIdentity},
		{bothAPIs, get, "/enumerated-capabilities", "listEnumeratedCapabilities", "Informational", public, s.enumeratedCapabilities},
		{managementAPI, get, "/identity-types", "listIdentityTypes", "Identity", admin, s.listIdentityTypes},
		{managementAPI, get, "/identity-types/:id", "detailIdentityType", "Identity", admin, s.getIdentityType},

		// API sessions
		{managementAPI, get, "/api-sessions", "listAPISessions", "API Session", admin, s.listAPISessions},
		{managementAPI, get, "/api-sessions/:id", "detailAPISessions", "API Session", admin, s.getAPISession},
		{managementAPI, del, "/api-sessions/:id", "deleteAPISessions", "API Session", admin, s.deleteAPISession},
	}
}
