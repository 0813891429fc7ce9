package api

import (
	"testing"

	"edgectl/fsm"
	"edgectl/store"
)

// TestResources_EveryKindOfARelationHasItsView: relation lists show the
// records of both sides of every store relation with the kind's own view, so
// each of those kinds must have a resource (viewOf panics otherwise).
func TestResources_EveryKindOfARelationHasItsView(t *testing.T) {
	t.Parallel()
	s := New(Deps{Store: store.New()}, Config{})
	has := map[*store.Kind]bool{}
	paths := map[string]bool{}
	for _, r := range s.resources {
		if r.view == nil || r.routes == nil {
			t.Errorf("resource %s lacks a view or routes", r.path)
		}
		if has[r.kind] || paths[r.path] {
			t.Errorf("resource %s (%s) is listed twice", r.path, r.kind.Table)
		}
		has[r.kind], paths[r.path] = true, true
	}
	for _, rel := range store.Relations() {
		for _, k := range []*store.Kind{rel.Policy, rel.Entity} {
			if !has[k] {
				t.Errorf("relation %s: kind %s has no resource, so no view", rel.Name, k.Table)
			}
		}
	}
}

// Every resource is described for every consumer (the OpenAPI document,
// the CLI, export and the console read the description): a title, a
// singular, the columns a list shows; references and role arrays that name
// served resources; and an export place unless it is pinned here as one an
// export leaves out. A model kind is either served or pinned as internal.
func TestResources_EveryResourceIsDescribedForEveryConsumer(t *testing.T) {
	t.Parallel()
	notExported := map[string]string{
		"authenticators":       "credentials: an export holds no secrets",
		"cas":                  "trust anchors: moved by hand, with their verification",
		"external-jwt-signers": "trust anchors: moved by hand",
		"enrollments":          "one-time, made with their identity",
		"terminators":          "made by routers as services are hosted",
		"routers":              "enrolled, not declared",
		"event-subscriptions":  "hold a secret",
	}
	internal := map[*store.Kind]string{ // model kinds no resource serves
		store.KindSetting: "cluster settings", store.KindController: "cluster members (GET /controllers)",
		store.KindJoinToken: "cluster join tokens", store.KindPostureCheckType: "posture-check-types, a fixed list",
		store.KindIdentityServiceConfig: "an identity's service configs (GET /identities/{id}/service-configs)",
		store.KindFailedServiceRequest:  "an identity's failed service requests (a relation list)",
		store.KindPostureData:           "an identity's posture data (a relation list)",
		store.KindAPISessionCertificate: "an API session's certificates (Client API)",
		store.KindCertExtension:         "certificate extension requests (Client API)",
		store.KindMFA:                   "an identity's MFA enrollment (Client API, /current-identity/mfa)",
		store.KindLoginFailures:         "lockout counters",
		store.KindEvent:                 "the audit stream (GET /events)",
	}
	s := New(Deps{Store: store.New()}, Config{})
	infos := s.resourceInfos()
	served := map[string]ResourceInfo{}
	for _, r := range infos {
		served[r.Path] = r
	}
	for _, r := range infos {
		if r.Title == "" || r.One == "" {
			t.Errorf("%s: no title or singular", r.Path)
		}
		for f, target := range r.Refs {
			if _, ok := served[target]; !ok {
				t.Errorf("%s.%s refers to %q, which is not a resource", r.Path, f, target)
			}
		}
		for f, target := range r.Roles {
			if served[target].Attrs == "" {
				t.Errorf("%s.%s selects %q, whose records have no role attributes", r.Path, f, target)
			}
		}
		if r.Path == "circuits" {
			continue // node-local: listed by the CLI only
		}
		if len(r.Columns) == 0 {
			t.Errorf("%s: no columns", r.Path)
		}
		if r.Create && r.Export == 0 && notExported[r.Path] == "" {
			t.Errorf("%s can be created but has no export place: give it one, or say here why an export leaves it out", r.Path)
		}
		if r.Export > 0 && notExported[r.Path] != "" {
			t.Errorf("%s is exported and pinned as not exported", r.Path)
		}
	}
	has := map[*store.Kind]bool{}
	for _, r := range s.resources {
		has[r.kind] = true
		// The audit stream and webhooks name a changed record by its resource.
		info := served[r.path]
		if typ, ok := fsm.EntityType(r.kind); (info.Create || info.Update) && (!ok || typ != r.path) {
			t.Errorf("%s: its changes are not entity events named %q (fsm/events.go, entityTypes: %q)", r.path, r.path, typ)
		}
	}
	for _, k := range store.AllKinds {
		if !has[k] && internal[k] == "" {
			t.Errorf("model kind %s has no resource: describe one in resourceTable, or pin it here as internal", k.Table)
		}
	}
}

// The served document carries the description: the resources, and in the
// request bodies each field's references, role targets and order.
func TestResources_TheOpenAPIDocumentCarriesTheDescription(t *testing.T) {
	t.Parallel()
	s := New(Deps{Store: store.New()}, Config{})
	doc := s.openAPI(managementAPI)
	if rs, _ := doc["x-edgectl-resources"].([]ResourceInfo); len(rs) != len(s.resourceInfos()) {
		t.Fatalf("x-edgectl-resources: %d resources, want %d", len(rs), len(s.resourceInfos()))
	}
	body := func(path, method string) map[string]any {
		op := doc["paths"].(map[string]map[string]any)[path][method].(map[string]any)
		return op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	}
	cfg := body("/configs", "post")
	if got := cfg["properties"].(map[string]any)["configTypeId"].(map[string]any)["x-edgectl-ref"]; got != "config-types" {
		t.Errorf("configTypeId's x-edgectl-ref: %v", got)
	}
	if order, _ := cfg["x-edgectl-order"].([]string); len(order) != 4 || order[0] != "configTypeId" {
		t.Errorf("x-edgectl-order of a config create: %v", order)
	}
	sp := body("/service-policies/{id}", "patch")
	if got := sp["properties"].(map[string]any)["serviceRoles"].(map[string]any)["x-edgectl-roles"]; got != "services" {
		t.Errorf("serviceRoles' x-edgectl-roles: %v", got)
	}
	if _, ok := body("/configs/{id}", "patch")["properties"].(map[string]any)["configTypeId"]; ok {
		t.Error("a config's type is in its PATCH body: the console would offer to change it")
	}
}
