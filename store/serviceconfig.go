package store

import (
	"fmt"
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// IdentityServiceConfig overrides, for one identity and one service, the
// config of one config type. Its id is identityId/serviceId/configTypeId, so
// an identity holds at most one override per service and config type.
type IdentityServiceConfig struct {
	Base
	IdentityID   string `json:"identityId"`
	ServiceID    string `json:"serviceId"`
	ConfigID     string `json:"configId"`
	ConfigTypeID string `json:"configTypeId"`
}

// KindIdentityServiceConfig is the table of identity service-config overrides.
var KindIdentityServiceConfig = &Kind{Table: "identityServiceConfigs", Entity: "identity service config",
	new: func() Record { return &IdentityServiceConfig{} },
	indexes: []*memdb.IndexSchema{strIndex("identity", "IdentityID"), strIndex("service", "ServiceID"),
		strIndex("config", "ConfigID")},
	Fields: baseFields(identityServiceConfigFilterFields)}

var identityServiceConfigFilterFields = map[string]filter.Field{
	"identityId":   filter.StringField(func(r any) string { return r.(*IdentityServiceConfig).IdentityID }),
	"serviceId":    filter.StringField(func(r any) string { return r.(*IdentityServiceConfig).ServiceID }),
	"configId":     filter.StringField(func(r any) string { return r.(*IdentityServiceConfig).ConfigID }),
	"configTypeId": filter.StringField(func(r any) string { return r.(*IdentityServiceConfig).ConfigTypeID }),
}

// ServiceConfigRef names a service and a config, as the association bodies do.
type ServiceConfigRef struct {
	ServiceID string `json:"serviceId"`
	ConfigID  string `json:"configId"`
}

// IdentityServiceConfigID is the id of the override of identity for service and config type.
func IdentityServiceConfigID(identityID, serviceID, configTypeID string) string {
	return identityID + "/" + serviceID + "/" + configTypeID
}

// AssociateServiceConfigs stores the overrides of an identity. An override
// for a service and config type that already has one replaces it, so a later
// item of the same request wins over an earlier one.
func (tx *Tx) AssociateServiceConfigs(identityID string, items []ServiceConfigRef, at time.Time) error {
	if !tx.Exists(KindIdentity, identityID) {
		return NotFound(KindIdentity.Entity, identityID)
	}
	for i, it := range items {
		if !tx.Exists(KindService, it.ServiceID) {
			return Invalid(fmt.Sprintf("[%d].serviceId", i), "no service with this id", it.ServiceID)
		}
		c, err := GetAs[*Config](tx, KindConfig, it.ConfigID)
		if err != nil {
			return Invalid(fmt.Sprintf("[%d].configId", i), "no config with this id", it.ConfigID)
		}
		a := &IdentityServiceConfig{Base: Base{ID: IdentityServiceConfigID(identityID, it.ServiceID, c.ConfigTypeID),
			CreatedAt: at, UpdatedAt: at}, IdentityID: identityID, ServiceID: it.ServiceID, ConfigID: c.ID, ConfigTypeID: c.ConfigTypeID}
		if old, err := GetAs[*IdentityServiceConfig](tx, KindIdentityServiceConfig, a.ID); err == nil {
			a.CreatedAt = old.CreatedAt
		}
		if err := tx.Upsert(KindIdentityServiceConfig, a); err != nil {
			return err
		}
	}
	return nil
}

// DisassociateServiceConfigs removes overrides of an identity: all of them
// when items is empty, else those that match an item exactly (same service
// and config). Items that match nothing are ignored.
func (tx *Tx) DisassociateServiceConfigs(identityID string, items []ServiceConfigRef) error {
	if !tx.Exists(KindIdentity, identityID) {
		return NotFound(KindIdentity.Entity, identityID)
	}
	if len(items) == 0 {
		return tx.removeWhere(KindIdentityServiceConfig, "identity", identityID)
	}
	for _, it := range items {
		c, err := GetAs[*Config](tx, KindConfig, it.ConfigID)
		if err != nil {
			continue
		}
		id := IdentityServiceConfigID(identityID, it.ServiceID, c.ConfigTypeID)
		a, err := GetAs[*IdentityServiceConfig](tx, KindIdentityServiceConfig, id)
		if err != nil || a.ConfigID != it.ConfigID {
			continue
		}
		if err := tx.Remove(KindIdentityServiceConfig, id); err != nil {
			return err
		}
	}
	return nil
}
