package api

import (
	"fmt"

	"edgectl/store"
)

// resource is one record kind the Management API serves, described once:
// its kind, path, Management view (the one its own detail answer shows,
// which the relation lists of other resources reuse), routes, writable
// fields, and what it means to people and tools (about). Everything else
// is derived from this table: the router, the OpenAPI document (with the
// description under x-edgectl-resources), the CLI's resources, names for
// ids and export order, and the console's lists and forms. Adding a
// resource is one entry here plus its file (docs/architecture.md).
type resource struct {
	kind   *store.Kind
	path   string
	view   func(tx *store.Tx, r store.Record) any
	routes func() []route
	// fields are the writable fields of its create (and PUT and PATCH),
	// for the OpenAPI document; nil for a read-only resource.
	fields []field
	about  about
}

// about is what a resource means to people and tools.
type about struct {
	title, one string   // "Edge routers", "edge router"
	columns    []string // the fields a list shows (dotted paths into the view)
	// export is the resource's place in `edgectl export` and apply (1 comes
	// first: a record only names records of earlier places); 0: not exported.
	export int
	// builtin marks the records the controller makes itself, which exports
	// leave out: a record is one when it has all the values of one entry.
	builtin []map[string]any
	// enrollment: the record enrolls ("identity" or "router"), so its detail
	// view offers its enrollment.
	enrollment string
	// attrs is the list of its records' role attributes (GET /attrs), when
	// its records have role attributes that policies select.
	attrs string
}

// resourceTable lists the resources, in the order people look for them
// (the console's): identities and services, then their policies (once per
// policy kind), then the rest.
func (s *Server) resourceTable() []resource {
	rs := []resource{
		{kind: store.KindIdentity, path: "identities", routes: s.identityRoutes, fields: identityFields,
			view: func(tx *store.Tx, r store.Record) any { return s.identityView(tx, r.(*store.Identity)) },
			about: about{title: "Identities", one: "identity", export: 7, enrollment: "identity", attrs: "identity-role-attributes",
				columns: []string{"name", "type.name", "isAdmin", "roleAttributes", "hasApiSession", "createdAt"},
				builtin: []map[string]any{{"isDefaultAdmin": true}}}},
		{kind: store.KindService, path: "services", routes: s.serviceRoutes, fields: serviceFields,
			view: func(tx *store.Tx, r store.Record) any { return s.serviceView(tx, r.(*store.Service)) },
			about: about{title: "Services", one: "service", export: 5, attrs: "service-role-attributes",
				columns: []string{"name", "roleAttributes", "terminatorStrategy", "encryptionRequired", "createdAt"}}},
	}
	for _, pf := range s.policyFamilies() {
		rs = append(rs, resource{kind: pf.kind, path: pf.path, fields: pf.fields, about: pf.about,
			view:   func(tx *store.Tx, r store.Record) any { return s.policyView(tx, pf, r) },
			routes: func() []route { return s.policyRoutes(pf) }})
	}
	rs = append(rs, []resource{
		{kind: store.KindEdgeRouter, path: "edge-routers", routes: s.edgeRouterRoutes, fields: edgeRouterFields,
			view: func(_ *store.Tx, r store.Record) any {
				return edgeRouterView(r.(*store.EdgeRouter), s.routerLive(r.GetID()))
			},
			about: about{title: "Edge routers", one: "edge router", export: 6, enrollment: "router", attrs: "edge-router-role-attributes",
				columns: []string{"name", "roleAttributes", "isOnline", "isVerified", "cost", "createdAt"}}},
		{kind: store.KindRouter, path: "routers", routes: s.routerRoutes, fields: routerFields,
			view: func(_ *store.Tx, r store.Record) any {
				return routerView(r.(*store.Router), "routers", s.routerLive(r.GetID()))
			},
			about: about{title: "Routers", one: "router", enrollment: "router",
				columns: []string{"name", "isOnline", "isVerified", "cost", "createdAt"}}},
		{kind: store.KindPostureCheck, path: "posture-checks", routes: s.postureCheckRoutes, fields: postureDocFields(),
			view: func(_ *store.Tx, r store.Record) any { return postureCheckView(r.(*store.PostureCheck)) },
			about: about{title: "Posture checks", one: "posture check", export: 4, attrs: "posture-check-role-attributes",
				columns: []string{"name", "typeId", "roleAttributes", "version"}}},
		{kind: store.KindConfig, path: "configs", routes: s.configRoutes, fields: configFields,
			view:  func(tx *store.Tx, r store.Record) any { return s.configView(tx, r.(*store.Config)) },
			about: about{title: "Configs", one: "config", export: 3, columns: []string{"name", "configType.name", "createdAt"}}},
		{kind: store.KindConfigType, path: "config-types", routes: s.configTypeRoutes, fields: configTypeFields,
			view: func(_ *store.Tx, r store.Record) any { return configTypeView(r.(*store.ConfigType)) },
			about: about{title: "Config types", one: "config type", export: 2, columns: []string{"name", "createdAt"},
				builtin: builtinConfigTypeIDs()}},
		{kind: store.KindAuthPolicy, path: "auth-policies", routes: s.authPolicyRoutes, fields: authPolicyFields(modeCreate),
			view: func(_ *store.Tx, r store.Record) any { return authPolicyView(r.(*store.AuthPolicy)) },
			about: about{title: "Auth policies", one: "auth policy", export: 1, columns: []string{"name", "secondary.requireTotp", "createdAt"},
				builtin: []map[string]any{{"id": store.DefaultAuthPolicyID}}}},
		{kind: store.KindCA, path: "cas", routes: s.caRoutes, fields: caFields(modeCreate),
			view: func(_ *store.Tx, r store.Record) any { return caView(r.(*store.CA)) },
			about: about{title: "Certificate authorities", one: "CA",
				columns: []string{"name", "isVerified", "isAuthEnabled", "isAutoCaEnrollmentEnabled", "isOttCaEnrollmentEnabled"}}},
		{kind: store.KindExternalJWTSigner, path: "external-jwt-signers", routes: s.extJWTSignerRoutes, fields: extJWTSignerFields,
			view:  func(_ *store.Tx, r store.Record) any { return extJWTSignerView(r.(*store.ExternalJWTSigner)) },
			about: about{title: "External JWT signers", one: "external JWT signer", columns: []string{"name", "issuer", "audience", "enabled"}}},
		{kind: store.KindEnrollment, path: "enrollments", routes: s.enrollmentRoutes, fields: enrollmentCreateFields,
			view:  func(tx *store.Tx, r store.Record) any { return s.enrollmentView(tx, r.(*store.Enrollment)) },
			about: about{title: "Enrollments", one: "enrollment", columns: []string{"method", "identity.name", "username", "expiresAt"}}},
		{kind: store.KindAuthenticator, path: "authenticators", routes: s.authenticatorRoutes, fields: authenticatorCreateFields,
			view: func(tx *store.Tx, r store.Record) any { return s.authenticatorMgmtView(tx, r.(*store.Authenticator)) },
			about: about{title: "Authenticators", one: "authenticator",
				columns: []string{"method", "identity.name", "username", "fingerprint", "createdAt"}}},
		{kind: store.KindAPISession, path: "api-sessions", routes: s.apiSessionRoutes,
			view: func(tx *store.Tx, r store.Record) any { return s.apiSessionView(tx, r.(*store.APISession), "") },
			about: about{title: "API sessions", one: "API session",
				columns: []string{"identity.name", "ipAddress", "isMfaComplete", "lastActivityAt", "createdAt"}}},
		{kind: store.KindSession, path: "sessions", routes: s.sessionRoutes,
			view:  func(tx *store.Tx, r store.Record) any { return s.sessionView(tx, r.(*store.Session)) },
			about: about{title: "Sessions", one: "session", columns: []string{"type", "identity.name", "service.name", "createdAt"}}},
		{kind: store.KindTerminator, path: "terminators", routes: s.terminatorRoutes, fields: terminatorFields,
			view: func(tx *store.Tx, r store.Record) any {
				return s.terminatorView(tx, r.(*store.Terminator), managementAPI)
			},
			about: about{title: "Terminators", one: "terminator",
				columns: []string{"service.name", "router.name", "binding", "address", "createdAt"}}},
		{kind: store.KindIdentityType, path: "identity-types", routes: s.identityTypeRoutes,
			view:  func(_ *store.Tx, r store.Record) any { return namedView(r, "identity-types") },
			about: about{title: "Identity types", one: "identity type", columns: []string{"name"}}},
		{kind: store.KindEventSubscription, path: "event-subscriptions", routes: s.eventSubscriptionRoutes, fields: eventSubscriptionFields,
			view: func(tx *store.Tx, r store.Record) any { return eventSubscriptionView(tx, r.(*store.EventSubscription)) },
			about: about{title: "Event subscriptions", one: "event subscription",
				columns: []string{"name", "url", "isEnabled", "lastDeliveredId", "pending", "lastError"}}},
	}...)
	return rs
}

// builtinConfigTypeIDs marks the built-in config types, by id.
func builtinConfigTypeIDs() []map[string]any {
	var out []map[string]any
	for _, id := range store.BuiltinConfigTypeIDs() {
		out = append(out, map[string]any{"id": id})
	}
	return out
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
