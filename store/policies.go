package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"edgectl/store/filter"
)

// ServicePolicy grants identities Dial or Bind on services.
type ServicePolicy struct {
	Base
	Named
	Type              string   `json:"type"` // Dial or Bind
	Semantic          string   `json:"semantic"`
	IdentityRoles     []string `json:"identityRoles"`
	ServiceRoles      []string `json:"serviceRoles"`
	PostureCheckRoles []string `json:"postureCheckRoles"`
}

// RecordName is the policy's name.
func (r *ServicePolicy) RecordName() string { return r.Name }

// EdgeRouterPolicy gives identities edge routers.
type EdgeRouterPolicy struct {
	Base
	Named
	Semantic        string   `json:"semantic"`
	IdentityRoles   []string `json:"identityRoles"`
	EdgeRouterRoles []string `json:"edgeRouterRoles"`
	IsSystem        bool     `json:"isSystem"`
}

// RecordName is the policy's name.
func (r *EdgeRouterPolicy) RecordName() string { return r.Name }

// ServiceEdgeRouterPolicy gives services edge routers.
type ServiceEdgeRouterPolicy struct {
	Base
	Named
	Semantic        string   `json:"semantic"`
	ServiceRoles    []string `json:"serviceRoles"`
	EdgeRouterRoles []string `json:"edgeRouterRoles"`
}

// RecordName is the policy's name.
func (r *ServiceEdgeRouterPolicy) RecordName() string { return r.Name }

var servicePolicyFilterFields = map[string]filter.Field{
	"type":              {Type: filter.String, Get: func(r any) any { return r.(*ServicePolicy).Type }},
	"semantic":          {Type: filter.String, Get: func(r any) any { return r.(*ServicePolicy).Semantic }},
	"identityRoles":     {Type: filter.StringList, Get: func(r any) any { return r.(*ServicePolicy).IdentityRoles }},
	"serviceRoles":      {Type: filter.StringList, Get: func(r any) any { return r.(*ServicePolicy).ServiceRoles }},
	"postureCheckRoles": {Type: filter.StringList, Get: func(r any) any { return r.(*ServicePolicy).PostureCheckRoles }},
}

var edgeRouterPolicyFilterFields = map[string]filter.Field{
	"semantic":        {Type: filter.String, Get: func(r any) any { return r.(*EdgeRouterPolicy).Semantic }},
	"isSystem":        {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouterPolicy).IsSystem }},
	"identityRoles":   {Type: filter.StringList, Get: func(r any) any { return r.(*EdgeRouterPolicy).IdentityRoles }},
	"edgeRouterRoles": {Type: filter.StringList, Get: func(r any) any { return r.(*EdgeRouterPolicy).EdgeRouterRoles }},
}

var serpFilterFields = map[string]filter.Field{
	"semantic":        {Type: filter.String, Get: func(r any) any { return r.(*ServiceEdgeRouterPolicy).Semantic }},
	"serviceRoles":    {Type: filter.StringList, Get: func(r any) any { return r.(*ServiceEdgeRouterPolicy).ServiceRoles }},
	"edgeRouterRoles": {Type: filter.StringList, Get: func(r any) any { return r.(*ServiceEdgeRouterPolicy).EdgeRouterRoles }},
}

// KindServicePolicy is the kind of ServicePolicy records.
var KindServicePolicy = &Kind{Table: "servicePolicies", Entity: "service policy", Named: true,
	new: func() Record { return &ServicePolicy{} }, Fields: namedFields(servicePolicyFilterFields)}

// KindEdgeRouterPolicy is the kind of EdgeRouterPolicy records.
var KindEdgeRouterPolicy = &Kind{Table: "edgeRouterPolicies", Entity: "edge router policy", Named: true,
	new: func() Record { return &EdgeRouterPolicy{} }, Fields: namedFields(edgeRouterPolicyFilterFields)}

// KindServiceEdgeRouterPolicy is the kind of ServiceEdgeRouterPolicy records.
var KindServiceEdgeRouterPolicy = &Kind{Table: "serviceEdgeRouterPolicies", Entity: "service edge router policy", Named: true,
	new: func() Record { return &ServiceEdgeRouterPolicy{} }, Fields: namedFields(serpFilterFields)}

// policyRefs checks that every @id entry of a policy's role arrays names an
// existing entity, so a policy can never select something that is not there
// when it is written. On an update (old != nil) only the entries the policy
// did not already have are checked: an entry whose entity has since been
// deleted must not make every later PUT or PATCH of the policy fail.
func (tx *Tx) policyRefs(k *Kind, p, old Record) error {
	for _, rel := range allRelations {
		if rel.policy != k {
			continue
		}
		field := rel.name[strings.Index(rel.name, ".")+1:] + "Roles"
		var had []string
		if old != nil {
			had = rel.roles(old)
		}
		for i, r := range rel.roles(p) {
			if strings.HasPrefix(r, "@") && !slices.Contains(had, r) && !tx.Exists(rel.entity, r[1:]) {
				return Invalid(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("no %s with id %q", rel.entity.Entity, r[1:]), r)
			}
		}
	}
	return nil
}

// CreatePolicy adds a service, edge router or service edge router policy.
func (tx *Tx) CreatePolicy(k *Kind, p Record) error {
	if err := tx.policyRefs(k, p, nil); err != nil {
		return err
	}
	return tx.Insert(k, p)
}

// UpdatePolicy applies a PUT or PATCH to a policy. System policies are the
// controller's own and cannot be changed by users.
func (tx *Tx) UpdatePolicy(k *Kind, id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(k, id, p, at, func(old, upd Record) error {
		if isSystem(old) {
			return Invalid("id", "a system policy cannot be changed", id)
		}
		return tx.policyRefs(k, upd, old)
	})
	return err
}

// DeletePolicy removes a policy; its links go with it.
func (tx *Tx) DeletePolicy(k *Kind, id string) error {
	p, err := tx.Get(k, id)
	if err != nil {
		return err
	}
	if isSystem(p) {
		return Invalid("id", "a system policy cannot be deleted", id)
	}
	return tx.Remove(k, id)
}

func isSystem(r Record) bool {
	erp, ok := r.(*EdgeRouterPolicy)
	return ok && erp.IsSystem
}

// PolicyKind returns the policy kind of a table name, for the generic policy commands.
func PolicyKind(table string) (*Kind, bool) {
	switch table {
	case KindServicePolicy.Table:
		return KindServicePolicy, true
	case KindEdgeRouterPolicy.Table:
		return KindEdgeRouterPolicy, true
	case KindServiceEdgeRouterPolicy.Table:
		return KindServiceEdgeRouterPolicy, true
	}
	return nil, false
}

// dropRoleRefs removes the "@id" entry of every policy role array that names
// the entity id of kind k, so a deleted entity leaves no dangling selector.
// The refs table answers which policies name it, so no policy is scanned.
// The policies keep their updatedAt: the delete has no time of its own, and
// what the policy selects was already changed by the delete itself.
func (tx *Tx) dropRoleRefs(k *Kind, id string) error {
	for _, rel := range allRelations {
		if rel.entity != k {
			continue
		}
		var policies []string
		it, err := tx.txn.Get(refsTable, "id_prefix", rel.name, "@"+id, "")
		if err != nil {
			return fmt.Errorf("store: refs of %s: %w", id, err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			policies = append(policies, raw.(*ref).Policy)
		}
		field := rel.name[strings.Index(rel.name, ".")+1:] + "Roles"
		for _, pid := range policies {
			p, err := tx.Get(rel.policy, pid)
			if err != nil {
				continue
			}
			kept := []string{}
			for _, r := range rel.roles(p) {
				if r != "@"+id {
					kept = append(kept, r)
				}
			}
			raw, _ := json.Marshal(kept)
			if _, _, err := tx.Update(rel.policy, pid, Patch{field: raw}, p.base().UpdatedAt, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
