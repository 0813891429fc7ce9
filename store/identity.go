package store

import (
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// EnvInfo is the client environment reported at authentication.
type EnvInfo struct {
	Arch      string `json:"arch"`
	OS        string `json:"os"`
	OSRelease string `json:"osRelease"`
	OSVersion string `json:"osVersion"`
}

// SdkInfo is the client SDK reported at authentication.
type SdkInfo struct {
	AppID      string `json:"appId"`
	AppVersion string `json:"appVersion"`
	Branch     string `json:"branch"`
	Revision   string `json:"revision"`
	Type       string `json:"type"`
	Version    string `json:"version"`
}

// Identity is a user, device, service or router that authenticates.
type Identity struct {
	Base
	Named
	TypeID                    string            `json:"typeId"`
	IsAdmin                   bool              `json:"isAdmin"`
	IsDefaultAdmin            bool              `json:"isDefaultAdmin"`
	AppData                   map[string]any    `json:"appData"`
	AuthPolicyID              string            `json:"authPolicyId"`
	DefaultHostingCost        int               `json:"defaultHostingCost"`
	DefaultHostingPrecedence  string            `json:"defaultHostingPrecedence"`
	ServiceHostingCosts       map[string]int    `json:"serviceHostingCosts"`
	ServiceHostingPrecedences map[string]string `json:"serviceHostingPrecedences"`
	ExternalID                *string           `json:"externalId"`
	RoleAttributes            []string          `json:"roleAttributes"`
	Disabled                  bool              `json:"disabled"`
	DisabledAt                *time.Time        `json:"disabledAt"`
	DisabledUntil             *time.Time        `json:"disabledUntil"`
	EnvInfo                   *EnvInfo          `json:"envInfo"`
	SdkInfo                   *SdkInfo          `json:"sdkInfo"`
	Trace                     *TraceSpec        `json:"trace,omitempty"`
}

// RecordName is the identity's name.
func (r *Identity) RecordName() string { return r.Name }

// Roles returns the identity's role attributes.
func (r *Identity) Roles() []string { return r.RoleAttributes }

// KindIdentity is the kind of Identity records.
var KindIdentity = &Kind{Table: "identities", Entity: "identity", Named: true,
	new:     func() Record { return &Identity{} },
	indexes: []*memdb.IndexSchema{rolesIndex(), strIndex("authPolicy", "AuthPolicyID"), strIndex("externalId", "ExternalID")},
	Fields:  namedFields(identityFilterFields)}

var identityFilterFields = map[string]filter.Field{
	"typeId":                   {Type: filter.String, Get: func(r any) any { return r.(*Identity).TypeID }},
	"type.id":                  {Type: filter.String, Get: func(r any) any { return r.(*Identity).TypeID }},
	"type.name":                {Type: filter.String, Get: func(r any) any { return r.(*Identity).TypeID }},
	"isAdmin":                  {Type: filter.Bool, Get: func(r any) any { return r.(*Identity).IsAdmin }},
	"isDefaultAdmin":           {Type: filter.Bool, Get: func(r any) any { return r.(*Identity).IsDefaultAdmin }},
	"externalId":               {Type: filter.String, Get: func(r any) any { return optString(r.(*Identity).ExternalID) }},
	"roleAttributes":           {Type: filter.StringList, Get: func(r any) any { return r.(*Identity).RoleAttributes }},
	"disabled":                 {Type: filter.Bool, Get: func(r any) any { return r.(*Identity).Disabled }},
	"disabledUntil":            {Type: filter.Time, Get: func(r any) any { return optTime(r.(*Identity).DisabledUntil) }},
	"defaultHostingCost":       {Type: filter.Number, Get: func(r any) any { return int64(r.(*Identity).DefaultHostingCost) }},
	"defaultHostingPrecedence": {Type: filter.String, Get: func(r any) any { return r.(*Identity).DefaultHostingPrecedence }},
	// OpenZiti's references to the identity type and the auth policy
	// ("authPolicyId.name"). An identity type's id is its name, so type.id
	// and type.name above read the identity itself, with no lookup.
	"type": refField("identities", idOf(func(r any) string { return r.(*Identity).TypeID }),
		func() *filter.Schema { return KindIdentityType.Fields }, KindIdentityType),
	"authPolicyId": refField("identities", idOf(func(r any) string { return r.(*Identity).AuthPolicyID }),
		func() *filter.Schema { return KindAuthPolicy.Fields }, KindAuthPolicy),
}

// checkIdentityRefs verifies that an identity's references exist.
func (tx *Tx) checkIdentityRefs(i *Identity) error {
	if !tx.Exists(KindIdentityType, i.TypeID) {
		return Invalid("type", "no identity type with this name", i.TypeID)
	}
	if !tx.Exists(KindAuthPolicy, i.AuthPolicyID) {
		return Invalid("authPolicyId", "no auth policy with this id", i.AuthPolicyID)
	}
	return nil
}

// CreateIdentity adds an identity with the enrollments and authenticators made with it.
func (tx *Tx) CreateIdentity(i *Identity, enrollments []*Enrollment, authenticators []*Authenticator) error {
	if err := tx.checkIdentityRefs(i); err != nil {
		return err
	}
	if err := tx.Insert(KindIdentity, i); err != nil {
		return err
	}
	for _, e := range enrollments {
		// A updb enrollment reserves its username, as one made by /enrollments does.
		if e.Method == "updb" && e.Username != nil {
			if err := tx.checkEnrollmentUsername(*e.Username, e.ID); err != nil {
				if se, ok := err.(*Error); ok {
					se.Field = "enrollment.updb"
				}
				return err
			}
		}
		if err := tx.Insert(KindEnrollment, e); err != nil {
			return err
		}
	}
	for _, a := range authenticators {
		if err := tx.insertAuthenticator(a); err != nil {
			return err
		}
	}
	return nil
}

// UpdateIdentity applies a PUT or PATCH to an identity.
func (tx *Tx) UpdateIdentity(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindIdentity, id, p, at, func(old, upd Record) error {
		o, n := old.(*Identity), upd.(*Identity)
		// The default admin stays an admin: losing it would lock every operator out.
		if o.IsDefaultAdmin && !n.IsAdmin {
			return Invalid("isAdmin", "the default admin cannot lose isAdmin", false)
		}
		n.IsDefaultAdmin = o.IsDefaultAdmin
		if tx.RouterIdentityOf(o) != nil {
			// A router's identity takes the router's name (renaming the router renames it) and keeps its type.
			if n.Name != o.Name {
				return Invalid("name", "may not change name of router identities", n.Name)
			}
			if n.TypeID != o.TypeID {
				return Invalid("type", "may not change type of router identities", n.TypeID)
			}
		}
		return tx.checkIdentityRefs(n)
	})
	return err
}

// DeleteIdentity removes an identity with its authenticators, enrollments and API sessions.
func (tx *Tx) DeleteIdentity(id string) error {
	i, err := GetAs[*Identity](tx, KindIdentity, id)
	if err != nil {
		return err
	}
	if i.IsDefaultAdmin {
		return Invalid("id", "the default admin cannot be deleted", id)
	}
	if tx.RouterIdentityOf(i) != nil {
		return CannotDelete("cannot delete router identity %s until its router is deleted or its tunneler turned off", i.Name)
	}
	return tx.deleteIdentity(i)
}

// deleteIdentity removes identity i with what belongs to it.
func (tx *Tx) deleteIdentity(i *Identity) error {
	id := i.ID
	for _, k := range []*Kind{KindAuthenticator, KindEnrollment, KindAPISession, KindFailedServiceRequest, KindIdentityServiceConfig,
		KindMFA, KindLoginFailures} {
		if err := tx.removeWhere(k, "identity", id); err != nil {
			return err
		}
	}
	// Policies that name it by @id stop naming it, as for services, routers and checks.
	if err := tx.dropRoleRefs(KindIdentity, id); err != nil {
		return err
	}
	return tx.Remove(KindIdentity, id)
}

// removeWhere deletes every record of k whose index matches value.
func (tx *Tx) removeWhere(k *Kind, index, value string) error {
	var ids []string
	tx.Each(k, index, func(r Record) bool {
		ids = append(ids, r.base().ID)
		return true
	}, value)
	for _, id := range ids {
		if err := tx.Remove(k, id); err != nil {
			return err
		}
	}
	return nil
}

// IdentitySessionCount returns how many API sessions the identity has.
func (tx *Tx) IdentitySessionCount(id string) int {
	n := 0
	tx.Each(KindAPISession, "identity", func(Record) bool { n++; return true }, id)
	return n
}

// DisableIdentity disables an identity from at until until (nil: until
// enabled) and ends its API sessions.
func (tx *Tx) DisableIdentity(id string, at time.Time, until *time.Time) error {
	i, err := GetAs[*Identity](tx, KindIdentity, id)
	if err != nil {
		return err
	}
	if i.IsDefaultAdmin {
		return Invalid("id", "the default admin cannot be disabled", id)
	}
	n := *i
	n.Disabled, n.DisabledAt, n.DisabledUntil, n.UpdatedAt = true, &at, until, at
	if err := tx.Replace(KindIdentity, &n); err != nil {
		return err
	}
	return tx.removeWhere(KindAPISession, "identity", id)
}

// EnableIdentity clears every disabled state of an identity.
func (tx *Tx) EnableIdentity(id string, at time.Time) error {
	i, err := GetAs[*Identity](tx, KindIdentity, id)
	if err != nil {
		return err
	}
	n := *i
	n.Disabled, n.DisabledAt, n.DisabledUntil, n.UpdatedAt = false, nil, nil, at
	return tx.Replace(KindIdentity, &n)
}
