package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/policy"
	"edgectl/store"
)

// postureTypeAliases are the other typeId spellings accepted for a type: the
// typed schema names DOMAIN payloads after the operation.
var postureTypeAliases = map[string]string{
	"postureCheckDomainCreate": policy.CheckDomain,
	"postureCheckDomainUpdate": policy.CheckDomain,
	"postureCheckDomainPatch":  policy.CheckDomain,
}

// postureCommonFields are the writable fields every posture check has.
var postureCommonFields = []field{
	{name: "name", kind: fString, required: true, min: 1, max: 255},
	{name: "roleAttributes", kind: fStringList, nullable: true, min: 1, max: 255},
	tagsField,
}

// postureDocFields describe a posture check body for the OpenAPI document
// (and so for the CLI, which types --set by it and refuses fields it lacks):
// the common fields, typeId, and every type's own fields, none required
// (which ones a check needs depends on its type).
func postureDocFields() []field {
	types := slices.Sorted(maps.Keys(postureTypes))
	out := append(slices.Clone(postureCommonFields), field{name: "typeId", kind: fString, required: true, enum: types})
	for _, t := range types {
		for _, f := range postureTypes[t].fields {
			if !slices.ContainsFunc(out, func(o field) bool { return o.name == f.name }) {
				f.required = false
				f.ui.help = t // a form shows which type takes it
				out = append(out, f)
			}
		}
	}
	return out
}

// postureType is the API's part of a posture check type (policy.CheckType
// is the rest): its writable fields and how its own fields are shown.
type postureType struct {
	fields []field
	view   func(pc *store.PostureCheck, v map[string]any)
}

// postureTypes has an entry for every policy.CheckTypes() type; a test checks that.
var postureTypes = map[string]postureType{
	policy.CheckOS: {
		fields: []field{{name: "operatingSystems", kind: fCustom, required: true, custom: decodeOperatingSystems}},
		view:   func(pc *store.PostureCheck, v map[string]any) { v["operatingSystems"] = osView(pc.OperatingSystems) },
	},
	policy.CheckMAC: {
		fields: []field{{name: "macAddresses", kind: fCustom, required: true, custom: decodeMacAddresses, ui: fieldUI{input: "list"}}},
		view:   func(pc *store.PostureCheck, v map[string]any) { v["macAddresses"] = nonNilStrings(pc.MacAddresses) },
	},
	policy.CheckMFA: {
		fields: []field{
			{name: "timeoutSeconds", kind: fInt, nullable: true, min: -1, max: math.MaxInt32, def: 0},
			{name: "promptOnWake", kind: fBool, nullable: true, def: false},
			{name: "promptOnUnlock", kind: fBool, nullable: true, def: false},
		},
		view: func(pc *store.PostureCheck, v map[string]any) {
			v["timeoutSeconds"], v["promptOnWake"], v["promptOnUnlock"] = pc.TimeoutSeconds, pc.PromptOnWake, pc.PromptOnUnlock
		},
	},
	policy.CheckProcess: {
		fields: []field{{name: "process", kind: fCustom, required: true, custom: func(raw json.RawMessage) (any, error) {
			return decodeProcess("process", raw)
		}}},
		view: func(pc *store.PostureCheck, v map[string]any) {
			if pc.Process != nil {
				v["process"] = processView(*pc.Process)
			}
		},
	},
	policy.CheckProcessMulti: {
		fields: []field{
			// AnyOf is what generated clients send for OneOf: the same meaning, shown as sent.
			{name: "semantic", kind: fString, required: true, enum: []string{"AllOf", "OneOf", "AnyOf"}},
			{name: "processes", kind: fCustom, required: true, custom: decodeProcesses},
		},
		view: func(pc *store.PostureCheck, v map[string]any) {
			ps := []any{}
			for _, p := range pc.Processes {
				ps = append(ps, processView(p))
			}
			v["semantic"], v["processes"] = pc.Semantic, ps
		},
	},
	policy.CheckDomain: {
		fields: []field{{name: "domains", kind: fCustom, required: true, custom: decodeDomains, ui: fieldUI{input: "list"}}},
		view:   func(pc *store.PostureCheck, v map[string]any) { v["domains"] = nonNilStrings(pc.Domains) },
	},
}

// postureFields are the writable fields of a posture check of type t.
func postureFields(t string) []field {
	return append(append([]field{}, postureCommonFields...), postureTypes[t].fields...)
}

// postureTypeOf reads the required typeId of a body and returns its canonical form.
func postureTypeOf(raw map[string]json.RawMessage) (string, error) {
	rv, ok := raw["typeId"]
	if !ok {
		return "", invalidField("typeId", "is required", nil)
	}
	var t string
	if err := unmarshalField("typeId", rv, &t); err != nil {
		return "", err
	}
	if a, ok := postureTypeAliases[t]; ok {
		t = a
	}
	if _, ok := policy.LookupCheckType(t); !ok {
		return "", invalidField("typeId", "must be one of "+strings.Join(policy.CheckTypeNames(), ", "), t)
	}
	if t == policy.CheckDomain {
		// The spec's narrative sample for DOMAIN carries the domain names in
		// a field named macAddresses; the typed schema's field is domains.
		// Accept the sample's spelling when domains is absent.
		if mac, ok := raw["macAddresses"]; ok {
			if _, has := raw["domains"]; !has {
				raw["domains"] = mac
			}
			delete(raw, "macAddresses")
		}
	}
	return t, nil
}

// postureBody decodes a posture check body and its canonical type.
func postureBody(c *call) (map[string]json.RawMessage, string, error) {
	raw, err := decodeObject(c.r)
	if err != nil {
		return nil, "", err
	}
	t, err := postureTypeOf(raw)
	return raw, t, err
}

func (s *Server) createPostureCheck(c *call) error {
	raw, t, err := postureBody(c)
	if err != nil {
		return err
	}
	p, err := parseFields(raw, postureFields(t), modeCreate)
	if err != nil {
		return err
	}
	pc := &store.PostureCheck{}
	if err := fill(pc, p.patch); err != nil {
		return err
	}
	now := s.now()
	pc.ID, pc.CreatedAt, pc.UpdatedAt, pc.TypeID = auth.NewID(), now, now, t
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdPostureCheckCreate, pc); err != nil {
		return err
	}
	c.created("posture-checks", pc.ID)
	return nil
}

// updatePostureCheck serves PUT and PATCH. Both carry the typeId, which must
// be the check's own: the type is fixed when the check is created.
func (s *Server) updatePostureCheck(m mode) func(c *call) error {
	return func(c *call) error {
		id := c.param("id")
		old, err := store.GetAs[*store.PostureCheck](c.tx, store.KindPostureCheck, id)
		if err != nil {
			return err
		}
		raw, t, err := postureBody(c)
		if err != nil {
			return err
		}
		if t != old.TypeID {
			return invalidField("typeId", fmt.Sprintf("the type of a posture check cannot change (it is %s)", old.TypeID), t)
		}
		p, err := parseFields(raw, postureFields(t), m)
		if err != nil {
			return err
		}
		_, err = s.Writer.Do(c.r.Context(), fsm.CmdPostureCheckUpdate, fsm.Update{ID: id, Patch: p.patch, At: s.now()})
		return err
	}
}

func (s *Server) deletePostureCheck(c *call) error {
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdPostureCheckDelete, fsm.Delete{ID: c.param("id")})
	return err
}

func (s *Server) getPostureCheck(c *call) error {
	pc, err := store.GetAs[*store.PostureCheck](c.tx, store.KindPostureCheck, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(postureCheckView(pc))
	return nil
}

func (s *Server) listPostureChecks(c *call) error {
	return c.listKind(store.KindPostureCheck, true, func(r store.Record) any { return postureCheckView(r.(*store.PostureCheck)) })
}

// postureCheckView shows the common fields and those of the check's type.
func postureCheckView(pc *store.PostureCheck) map[string]any {
	v := map[string]any{
		"_links":         selfLinks("posture-checks", pc.ID),
		"id":             pc.ID,
		"createdAt":      pc.CreatedAt,
		"updatedAt":      pc.UpdatedAt,
		"tags":           tagsOrEmpty(pc.Tags),
		"name":           pc.Name,
		"roleAttributes": nonNilStrings(pc.RoleAttributes),
		"typeId":         pc.TypeID,
		"version":        pc.Version,
	}
	if t, ok := postureTypes[pc.TypeID]; ok {
		t.view(pc, v)
	}
	return v
}

func osView(l []store.OperatingSystem) []any {
	out := []any{}
	for _, o := range l {
		out = append(out, map[string]any{"type": o.Type, "versions": nonNilStrings(o.Versions)})
	}
	return out
}

func processView(p store.Process) map[string]any {
	// "os" is the spec's name for the field in PROCESS_MULTI; "osType" the typed schema's.
	return map[string]any{"osType": p.OSType, "os": p.OSType, "path": p.Path,
		"hashes": nonNilStrings(p.Hashes), "signerFingerprints": nonNilStrings(p.SignerFingerprints)}
}

func (s *Server) listPostureCheckTypes(c *call) error {
	return c.listKind(store.KindPostureCheckType, false, func(r store.Record) any { return postureCheckTypeView(r.(*store.PostureCheckType)) })
}

func (s *Server) getPostureCheckType(c *call) error {
	t, err := store.GetAs[*store.PostureCheckType](c.tx, store.KindPostureCheckType, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(postureCheckTypeView(t))
	return nil
}

func postureCheckTypeView(t *store.PostureCheckType) map[string]any {
	v := namedRecordView(t, "posture-check-types", t.Tags)
	v["operatingSystems"], v["version"] = osView(t.OperatingSystems), t.Version
	return v
}

// postureCheckRoutes are the posture check and posture check type operations.
func (s *Server) postureCheckRoutes() []route {
	return append(crudRoutes("/posture-checks", "PostureCheck", "PostureChecks", "Posture Checks", crudOps{list: s.listPostureChecks, create: s.createPostureCheck, detail: s.getPostureCheck, update: s.updatePostureCheck, del: s.deletePostureCheck}),
		route{managementAPI, get, "/posture-check-types", "listPostureCheckTypes", "Posture Checks", admin, s.listPostureCheckTypes},
		route{managementAPI, get, "/posture-check-types/:id", "detailPostureCheckType", "Posture Checks", admin, s.getPostureCheckType},
	)
}
