package cli

// References between records: names where the API takes ids (writes) and
// names for ids (tables).

import (
	"fmt"
	"maps"
	"strings"
	"sync"

	"edgectl/api"
)

// managementResources is the API's description of its resources (the
// same tables the server is built from), made once.
var managementResources = sync.OnceValue(api.ManagementResources)

// fieldResources are, by field name over every resource, the role arrays
// and the resource they select (identityRoles → identities), and the
// fields that hold the id of another record, or a list of ids, and the
// resource they name (configTypeId → config-types).
var fieldResources = sync.OnceValues(func() (roles, refs map[string]string) {
	roles, refs = map[string]string{}, map[string]string{}
	for _, r := range managementResources() {
		maps.Copy(roles, r.Roles)
		maps.Copy(refs, r.Refs)
	}
	return roles, refs
})

// walkRefs calls fn for each reference to another record in rec: the
// "@ref" entries of role arrays (ref without its "@") and the reference
// fields, scalar or list; where is how an error names the place
// (identityRoles[2], configTypeId). What fn returns replaces the reference
// (the "@" kept); an error stops the walk.
func walkRefs(rec map[string]any, fn func(path, ref, where string) (string, error)) error {
	roleResources, refResources := fieldResources()
	for field, path := range roleResources {
		roles, _ := rec[field].([]any)
		for i, e := range roles {
			if s, _ := e.(string); strings.HasPrefix(s, "@") {
				out, err := fn(path, s[1:], fmt.Sprintf("%s[%d] %q", field, i, s))
				if err != nil {
					return err
				}
				roles[i] = "@" + out
			}
		}
	}
	for field, path := range refResources {
		switch v := rec[field].(type) {
		case string:
			if v == "" {
				continue
			}
			out, err := fn(path, v, field)
			if err != nil {
				return err
			}
			rec[field] = out
		case []any:
			for i, e := range v {
				if s, ok := e.(string); ok {
					out, err := fn(path, s, fmt.Sprintf("%s[%d]", field, i))
					if err != nil {
						return err
					}
					v[i] = out
				}
			}
		}
	}
	return nil
}

// resolveRoleNames turns names into ids where the API takes ids: "@name"
// entries of role arrays become "@id", and reference fields (configTypeId,
// configs, authPolicyId, ...) take a name or an id.
func (c *client) resolveRoleNames(body map[string]any) error {
	return walkRefs(body, func(path, ref, where string) (string, error) {
		r, err := resourceByName(path)
		if err != nil {
			return "", err
		}
		id, err := c.resolve(r, ref)
		if err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		return id, nil
	})
}

// namesForIDs rewrites, in records about to be shown as a table, the ids
// that stand for other records into their names (walkRefs), with one
// lookup per resource. An id whose record is gone, or one it cannot look
// up, stays as it is.
func (c *client) namesForIDs(items []map[string]any) {
	wanted := map[string]map[string]bool{} // resource path -> ids
	for _, it := range items {
		_ = walkRefs(it, func(path, id, _ string) (string, error) {
			if wanted[path] == nil {
				wanted[path] = map[string]bool{}
			}
			wanted[path][id] = true
			return id, nil
		})
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
	for _, it := range items {
		_ = walkRefs(it, func(path, id, _ string) (string, error) {
			if n := names[path][id]; n != "" {
				return n, nil
			}
			return id, nil
		})
	}
}
