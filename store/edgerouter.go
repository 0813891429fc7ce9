package store

import (
	"maps"
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
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

// The filter getters use the typed constructors: lists of routers are scanned
// whole when filtered, so an allocation per field read would add up.
var edgeRouterFilterFields = map[string]filter.Field{
	"roleAttributes":      filter.StringListField(func(r any) []string { return r.(*EdgeRouter).RoleAttributes }),
	"cost":                filter.IntField(func(r any) int64 { return int64(r.(*EdgeRouter).Cost) }),
	"disabled":            filter.BoolField(func(r any) bool { return r.(*EdgeRouter).Disabled }),
	"noTraversal":         filter.BoolField(func(r any) bool { return r.(*EdgeRouter).NoTraversal }),
	"isTunnelerEnabled":   filter.BoolField(func(r any) bool { return r.(*EdgeRouter).IsTunnelerEnabled }),
	"isVerified":          filter.BoolField(func(r any) bool { return r.(*EdgeRouter).IsVerified }),
	"hostname":            filter.StringField(func(r any) string { return r.(*EdgeRouter).Hostname }),
	"fingerprint":         {Type: filter.String, Get: func(r any) any { return optString(r.(*EdgeRouter).Fingerprint) }},
	"enrollmentExpiresAt": {Type: filter.Time, Get: func(r any) any { return optTime(r.(*EdgeRouter).EnrollmentExpiresAt) }},
}

// KindEdgeRouter is the kind of EdgeRouter records.
var KindEdgeRouter = &Kind{Table: "edgeRouters", Entity: "edge router", Named: true,
	new:     func() Record { return &EdgeRouter{} },
	indexes: []*memdb.IndexSchema{rolesIndex(), strIndex("enrollmentToken", "EnrollmentToken"), strIndex("fingerprint", "Fingerprint")},
	Fields:  namedFields(edgeRouterFilterFields)}

// CreateEdgeRouter adds an edge router with its outstanding enrollment.
func (tx *Tx) CreateEdgeRouter(r *EdgeRouter) error {
	return tx.Insert(KindEdgeRouter, r)
}

// UpdateEdgeRouter applies a PUT or PATCH to an edge router. Only the
// writable fields change: enrollment, certificate and connection state are
// kept as they are, whatever the patch holds.
func (tx *Tx) UpdateEdgeRouter(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindEdgeRouter, id, p, at, func(old, upd Record) error {
		o, n := old.(*EdgeRouter), upd.(*EdgeRouter)
		n.RouterEnrollment, n.Hostname, n.SupportedProtocols = o.RouterEnrollment, o.Hostname, o.SupportedProtocols
		return nil
	})
	return err
}

// DeleteEdgeRouter removes an edge router. Policies that name it by @id lose
// that entry; terminators that run on it block the delete (routerInUse).
func (tx *Tx) DeleteEdgeRouter(id string) error {
	if _, err := tx.Get(KindEdgeRouter, id); err != nil {
		return err
	}
	if err := tx.routerInUse(KindEdgeRouter, id); err != nil {
		return err
	}
	if err := tx.dropRoleRefs(KindEdgeRouter, id); err != nil {
		return err
	}
	return tx.Remove(KindEdgeRouter, id)
}

// ReEnrollEdgeRouter drops an edge router's certificate and gives it a fresh
// enrollment, replacing any outstanding one. Every other field and every
// association stays.
func (tx *Tx) ReEnrollEdgeRouter(id string, e RouterEnrollment, at time.Time) error {
	old, err := GetAs[*EdgeRouter](tx, KindEdgeRouter, id)
	if err != nil {
		return err
	}
	n := *old
	n.RouterEnrollment = freshEnrollment(e)
	n.UpdatedAt = at
	return tx.Replace(KindEdgeRouter, &n)
}

// ReportEdgeRouter records the hostname and edge listeners that edge router
// id reported on its control channel, while fp is still its certificate
// (a report that raced a re-enrollment changes nothing). An unchanged
// report writes nothing.
func (tx *Tx) ReportEdgeRouter(id, fp, hostname string, protocols map[string]string) error {
	old, err := GetAs[*EdgeRouter](tx, KindEdgeRouter, id)
	if err != nil {
		return err
	}
	if old.Fingerprint == nil || *old.Fingerprint != fp {
		return nil
	}
	if old.Hostname == hostname && maps.Equal(old.SupportedProtocols, protocols) {
		return nil
	}
	n := *old
	n.Hostname, n.SupportedProtocols = hostname, protocols
	return tx.Replace(KindEdgeRouter, &n)
}
