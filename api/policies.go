package api

import (
	"encoding/json"
	"fmt"
	"strings"

	"edgectl/fsm"
	"edgectl/policy"
	"edgectl/store"
)

// rolesField is a role array (conventions §6): each entry #attr, #all or @id.
// In a PATCH, null leaves it as it is: generated clients send null for the
// role arrays they do not change.
func rolesField(name string) field {
	return field{name: name, kind: fCustom, nullable: true, def: []string{}, patchNullKeeps: true,
		schema: map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, custom: func(raw json.RawMessage) (any, error) {
			var roles []string
			if err := unmarshalField(name, raw, &roles); err != nil {
				return nil, err
			}
			for i, r := range roles {
				if _, err := policy.ParseSelector([]string{r}, policy.AllOf); err != nil {
					return nil, invalidField(fmt.Sprintf("%s[%d]", name, i), "a role must be #attribute, #all or @id", r)
				}
			}
			if roles == nil {
				roles = []string{}
			}
			return roles, nil
		}}
}

var semanticField = field{name: "semantic", kind: fString, required: true, enum: []string{policy.AllOf, policy.AnyOf}}

// policyFamily describes one policy kind: its fields and role arrays.
type policyFamily struct {
	kind   *store.Kind
	path   string
	fields []field
	roles  []policyRoles
	about  about
}

// policyRoles is one role array of a policy kind and what it selects.
type policyRoles struct {
	field  string
	rel    string
	entity *store.Kind
	path   string // path of the selected entities, for links and refs
	roles  func(store.Record) []string
}

func (s *Server) policyFamilies() []*policyFamily {
	pfs := []*policyFamily{
		{kind: store.KindServicePolicy, path: "service-policies",
			fields: []field{
				{name: "name", kind: fString, required: true, min: 1, max: 255},
				{name: "type", kind: fString, required: true, enum: []string{"Dial", "Bind"}},
				semanticField, rolesField("identityRoles"), rolesField("serviceRoles"), rolesField("postureCheckRoles"), tagsField,
			},
			roles: []policyRoles{
				{"identityRoles", store.RelServicePolicyIdentity, store.KindIdentity, "identities", func(r store.Record) []string { return r.(*store.ServicePolicy).IdentityRoles }},
				{"serviceRoles", store.RelServicePolicyService, store.KindService, "services", func(r store.Record) []string { return r.(*store.ServicePolicy).ServiceRoles }},
				{"postureCheckRoles", store.RelServicePolicyPostureCheck, store.KindPostureCheck, "posture-checks", func(r store.Record) []string { return r.(*store.ServicePolicy).PostureCheckRoles }},
			},
			about: about{title: "Service policies", one: "service policy", export: 8,
				columns: []string{"name", "type", "semantic", "identityRoles", "serviceRoles", "postureCheckRoles"}}},
		{kind: store.KindEdgeRouterPolicy, path: "edge-router-policies",
			fields: []field{
				{name: "name", kind: fString, required: true, min: 1, max: 255},
				semanticField, rolesField("identityRoles"), rolesField("edgeRouterRoles"), tagsField,
			},
			roles: []policyRoles{
				{"identityRoles", store.RelEdgeRouterPolicyIdentity, store.KindIdentity, "identities", func(r store.Record) []string { return r.(*store.EdgeRouterPolicy).IdentityRoles }},
				{"edgeRouterRoles", store.RelEdgeRouterPolicyEdgeRouter, store.KindEdgeRouter, "edge-routers", func(r store.Record) []string { return r.(*store.EdgeRouterPolicy).EdgeRouterRoles }},
			},
			about: about{title: "Edge router policies", one: "edge router policy", export: 9,
				columns: []string{"name", "semantic", "identityRoles", "edgeRouterRoles", "isSystem"},
				builtin: []map[string]any{{"isSystem": true}}}},
		{kind: store.KindServiceEdgeRouterPolicy, path: "service-edge-router-policies",
			fields: []field{
				{name: "name", kind: fString, required: true, min: 1, max: 255},
				semanticField, rolesField("serviceRoles"), rolesField("edgeRouterRoles"), tagsField,
			},
			roles: []policyRoles{
				{"serviceRoles", store.RelSERPService, store.KindService, "services", func(r store.Record) []string { return r.(*store.ServiceEdgeRouterPolicy).ServiceRoles }},
				{"edgeRouterRoles", store.RelSERPEdgeRouter, store.KindEdgeRouter, "edge-routers", func(r store.Record) []string { return r.(*store.ServiceEdgeRouterPolicy).EdgeRouterRoles }},
			},
			about: about{title: "Service edge router policies", one: "service edge router policy", export: 10,
				columns: []string{"name", "semantic", "serviceRoles", "edgeRouterRoles"}}},
	}
	for _, pf := range pfs { // each role array field names what it selects
		for _, pr := range pf.roles {
			for i := range pf.fields {
				if pf.fields[i].name == pr.field {
					pf.fields[i].roles = pr.path
				}
			}
		}
	}
	return pfs
}

// policyRoutes are the CRUD operations of one policy kind.
func (s *Server) policyRoutes(pf *policyFamily) []route {
	title := opTitle(pf.path)
	base := "/" + pf.path
	return []route{
		{managementAPI, get, base, "list" + opPlural(title), title, admin, func(c *call) error {
			return c.listKind(pf.kind, false, func(r store.Record) any { return s.policyView(c.tx, pf, r) })
		}},
		{managementAPI, post, base, "create" + title, title, admin, func(c *call) error { return s.createPolicy(c, pf) }},
		{managementAPI, get, base + "/:id", "detail" + title, title, admin, func(c *call) error {
			r, err := c.tx.Get(pf.kind, c.param("id"))
			if err != nil {
				return err
			}
			c.ok(s.policyView(c.tx, pf, r))
			return nil
		}},
		{managementAPI, put, base + "/:id", "update" + title, title, admin, func(c *call) error { return s.updatePolicy(c, pf, modePut) }},
		{managementAPI, patch, base + "/:id", "patch" + title, title, admin, func(c *call) error { return s.updatePolicy(c, pf, modePatch) }},
		{managementAPI, del, base + "/:id", "delete" + title, title, admin, func(c *call) error {
			_, err := s.Writer.Do(c.r.Context(), fsm.CmdPolicyDelete, fsm.PolicyDelete{Table: pf.kind.Table, ID: c.param("id")})
			return err
		}},
	}
}

// opTitle turns "service-policies" into "ServicePolicy" for operation ids.
func opTitle(path string) string {
	out := []byte{}
	up := true
	for i := 0; i < len(path); i++ {
		ch := path[i]
		if ch == '-' {
			up = true
			continue
		}
		if up && ch >= 'a' && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		up = false
		out = append(out, ch)
	}
	s := string(out)
	switch {
	case len(s) > 3 && s[len(s)-3:] == "ies":
		return s[:len(s)-3] + "y"
	case len(s) > 1 && s[len(s)-1] == 's':
		return s[:len(s)-1]
	}
	return s
}

// opPlural is the plural of an operation title ("ServicePolicy" →
// "ServicePolicies"), as routes.md names list operations.
func opPlural(title string) string {
	if strings.HasSuffix(title, "y") {
		return title[:len(title)-1] + "ies"
	}
	return title + "s"
}

func (s *Server) createPolicy(c *call, pf *policyFamily) error {
	rec := pf.kind.New()
	if _, err := s.newRecord(c, rec, pf.fields, nil); err != nil {
		return err
	}
	b := store.BaseOf(rec)
	enc, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdPolicyCreate, fsm.PolicyCreate{Table: pf.kind.Table, Policy: enc}); err != nil {
		return err
	}
	c.created(pf.path, b.ID)
	return nil
}

func (s *Server) updatePolicy(c *call, pf *policyFamily, m mode) error {
	id := c.param("id")
	if !c.tx.Exists(pf.kind, id) {
		return notFound(pf.kind.Entity, id)
	}
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(raw, pf.fields, m)
	if err != nil {
		return err
	}
	_, err = s.Writer.Do(c.r.Context(), fsm.CmdPolicyUpdate, fsm.PolicyUpdate{Table: pf.kind.Table, Update: fsm.Update{ID: id, Patch: p.patch, At: s.now()}})
	return err
}

// policyView shows a policy with its role arrays and their display forms.
func (s *Server) policyView(tx *store.Tx, pf *policyFamily, r store.Record) map[string]any {
	b := store.BaseOf(r)
	links := selfLinks(pf.path, b.ID)
	v := map[string]any{
		"_links": links, "id": b.ID, "createdAt": b.CreatedAt, "updatedAt": b.UpdatedAt,
		"tags": tagsOrEmpty(b.Tags), "name": r.RecordName(),
	}
	for _, pr := range pf.roles {
		roles := nonNilStrings(pr.roles(r))
		v[pr.field] = roles
		v[pr.field+"Display"] = s.rolesDisplay(tx, pr.entity, roles)
		links[pr.path] = map[string]string{"href": "./" + pf.path + "/" + b.ID + "/" + pr.path}
	}
	switch p := r.(type) {
	case *store.ServicePolicy:
		v["type"], v["semantic"] = p.Type, p.Semantic
	case *store.EdgeRouterPolicy:
		v["semantic"], v["isSystem"] = p.Semantic, p.IsSystem
	case *store.ServiceEdgeRouterPolicy:
		v["semantic"] = p.Semantic
	}
	return v
}

// rolesDisplay is the {role, name} form of a role array (conventions §6).
func (s *Server) rolesDisplay(tx *store.Tx, k *store.Kind, roles []string) []map[string]string {
	out := make([]map[string]string, 0, len(roles))
	for _, r := range roles {
		name := r
		switch {
		case r == "#all":
			name = "all"
		case len(r) > 1 && r[0] == '#':
			name = r[1:]
		case len(r) > 1 && r[0] == '@':
			name = r[1:]
			if e, err := tx.Get(k, r[1:]); err == nil {
				name = e.RecordName()
			}
		}
		out = append(out, map[string]string{"role": r, "name": name})
	}
	return out
}
