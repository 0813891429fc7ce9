package store

import (
	"fmt"
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// Service is a network service that identities dial or bind.
type Service struct {
	Base
	Named
	RoleAttributes     []string `json:"roleAttributes"`
	Configs            []string `json:"configs"` // config ids
	EncryptionRequired bool     `json:"encryptionRequired"`
	TerminatorStrategy string   `json:"terminatorStrategy"`
	MaxIdleTimeMillis  int64    `json:"maxIdleTimeMillis"`
}

// RecordName is the service's name.
func (r *Service) RecordName() string { return r.Name }

// Roles returns the service's role attributes.
func (r *Service) Roles() []string { return r.RoleAttributes }

var serviceFilterFields = map[string]filter.Field{
	"roleAttributes":     filter.StringListField(func(r any) []string { return r.(*Service).RoleAttributes }),
	"configs":            filter.StringListField(func(r any) []string { return r.(*Service).Configs }),
	"encryptionRequired": filter.BoolField(func(r any) bool { return r.(*Service).EncryptionRequired }),
	"terminatorStrategy": filter.StringField(func(r any) string { return r.(*Service).TerminatorStrategy }),
	"maxIdleTimeMillis":  filter.IntField(func(r any) int64 { return r.(*Service).MaxIdleTimeMillis }),
}

// checkServiceConfigs verifies that every config of a service exists and that
// no two share a config type: a service has at most one config per type.
func (tx *Tx) checkServiceConfigs(s *Service) error {
	byType := map[string]string{}
	for i, id := range s.Configs {
		field := fmt.Sprintf("configs[%d]", i)
		c, err := GetAs[*Config](tx, KindConfig, id)
		if err != nil {
			return Invalid(field, "no config with this id", id)
		}
		if other, dup := byType[c.ConfigTypeID]; dup {
			return Invalid(field, fmt.Sprintf("config %q has the same config type (%s) as config %q: a service has at most one config per config type",
				id, c.ConfigTypeID, other), id)
		}
		byType[c.ConfigTypeID] = id
	}
	return nil
}

// CreateService adds a service.
func (tx *Tx) CreateService(s *Service) error {
	if err := tx.checkServiceConfigs(s); err != nil {
		return err
	}
	return tx.Insert(KindService, s)
}

// UpdateService applies a PUT or PATCH to a service. encryptionRequired is
// set at create: a patch that changes it is refused.
func (tx *Tx) UpdateService(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindService, id, p, at, func(old, upd Record) error {
		o, n := old.(*Service), upd.(*Service)
		if o.EncryptionRequired != n.EncryptionRequired {
			return Invalid("encryptionRequired", "is set when the service is created and cannot change", n.EncryptionRequired)
		}
		return tx.checkServiceConfigs(n)
	})
	return err
}

// DeleteService removes a service with its terminators and the identity
// service-config associations that name it. The policies that select it
// drop it through the relation index, and those that name it by @id lose
// that entry (as for edge routers and posture checks).
func (tx *Tx) DeleteService(id string) error {
	if !tx.Exists(KindService, id) {
		return NotFound(KindService.Entity, id)
	}
	if err := tx.dropRoleRefs(KindService, id); err != nil {
		return err
	}
	for _, k := range []*Kind{KindTerminator, KindIdentityServiceConfig} {
		if err := tx.removeWhere(k, "service", id); err != nil {
			return err
		}
	}
	return tx.Remove(KindService, id)
}

// KindService is the kind of Service records.
var KindService = &Kind{Table: "services", Entity: "service", Named: true,
	new: func() Record { return &Service{} },
	// configs answers "which services use this config" without a scan.
	indexes: []*memdb.IndexSchema{rolesIndex(), {Name: "configs", AllowMissing: true, Indexer: &stringsIndex{field: "Configs"}}},
	Fields:  namedFields(serviceFilterFields)}
