package api

import (
	"sort"

	"edgectl/store"
	"edgectl/store/filter"
)

// roleAttributeValue reads a role attribute list entry, which is the attribute string itself.
var roleAttributeValue = filter.StringField(func(r any) string { return r.(string) })

// roleAttributeFields are the filterable fields of the role attribute lists.
// Clients of this API family filter these lists on "id"; "name" is accepted
// as a synonym. Both are the attribute.
var roleAttributeFields = &filter.Schema{Fields: map[string]filter.Field{
	"id":   roleAttributeValue,
	"name": roleAttributeValue,
}}

// listRoleAttributes serves the list of role attributes in use by records of
// kind k: data is an array of strings, in byte order, filtered and paged like
// any list. The attributes come from the per-kind counts the store keeps up
// to date on every write, so no record is read.
func (s *Server) listRoleAttributes(k *store.Kind) func(c *call) error {
	return func(c *call) error {
		lr, err := c.parseList(roleAttributeFields, false)
		if err != nil {
			return err
		}
		var matches []string
		c.tx.RoleAttributes(k, func(attr string) bool {
			if lr.q.Match(attr) {
				matches = append(matches, attr)
			}
			return true
		})
		if lr.q.HasSort() {
			sort.SliceStable(matches, func(i, j int) bool { return lr.q.Compare(matches[i], matches[j]) < 0 })
		}
		data := []string{}
		for i := lr.offset; i < len(matches) && (lr.all || len(data) < lr.limit); i++ {
			data = append(data, matches[i])
		}
		limit := lr.limit
		if lr.all {
			limit = len(matches)
		}
		c.okMeta(data, map[string]any{
			"pagination":       map[string]any{"limit": limit, "offset": lr.offset, "totalCount": len(matches)},
			"filterableFields": roleAttributeFields.Names(),
		})
		return nil
	}
}

// roleAttributeRoutes are the role attribute lists.
func (s *Server) roleAttributeRoutes() []route {
	return []route{
		{managementAPI, get, "/edge-router-role-attributes", "listEdgeRouterRoleAttributes", "Role Attributes", admin, s.listRoleAttributes(store.KindEdgeRouter)},
		{managementAPI, get, "/identity-role-attributes", "listIdentityRoleAttributes", "Role Attributes", admin, s.listRoleAttributes(store.KindIdentity)},
		{managementAPI, get, "/service-role-attributes", "listServiceRoleAttributes", "Role Attributes", admin, s.listRoleAttributes(store.KindService)},
		{managementAPI, get, "/posture-check-role-attributes", "listPostureCheckRoleAttributes", "Role Attributes", admin, s.listRoleAttributes(store.KindPostureCheck)},
	}
}
