package main

// References between records: names where the API takes ids (writes) and
// names for ids (tables).

import (
	"fmt"
	"strings"
)

// roleResources are the resources the role arrays of policies select.
var roleResources = map[string]string{"identityRoles": "identities", "serviceRoles": "services",
	"edgeRouterRoles": "edge-routers", "postureCheckRoles": "posture-checks"}

// refResources are the fields that hold the id of another record (or a list
// of ids: configs), by the resource they name.
var refResources = map[string]string{"configTypeId": "config-types", "authPolicyId": "auth-policies",
	"identityId": "identities", "serviceId": "services", "caId": "cas", "configs": "configs"}

// resolveRoleNames turns names into ids where the API takes ids: "@name"
// entries of role arrays become "@id", and reference fields (configTypeId,
// configs, authPolicyId, ...) take a name or an id.
func (c *client) resolveRoleNames(body map[string]any) error {
	for field, path := range roleResources {
		roles, ok := body[field].([]any)
		if !ok {
			continue
		}
		r, err := resourceByName(path)
		if err != nil {
			return err
		}
		for i, e := range roles {
			s, _ := e.(string)
			if !strings.HasPrefix(s, "@") {
				continue
			}
			id, err := c.resolve(r, s[1:])
			if err != nil {
				return fmt.Errorf("%s[%d] %q: %w", field, i, s, err)
			}
			roles[i] = "@" + id
		}
	}
	for field, path := range refResources {
		r, err := resourceByName(path)
		if err != nil {
			return err
		}
		switch v := body[field].(type) {
		case string:
			id, err := c.resolve(r, v)
			if err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			body[field] = id
		case []any:
			for i, e := range v {
				s, ok := e.(string)
				if !ok {
					continue
				}
				id, err := c.resolve(r, s)
				if err != nil {
					return fmt.Errorf("%s[%d]: %w", field, i, err)
				}
				v[i] = id
			}
		}
	}
	return nil
}

// namesForIDs rewrites, in records about to be shown as a table, the ids
// that stand for other records into their names: "@id" entries of role
// arrays and the reference fields (configs, configTypeId, identityId...).
// An id whose record is gone, or one it cannot look up, stays as it is.
func (c *client) namesForIDs(items []map[string]any) {
	wanted := map[string]map[string]bool{} // resource path -> ids
	want := func(path, id string) {
		if wanted[path] == nil {
			wanted[path] = map[string]bool{}
		}
		wanted[path][id] = true
	}
	for _, it := range items {
		for field, path := range roleResources {
			for _, e := range asList(it[field]) {
				if s, _ := e.(string); strings.HasPrefix(s, "@") {
					want(path, s[1:])
				}
			}
		}
		for field, path := range refResources {
			if s, ok := it[field].(string); ok && s != "" {
				want(path, s)
			}
			for _, e := range asList(it[field]) {
				if s, ok := e.(string); ok {
					want(path, s)
				}
			}
		}
	}
	names := map[string]map[string]string{}
	for path, ids := range wanted {
		r, err := resourceByName(path)
		if err != nil || !r.Named {
			continue
		}
		quoted := make([]string, 0, len(ids))
		for id := range ids {
			quoted = append(quoted, `"`+strings.ReplaceAll(id, `"`, `\"`)+`"`)
		}
		recs, err := c.listAll("/"+path, "id in ["+strings.Join(quoted, ",")+"]", 0)
		if err != nil {
			continue
		}
		names[path] = map[string]string{}
		for _, rec := range recs {
			id, _ := rec["id"].(string)
			name, _ := rec["name"].(string)
			names[path][id] = name
		}
	}
	name := func(path, id string) string {
		if n := names[path][id]; n != "" {
			return n
		}
		return id
	}
	for _, it := range items {
		for field, path := range roleResources {
			for i, e := range asList(it[field]) {
				if s, _ := e.(string); strings.HasPrefix(s, "@") {
					it[field].([]any)[i] = "@" + name(path, s[1:])
				}
			}
		}
		for field, path := range refResources {
			if s, ok := it[field].(string); ok && s != "" {
				it[field] = name(path, s)
			}
			for i, e := range asList(it[field]) {
				if s, ok := e.(string); ok {
					it[field].([]any)[i] = name(path, s)
				}
			}
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
