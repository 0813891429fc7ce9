package store

import "edgectl/store/filter"

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

var servicePolicyFields = map[string]filter.Field{
	"type":              {Type: filter.String, Get: func(r any) any { return r.(*ServicePolicy).Type }},
	"semantic":          {Type: filter.String, Get: func(r any) any { return r.(*ServicePolicy).Semantic }},
	"identityRoles":     {Type: filter.StringList, Get: func(r any) any { return r.(*ServicePolicy).IdentityRoles }},
	"serviceRoles":      {Type: filter.StringList, Get: func(r any) any { return r.(*ServicePolicy).ServiceRoles }},
	"postureCheckRoles": {Type: filter.StringList, Get: func(r any) any { return r.(*ServicePolicy).PostureCheckRoles }},
}

var edgeRouterPolicyFields = map[string]filter.Field{
	"semantic":        {Type: filter.String, Get: func(r any) any { return r.(*EdgeRouterPolicy).Semantic }},
	"isSystem":        {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouterPolicy).IsSystem }},
	"identityRoles":   {Type: filter.StringList, Get: func(r any) any { return r.(*EdgeRouterPolicy).IdentityRoles }},
	"edgeRouterRoles": {Type: filter.StringList, Get: func(r any) any { return r.(*EdgeRouterPolicy).EdgeRouterRoles }},
}

var serpFields = map[string]filter.Field{
	"semantic":        {Type: filter.String, Get: func(r any) any { return r.(*ServiceEdgeRouterPolicy).Semantic }},
	"serviceRoles":    {Type: filter.StringList, Get: func(r any) any { return r.(*ServiceEdgeRouterPolicy).ServiceRoles }},
	"edgeRouterRoles": {Type: filter.StringList, Get: func(r any) any { return r.(*ServiceEdgeRouterPolicy).EdgeRouterRoles }},
}
