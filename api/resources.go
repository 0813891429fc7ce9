package api

import (
	"fmt"
	"strings"

	"edgectl/store"
)

// resource is one record kind the Management API serves: its kind, its
// path, its Management view (the one its own detail answer shows, which the
// relation lists of other resources reuse) and its routes. The table is
// built once in New; adding a resource is one entry here plus its file.
type resource struct {
	kind   *store.Kind
	path   string
	view   func(tx *store.Tx, r store.Record) any
	routes func() []route
	// fields are the writable fields of its create (and PUT and PATCH),
	// for the OpenAPI document; nil for a read-only resource.
	fields []field
}

// resourceTable lists the resources. Policies appear once per policy kind.
func (s *Server) resourceTable() []resource {
	rs := []resource{
		{store.KindIdentity, "identities", func(tx *store.Tx, r store.Record) any { return s.identityView(tx, r.(*store.Identity)) }, s.identityRoutes, identityFields},
		{store.KindIdentityType, "identity-types", func(_ *store.Tx, r store.Record) any { return namedView(r, "identity-types") }, s.identityTypeRoutes, nil},
		{store.KindAPISession, "api-sessions", func(tx *store.Tx, r store.Record) any { return s.apiSessionView(tx, r.(*store.APISession), "") }, s.apiSessionRoutes, nil},
		{store.KindAuthPolicy, "auth-policies", func(_ *store.Tx, r store.Record) any { return authPolicyView(r.(*store.AuthPolicy)) }, s.authPolicyRoutes, authPolicyFields(modeCreate)},
		{store.KindAuthenticator, "authenticators", func(tx *store.Tx, r store.Record) any { return s.authenticatorMgmtView(tx, r.(*store.Authenticator)) }, s.authenticatorRoutes, authenticatorCreateFields},
		{store.KindCA, "cas", func(_ *store.Tx, r store.Record) any { return caView(r.(*store.CA)) }, s.caRoutes, caFields(modeCreate)},
		{store.KindExternalJWTSigner, "external-jwt-signers", func(_ *store.Tx, r store.Record) any { return extJWTSignerView(r.(*store.ExternalJWTSigner)) }, s.extJWTSignerRoutes, extJWTSignerFields},
		{store.KindEnrollment, "enrollments", func(tx *store.Tx, r store.Record) any { return s.enrollmentView(tx, r.(*store.Enrollment)) }, s.enrollmentRoutes, enrollmentCreateFields},
		{store.KindConfigType, "config-types", func(_ *store.Tx, r store.Record) any { return configTypeView(r.(*store.ConfigType)) }, s.configTypeRoutes, configTypeFields},
		{store.KindConfig, "configs", func(tx *store.Tx, r store.Record) any { return s.configView(tx, r.(*store.Config)) }, s.configRoutes, configFields},
		{store.KindService, "services", func(tx *store.Tx, r store.Record) any { return s.serviceView(tx, r.(*store.Service)) }, s.serviceRoutes, serviceFields},
		{store.KindTerminator, "terminators", func(tx *store.Tx, r store.Record) any { return s.terminatorView(tx, r.(*store.Terminator)) }, s.terminatorRoutes, terminatorFields},
		{store.KindEdgeRouter, "edge-routers", func(_ *store.Tx, r store.Record) any {
			return edgeRouterView(r.(*store.EdgeRouter), s.routerLive(r.GetID()))
		}, s.edgeRouterRoutes, edgeRouterFields},
		{store.KindRouter, "routers", func(_ *store.Tx, r store.Record) any {
			return routerView(r.(*store.Router), "routers", s.routerLive(r.GetID()))
		}, s.routerRoutes, routerFields},
		{store.KindPostureCheck, "posture-checks", func(_ *store.Tx, r store.Record) any { return postureCheckView(r.(*store.PostureCheck)) }, s.postureCheckRoutes, postureDocFields()},
		{store.KindEventSubscription, "event-subscriptions", func(tx *store.Tx, r store.Record) any {
			return eventSubscriptionView(tx, r.(*store.EventSubscription))
		}, s.eventSubscriptionRoutes, eventSubscriptionFields},
		{store.KindSession, "sessions", func(tx *store.Tx, r store.Record) any { return s.sessionView(tx, r.(*store.Session)) }, s.sessionRoutes, nil},
	}
	for _, pf := range s.policyFamilies() {
		rs = append(rs, resource{pf.kind, pf.path, func(tx *store.Tx, r store.Record) any { return s.policyView(tx, pf, r) },
			func() []route { return s.policyRoutes(pf) }, pf.fields})
	}
	return rs
}

// viewOf returns the Management view of a kind. Every kind a relation list
// can show has a resource (a test checks that), so a missing one is a
// programming error, not a reason to show a lesser view.
func (s *Server) viewOf(k *store.Kind) func(tx *store.Tx, r store.Record) any {
	for _, r := range s.resources {
		if r.kind == k {
			return r.view
		}
	}
	panic(fmt.Sprintf("api: no resource serves kind %s", k.Table))
}

// ResourceInfo describes one Management API resource for clients such as
// the CLI: its path, whether its records have names, and its relation lists
// (GET /path/{id}/relation).
type ResourceInfo struct {
	Path      string
	Named     bool
	Relations []string
}

// ManagementResources lists the Management API's resources from the same
// resource and route tables the server is built from.
func ManagementResources() []ResourceInfo {
	s := New(Deps{Store: store.New()}, Config{})
	var out []ResourceInfo
	for _, r := range s.resources {
		info := ResourceInfo{Path: r.path, Named: r.kind.Named}
		prefix := "/" + r.path + "/:id/"
		for _, rt := range s.routes {
			// Lists under the record (not the CA's JWT, which is a document).
			if rt.api == managementAPI && rt.method == get && !strings.HasSuffix(rt.path, "/jwt") &&
				strings.HasPrefix(rt.path, prefix) && !strings.Contains(rt.path[len(prefix):], "/") {
				info.Relations = append(info.Relations, rt.path[len(prefix):])
			}
		}
		out = append(out, info)
	}
	// Circuits are node-local, not a model resource: listed and deleted only.
	return append(out, ResourceInfo{Path: "circuits"})
}
