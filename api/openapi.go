package api

import (
	"encoding/json"
	"net/http"
	"strings"
)

// openAPI builds the OpenAPI 3 document of what this node implements for one
// API, from the same route table that drives the router, with request and
// response schemas derived from the code that reads and writes them:
//
//   - request bodies from the resources' field tables (the same ones that
//     validate the bodies: types, enums, lengths, ranges, required fields);
//   - answers from the resources' views, by encoding the view of an empty
//     record and describing its JSON (every property nullable, additional
//     properties allowed, since a view shows more once a record has data);
//   - every error as the error envelope of conventions §3.
//
// TestOpenAPI_AnswersMatchTheDocument checks the answers of the API tests
// against it, so the document cannot drift from the code.
func (s *Server) openAPI(a apiKind) map[string]any {
	title, prefix := "Edge Client API", ClientPrefix
	if a == managementAPI {
		title, prefix = "Edge Management API", ManagementPrefix
	}
	resources := map[string]*resource{}
	for i := range s.resources {
		resources["/"+s.resources[i].path] = &s.resources[i]
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
			"responses":   s.openAPIResponses(rt, resources),
		}
		if body := s.openAPIRequest(rt, resources); body != nil {
			op["requestBody"] = body
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
	version := s.cfg.Version
	if version == "" {
		version = "dev" // a build without a release number
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": title, "version": version},
		"servers": []any{map[string]string{"url": s.cfg.AdvertiseURL + prefix}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"ztSession": map[string]string{"type": "apiKey", "in": "header", "name": "svc-session"},
			},
			"schemas": map[string]any{
				"meta":          metaSchema,
				"apiError":      errorSchema,
				"errorEnvelope": objectSchema(map[string]any{"error": schemaRef("apiError"), "meta": schemaRef("meta")}, "error"),
				"createdEnvelope": objectSchema(map[string]any{
					"data": objectSchema(map[string]any{"id": strSchema(), "_links": objSchema()}, "id"),
					"meta": schemaRef("meta"),
				}, "data"),
				"emptyEnvelope": objectSchema(map[string]any{"data": objSchema(), "meta": schemaRef("meta")}),
				"anyEnvelope":   objectSchema(map[string]any{"data": map[string]any{"nullable": true}, "meta": schemaRef("meta")}),
			},
		},
	}
	if a == managementAPI {
		doc["x-edgectl-resources"] = s.resourceInfos()
	}
	return doc
}

// routeResource finds the resource a CRUD route serves and whether the route
// is on one record (/path/:id).
func routeResource(rt route, resources map[string]*resource) (*resource, bool) {
	if r := resources[rt.path]; r != nil {
		return r, false
	}
	if base, ok := strings.CutSuffix(rt.path, "/:id"); ok {
		if r := resources[base]; r != nil {
			return r, true
		}
	}
	return nil, false
}

// openAPIRequest is the request body of a create, PUT or PATCH of a
// resource, from its field table, or of another operation that takes one
// (routeBodies); nil for the others.
func (s *Server) openAPIRequest(rt route, resources map[string]*resource) map[string]any {
	if fields, ok := routeBodies[rt.method+" "+rt.path]; ok {
		return map[string]any{"required": true, "content": map[string]any{
			"application/json": map[string]any{"schema": bodySchema(fields, modePatch)}}}
	}
	r, one := routeResource(rt, resources)
	if r == nil || r.fields == nil || rt.api != managementAPI {
		return nil
	}
	var m mode
	switch {
	case rt.method == http.MethodPost && !one:
		m = modeCreate
	case rt.method == http.MethodPut && one:
		m = modePut
	case rt.method == http.MethodPatch && one:
		m = modePatch
	default:
		return nil
	}
	return map[string]any{"required": m != modePatch, "content": map[string]any{
		"application/json": map[string]any{"schema": bodySchema(r.fields, m)}}}
}

// openAPIResponses are the answers of an operation: its success with the
// schema it is known to have, and every error as the error envelope.
func (s *Server) openAPIResponses(rt route, resources map[string]*resource) map[string]any {
	errResp := func(d string) map[string]any {
		return map[string]any{"description": d, "content": jsonContent(schemaRef("errorEnvelope"))}
	}
	out := map[string]any{
		"400": errResp("Bad request: the error names the field and the reason"),
		"401": errResp("No valid API session"),
		"403": errResp("Not allowed"),
		"404": errResp("Not found"),
		"409": errResp("Conflict"),
		"429": errResp("Too many attempts"),
		"503": errResp("The cluster cannot take the request now"),
		// Other successes (a PEM, a JWT, a 201 of an action) are described
		// by the operation's text in the specification.
		"default": map[string]any{"description": "Other answers"},
	}
	r, one := routeResource(rt, resources)
	if r == nil || rt.api != managementAPI {
		out["200"] = map[string]any{"description": "OK"}
		return out
	}
	view := s.viewSchema(r)
	switch {
	case rt.method == http.MethodGet && !one:
		out["200"] = map[string]any{"description": "The list", "content": jsonContent(objectSchema(map[string]any{
			"data": map[string]any{"type": "array", "items": view}, "meta": schemaRef("meta")}, "data", "meta"))}
	case rt.method == http.MethodGet:
		out["200"] = map[string]any{"description": "The record", "content": jsonContent(objectSchema(map[string]any{
			"data": view, "meta": schemaRef("meta")}, "data", "meta"))}
	case rt.method == http.MethodPost && !one:
		out["201"] = map[string]any{"description": "Created", "content": jsonContent(schemaRef("createdEnvelope"))}
	default:
		out["200"] = map[string]any{"description": "OK", "content": jsonContent(schemaRef("emptyEnvelope"))}
	}
	return out
}

// viewSchema describes the view of an empty record of r: its properties
// with the JSON types they have there, all nullable.
func (s *Server) viewSchema(r *resource) (schema map[string]any) {
	defer func() {
		if recover() != nil { // a view that needs data to show anything
			schema = objSchema()
		}
	}()
	raw, err := json.Marshal(r.view(s.Store.Read(), r.kind.New()))
	if err != nil {
		return objSchema()
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return objSchema()
	}
	return jsonSchemaOf(v)
}

// jsonSchemaOf describes a decoded JSON value: its type, nullable.
func jsonSchemaOf(v any) map[string]any {
	switch x := v.(type) {
	case string:
		return map[string]any{"type": "string", "nullable": true}
	case bool:
		return map[string]any{"type": "boolean", "nullable": true}
	case float64:
		return map[string]any{"type": "number", "nullable": true}
	case []any:
		items := map[string]any{}
		if len(x) > 0 {
			items = jsonSchemaOf(x[0])
		}
		return map[string]any{"type": "array", "nullable": true, "items": items}
	case map[string]any:
		props := map[string]any{}
		for k, e := range x {
			props[k] = jsonSchemaOf(e)
		}
		return map[string]any{"type": "object", "nullable": true, "properties": props}
	}
	return map[string]any{"nullable": true}
}

// bodySchema describes a request body of the fields for mode m.
func bodySchema(fields []field, m mode) map[string]any {
	props := map[string]any{}
	var required, order []string
	for i := range fields {
		f := &fields[i]
		if f.create && m != modeCreate {
			continue
		}
		props[f.name] = fieldSchema(f)
		order = append(order, f.name)
		if f.required && m != modePatch {
			required = append(required, f.name)
		}
	}
	sc := objectSchema(props, required...)
	sc["x-edgectl-order"] = order // the fields in the order a form shows them
	return sc
}

// fieldSchema describes one field as its decoder takes it.
func fieldSchema(f *field) map[string]any {
	var sc map[string]any
	switch f.kind {
	case fString:
		sc = map[string]any{"type": "string"}
		if f.enum != nil {
			sc["enum"] = f.enum
		}
		if f.min > 0 {
			sc["minLength"] = f.min
		}
		if f.max > 0 {
			sc["maxLength"] = f.max
		}
	case fBool:
		sc = map[string]any{"type": "boolean"}
	case fInt:
		sc = map[string]any{"type": "integer"}
		if f.min != 0 || f.max != 0 {
			sc["minimum"], sc["maximum"] = f.min, f.max
		}
	case fStringList:
		sc = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	case fTags, fObject:
		sc = objSchema()
	case fIntMap:
		sc = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "integer"}}
	case fEnumMap:
		sc = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string", "enum": f.enum}}
	case fTime:
		sc = map[string]any{"type": "string", "format": "date-time"}
	default: // fCustom: its decoder says; described by its schema, else as any value
		sc = map[string]any{}
		for k, v := range f.schema {
			sc[k] = v
		}
	}
	if f.nullable {
		sc["nullable"] = true
	}
	describeField(f, sc)
	return sc
}

var (
	metaSchema = objectSchema(map[string]any{
		"apiVersion": strSchema(), "apiEnrollmentVersion": strSchema(),
		"pagination":       objectSchema(map[string]any{"limit": intSchema(), "offset": intSchema(), "totalCount": intSchema()}),
		"filterableFields": map[string]any{"type": "array", "items": strSchema()},
	})
	errorSchema = objectSchema(map[string]any{
		"code": strSchema(), "message": strSchema(), "requestId": strSchema(),
		"cause": map[string]any{"nullable": true},
	}, "code", "message")
)

func objectSchema(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func schemaRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}
func strSchema() map[string]any { return map[string]any{"type": "string"} }
func intSchema() map[string]any { return map[string]any{"type": "integer"} }
func objSchema() map[string]any { return map[string]any{"type": "object"} }
func jsonContent(schema map[string]any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
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
