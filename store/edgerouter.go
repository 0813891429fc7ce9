package store

import (
	"time"

	"edgectl/store/filter"
)

// RouterEnrollment holds the enrollment and certificate state shared by edge routers and routers.
type RouterEnrollment struct {
	IsVerified            bool       `json:"isVerified"`
	Fingerprint           *string    `json:"fingerprint"`
	CertPem               *string    `json:"certPem"`
	UnverifiedCertPem     *string    `json:"unverifiedCertPem"`
	UnverifiedFingerprint *string    `json:"unverifiedFingerprint"`
	EnrollmentToken       *string    `json:"enrollmentToken"`
	EnrollmentJwt         *string    `json:"enrollmentJwt"`
	EnrollmentCreatedAt   *time.Time `json:"enrollmentCreatedAt"`
	EnrollmentExpiresAt   *time.Time `json:"enrollmentExpiresAt"`
}

// EdgeRouter is a router that SDK clients connect to.
type EdgeRouter struct {
	Base
	Named
	RouterEnrollment
	RoleAttributes     []string          `json:"roleAttributes"`
	Cost               int               `json:"cost"`
	Disabled           bool              `json:"disabled"`
	NoTraversal        bool              `json:"noTraversal"`
	IsTunnelerEnabled  bool              `json:"isTunnelerEnabled"`
	AppData            map[string]any    `json:"appData"`
	Hostname           string            `json:"hostname"`
	SupportedProtocols map[string]string `json:"supportedProtocols"`
}

// RecordName is the edge router's name.
func (r *EdgeRouter) RecordName() string { return r.Name }

// Roles returns the edge router's role attributes.
func (r *EdgeRouter) Roles() []string { return r.RoleAttributes }

// Router is a transit router of the fabric.
type Router struct {
	Base
	Named
	RouterEnrollment
	Cost        int  `json:"cost"`
	Disabled    bool `json:"disabled"`
	NoTraversal bool `json:"noTraversal"`
}

// RecordName is the router's name.
func (r *Router) RecordName() string { return r.Name }

var edgeRouterFields = map[string]filter.Field{
	"roleAttributes":    {Type: filter.StringList, Get: func(r any) any { return r.(*EdgeRouter).RoleAttributes }},
	"cost":              {Type: filter.Number, Get: func(r any) any { return int64(r.(*EdgeRouter).Cost) }},
	"disabled":          {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouter).Disabled }},
	"noTraversal":       {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouter).NoTraversal }},
	"isTunnelerEnabled": {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouter).IsTunnelerEnabled }},
	"isVerified":        {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouter).IsVerified }},
	"isOnline":          {Type: filter.Bool, Get: func(r any) any { return false }},
	"hostname":          {Type: filter.String, Get: func(r any) any { return r.(*EdgeRouter).Hostname }},
	"fingerprint":       {Type: filter.String, Get: func(r any) any { return optString(r.(*EdgeRouter).Fingerprint) }},
}

var routerFields = map[string]filter.Field{
	"cost":        {Type: filter.Number, Get: func(r any) any { return int64(r.(*Router).Cost) }},
	"disabled":    {Type: filter.Bool, Get: func(r any) any { return r.(*Router).Disabled }},
	"noTraversal": {Type: filter.Bool, Get: func(r any) any { return r.(*Router).NoTraversal }},
	"isVerified":  {Type: filter.Bool, Get: func(r any) any { return r.(*Router).IsVerified }},
	"isOnline":    {Type: filter.Bool, Get: func(r any) any { return false }},
	"fingerprint": {Type: filter.String, Get: func(r any) any { return optString(r.(*Router).Fingerprint) }},
}
