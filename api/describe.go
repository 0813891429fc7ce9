package api

import (
	"net/http"
	"strings"

	"edgectl/store"
)

// The description of the Management API's resources, as tools read it. It
// is derived from the resource table (resources.go) and the route table,
// and served in the OpenAPI document: the resources under
// x-edgectl-resources, and each request body's fields with x-edgectl-*
// keywords (describeField). The CLI takes it from ManagementResources (the
// same code) and the served document; the console only from the document.

// ResourceInfo describes one Management API resource.
type ResourceInfo struct {
	Path  string `json:"path"`
	Title string `json:"title"` // "Edge routers"
	One   string `json:"one"`   // "edge router"
	Named bool   `json:"named"` // its records have unique names
	// Columns are the fields a list shows (dotted paths into the view).
	Columns []string `json:"columns"`
	// Relations are its related lists (GET /path/{id}/relation).
	Relations []string `json:"relations"`
	// Create, Update and Delete: the API takes POST /path, PATCH
	// /path/{id}, DELETE /path/{id}.
	Create bool `json:"create"`
	Update bool `json:"update"`
	Delete bool `json:"delete"`
	// Export is its place in export and apply order (1 first); 0: not exported.
	Export int `json:"export"`
	// Builtin marks the records the controller makes itself: a record is
	// one when it has all the values of one entry.
	Builtin []map[string]any `json:"builtin"`
	// Refs: its fields that hold the id (or ids) of another record, and
	// that record's resource. Roles: its role arrays, and the resource they
	// select.
	Refs  map[string]string `json:"refs"`
	Roles map[string]string `json:"roles"`
	// Enrollment: "identity" or "router" when its records enroll.
	Enrollment string `json:"enrollment,omitempty"`
	// Attrs is the list of its records' role attributes.
	Attrs string `json:"attrs,omitempty"`
}

// IsBuiltin reports whether rec, as the API shows it, is one the controller
// made itself.
func (r *ResourceInfo) IsBuiltin(rec map[string]any) bool {
	for _, b := range r.Builtin {
		match := true
		for k, v := range b {
			if rec[k] != v {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// ManagementResources lists the Management API's resources from the same
// resource and route tables the server is built from.
func ManagementResources() []ResourceInfo {
	return New(Deps{Store: store.New()}, Config{}).resourceInfos()
}

// extraResources are served but are not model resources with fields:
// circuits and router links are node-local (listed and deleted; links
// changed: their PATCH body is in routeBodies), posture check types a
// fixed list.
var extraResources = []ResourceInfo{
	{Path: "circuits", Title: "Circuits", One: "circuit", Delete: true},
	{Path: "links", Title: "Links", One: "link", Update: true, Delete: true,
		Columns: []string{"sourceRouter.name", "destRouter.name", "state", "cost", "protocol", "dialAddress"}},
	{Path: "posture-check-types", Title: "Posture check types", One: "posture check type", Named: true, Columns: []string{"name"}},
}

func (s *Server) resourceInfos() []ResourceInfo {
	has := map[string]bool{} // "METHOD path"
	for _, rt := range s.routes {
		if rt.api == managementAPI {
			has[rt.method+" "+rt.path] = true
		}
	}
	var out []ResourceInfo
	for _, r := range s.resources {
		base := "/" + r.path
		info := ResourceInfo{Path: r.path, Title: r.about.title, One: r.about.one, Named: r.kind.Named,
			Columns: r.about.columns, Export: r.about.export, Builtin: r.about.builtin,
			Enrollment: r.about.enrollment, Attrs: r.about.attrs,
			Create: has[http.MethodPost+" "+base], Update: has[http.MethodPatch+" "+base+"/:id"],
			Delete: has[http.MethodDelete+" "+base+"/:id"],
			Refs:   map[string]string{}, Roles: map[string]string{}}
		prefix := base + "/:id/"
		for _, rt := range s.routes {
			// Lists under the record (not the CA's JWT, which is a document).
			if rt.api == managementAPI && rt.method == get && !strings.HasSuffix(rt.path, "/jwt") &&
				strings.HasPrefix(rt.path, prefix) && !strings.Contains(rt.path[len(prefix):], "/") {
				info.Relations = append(info.Relations, rt.path[len(prefix):])
			}
		}
		for _, f := range r.fields {
			if f.ref != "" {
				info.Refs[f.name] = f.ref
			}
			if f.roles != "" {
				info.Roles[f.name] = f.roles
			}
		}
		out = append(out, info)
	}
	return append(out, extraResources...)
}

// describeField adds to a field's schema what it means to people and tools:
// x-edgectl-ref (the resource whose ids it holds), x-edgectl-roles (the
// resource its role selectors select), x-edgectl-read (the view's name for
// it, when it differs), and how a form shows it (description, default,
// x-edgectl-label, -placeholder, -input, -attrs, -value).
func describeField(f *field, sc map[string]any) {
	set := func(k string, v any, ok bool) {
		if ok {
			sc[k] = v
		}
	}
	set("x-edgectl-ref", f.ref, f.ref != "")
	set("x-edgectl-roles", f.roles, f.roles != "")
	set("x-edgectl-read", f.to, f.to != "")
	set("default", f.def, f.def != nil)
	u := f.ui
	set("description", u.help, u.help != "")
	set("x-edgectl-label", u.label, u.label != "")
	set("x-edgectl-placeholder", u.placeholder, u.placeholder != "")
	set("x-edgectl-input", u.input, u.input != "")
	set("x-edgectl-attrs", u.attrs, u.attrs != "")
	set("x-edgectl-value", u.value, u.value != nil)
}
