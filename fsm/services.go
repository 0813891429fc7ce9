package fsm

import (
	"time"

	"edgectl/store"
)

// Command types of the services family: config types, configs, services,
// terminators and identity service-config overrides.
var (
	CmdConfigTypeCreate             = command("configType.create", 1)
	CmdConfigTypeUpdate             = command("configType.update", 1)
	CmdConfigTypeDelete             = command("configType.delete", 1)
	CmdConfigCreate                 = command("config.create", 1)
	CmdConfigUpdate                 = command("config.update", 1)
	CmdConfigDelete                 = command("config.delete", 1)
	CmdServiceCreate                = command("service.create", 1)
	CmdServiceUpdate                = command("service.update", 1)
	CmdServiceDelete                = command("service.delete", 1)
	CmdTerminatorCreate             = command("terminator.create", 1)
	CmdTerminatorUpdate             = command("terminator.update", 1)
	CmdTerminatorDelete             = command("terminator.delete", 1)
	CmdIdentityServiceConfigsAdd    = command("identityServiceConfigs.add", 1)
	CmdIdentityServiceConfigsRemove = command("identityServiceConfigs.remove", 1)
)

// ConfigTypeUpdate is the payload of CmdConfigTypeUpdate. Checked holds,
// when the schema changes, every config of the type with the updatedAt at
// which the proposer validated it against the new schema.
type ConfigTypeUpdate struct {
	Update
	Checked map[string]time.Time `json:"checked"`
}

// ConfigCreate is the payload of CmdConfigCreate. TypeVersion is the
// updatedAt of the config type whose schema validated the data.
type ConfigCreate struct {
	Config      *store.Config `json:"config"`
	TypeVersion time.Time     `json:"typeVersion"`
}

// ConfigUpdate is the payload of CmdConfigUpdate. TypeVersion is set when
// the patch carries data: the updatedAt of the config type that validated it.
type ConfigUpdate struct {
	Update
	TypeVersion *time.Time `json:"typeVersion"`
}

// ServiceConfigs is the payload of the identity service-config commands.
type ServiceConfigs struct {
	IdentityID string                   `json:"identityId"`
	Items      []store.ServiceConfigRef `json:"items"`
	At         time.Time                `json:"at"`
}

func registerServices(f *FSM) {
	on(f, CmdConfigTypeCreate, func(tx *store.Tx, t *store.ConfigType) (any, error) {
		return nil, tx.CreateConfigType(t)
	})
	on(f, CmdConfigTypeUpdate, func(tx *store.Tx, p *ConfigTypeUpdate) (any, error) {
		return nil, tx.UpdateConfigType(p.ID, p.Patch, p.At, p.Checked)
	})
	on(f, CmdConfigTypeDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteConfigType(p.ID)
	})
	on(f, CmdConfigCreate, func(tx *store.Tx, p *ConfigCreate) (any, error) {
		return nil, tx.CreateConfig(p.Config, p.TypeVersion)
	})
	on(f, CmdConfigUpdate, func(tx *store.Tx, p *ConfigUpdate) (any, error) {
		return nil, tx.UpdateConfig(p.ID, p.Patch, p.At, p.TypeVersion)
	})
	on(f, CmdConfigDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteConfig(p.ID)
	})
	on(f, CmdServiceCreate, func(tx *store.Tx, s *store.Service) (any, error) {
		return nil, tx.CreateService(s)
	})
	on(f, CmdServiceUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateService(p.ID, p.Patch, p.At)
	})
	on(f, CmdServiceDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteService(p.ID)
	})
	on(f, CmdTerminatorCreate, func(tx *store.Tx, t *store.Terminator) (any, error) {
		return nil, tx.CreateTerminator(t)
	})
	on(f, CmdTerminatorUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateTerminator(p.ID, p.Patch, p.At)
	})
	on(f, CmdTerminatorDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteTerminator(p.ID)
	})
	on(f, CmdIdentityServiceConfigsAdd, func(tx *store.Tx, p *ServiceConfigs) (any, error) {
		return nil, tx.AssociateServiceConfigs(p.IdentityID, p.Items, p.At)
	})
	on(f, CmdIdentityServiceConfigsRemove, func(tx *store.Tx, p *ServiceConfigs) (any, error) {
		return nil, tx.DisassociateServiceConfigs(p.IdentityID, p.Items)
	})
}
