package store

import (
	"maps"
	"slices"
)

// Built-in records: the identity type and config types that OpenZiti's
// clients expect by name (docs/openziti.md). A new cluster gets them right
// after its bootstrap, an existing one once all its members can apply the
// command that adds them (fsm.CmdBuiltinsEnsure); they cannot be changed or
// deleted.

// Built-in config type ids (the ones OpenZiti uses, so tools that know an
// id find the same type).
const (
	ConfigTypeInterceptV1      = "g7cIWbcGg"
	ConfigTypeHostV1           = "NH5p4FpGR"
	ConfigTypeHostV2           = "host.v2"
	ConfigTypeTunnelerClientV1 = "f2dd2df0-9c04-4b84-a91e-71437ac229f1"
	ConfigTypeTunnelerServerV1 = "cea49285-6c07-42cf-9f52-09a9b115c783"
	// ConfigTypeProxyV1 is the config of a service a router's tunneler
	// offers as a local proxy port (its id is its name, as in OpenZiti).
	ConfigTypeProxyV1 = "proxy.v1"
)

// IdentityTypeDefault is the identity type OpenZiti's CLI sends.
const IdentityTypeDefault = "Default"

// builtinConfigTypes are the ids of the built-in config types.
var builtinConfigTypes = map[string]bool{
	ConfigTypeInterceptV1: true, ConfigTypeHostV1: true, ConfigTypeHostV2: true,
	ConfigTypeTunnelerClientV1: true, ConfigTypeTunnelerServerV1: true, ConfigTypeProxyV1: true,
}

// IsBuiltinConfigType reports whether id is a built-in config type.
func IsBuiltinConfigType(id string) bool { return builtinConfigTypes[id] }

// BuiltinConfigTypeIDs are the ids of the built-in config types, sorted.
func BuiltinConfigTypeIDs() []string { return slices.Sorted(maps.Keys(builtinConfigTypes)) }

// Builtins are the built-in records a command adds where missing.
type Builtins struct {
	IdentityTypes []*IdentityType `json:"identityTypes"`
	ConfigTypes   []*ConfigType   `json:"configTypes"`
}

// EnsureBuiltins adds the records of b that the model lacks. A record whose
// id exists is kept as it is; a config type whose name a user's type took
// already is left out (the user's type keeps the name).
func (tx *Tx) EnsureBuiltins(b *Builtins) error {
	for _, t := range b.IdentityTypes {
		if tx.Exists(KindIdentityType, t.ID) {
			continue
		}
		if err := tx.Insert(KindIdentityType, t); err != nil {
			return err
		}
	}
	for _, t := range b.ConfigTypes {
		if tx.Exists(KindConfigType, t.ID) || tx.First(KindConfigType, "name", t.Name) != nil {
			continue
		}
		if err := tx.Insert(KindConfigType, t); err != nil {
			return err
		}
	}
	return nil
}

// MissingBuiltins reports whether any record of b is missing (and could be
// added).
func (tx *Tx) MissingBuiltins(b *Builtins) bool {
	for _, t := range b.IdentityTypes {
		if !tx.Exists(KindIdentityType, t.ID) {
			return true
		}
	}
	for _, t := range b.ConfigTypes {
		if !tx.Exists(KindConfigType, t.ID) && tx.First(KindConfigType, "name", t.Name) == nil {
			return true
		}
	}
	return false
}
