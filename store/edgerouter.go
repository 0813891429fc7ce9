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

// The filter getters use the typed constructors: lists of routers are scanned
// whole when filtered, so an allocation per field read would add up.
var edgeRouterFields = map[string]filter.Field{
	"roleAttributes":      filter.StringListField(func(r any) []string { return r.(*EdgeRouter).RoleAttributes }),
	"cost":                filter.IntField(func(r any) int64 { return int64(r.(*EdgeRouter).Cost) }),
	"disabled":            filter.BoolField(func(r any) bool { return r.(*EdgeRouter).Disabled }),
	"noTraversal":         filter.BoolField(func(r any) bool { return r.(*EdgeRouter).NoTraversal }),
	"isTunnelerEnabled":   filter.BoolField(func(r any) bool { return r.(*EdgeRouter).IsTunnelerEnabled }),
	"isVerified":          filter.BoolField(func(r any) bool { return r.(*EdgeRouter).IsVerified }),
	"isOnline":            filter.BoolField(func(any) bool { return false }),
	"hostname":            filter.StringField(func(r any) string { return r.(*EdgeRouter).Hostname }),
	"fingerprint":         {Type: filter.String, Get: func(r any) any { return optString(r.(*EdgeRouter).Fingerprint) }},
	"enrollmentExpiresAt": {Type: filter.Time, Get: func(r any) any { return optTime(r.(*EdgeRouter).EnrollmentExpiresAt) }},
}

var routerFields = map[string]filter.Field{
	"cost":                filter.IntField(func(r any) int64 { return int64(r.(*Router).Cost) }),
	"disabled":            filter.BoolField(func(r any) bool { return r.(*Router).Disabled }),
	"noTraversal":         filter.BoolField(func(r any) bool { return r.(*Router).NoTraversal }),
	"isVerified":          filter.BoolField(func(r any) bool { return r.(*Router).IsVerified }),
	"isOnline":            filter.BoolField(func(any) bool { return false }),
	"fingerprint":         {Type: filter.String, Get: func(r any) any { return optString(r.(*Router).Fingerprint) }},
	"enrollmentExpiresAt": {Type: filter.Time, Get: func(r any) any { return optTime(r.(*Router).EnrollmentExpiresAt) }},
}
