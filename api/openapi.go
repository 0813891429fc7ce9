package api

import (
	"strings"
)

// openAPI builds the OpenAPI 3 document of what this node implements for one
// API, from the same route table that drives the router.
func (s *Server) openAPI(a apiKind) map[string]any {
	title, prefix := "Edge Client API", ClientPrefix
	if a == managementAPI {
		title, prefix = "Edge Management API", ManagementPrefix
	}
	paths := map[string]map[string]any{}
	for _, rt := range s.routes {
		if rt.api != a {
			continue
		}
		p := openAPIPath(rt.path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		op := map[string]any{
			"operationId": rt.op,
			"tags":        strings.Split(rt.tag, ", "),
			"responses": map[string]any{
				"200": map[string]any{"description": "OK"},
				"400": map[string]any{"description": "Bad request: the error names the field and the reason"},
				"401": map[string]any{"description": "No valid API session"},
			},
		}
		if rt.access != public {
			op["security"] = []any{map[string]any{"ztSession": []string{}}}
		}
		var params []any
		for _, seg := range strings.Split(rt.path, "/") {
			if strings.HasPrefix(seg, ":") {
				params = append(params, map[string]any{"name": seg[1:], "in": "path", "required": true, "schema": map[string]string{"type": "string"}})
			}
		}
		if params != nil {
			op["parameters"] = params
		}
		paths[p][strings.ToLower(rt.method)] = op
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": title, "version": s.cfg.Version},
		"servers": []any{map[string]string{"url": s.cfg.AdvertiseURL + prefix}},
		"paths":   paths,
		"components": map[string]any{"securitySchemes": map[string]any{
			"ztSession": map[string]string{"type": "apiKey", "in": "header", "name": "svc-session"},
		}},
	}
}

// openAPIPath turns /identities/:id into /identities/{id}.
func openAPIPath(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, ":") {
			segs[i] = "{" + seg[1:] + "}"
		}
	}
	return strings.Join(segs, "/")
}
