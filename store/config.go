package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// ConfigType is a kind of configuration with a JSON schema its configs must match.
type ConfigType struct {
	Base
	Named
	// Schema is the JSON schema, kept as the client sent it (compacted) so
	// numbers keep their precision; nil or null means no schema.
	Schema json.RawMessage `json:"schema"`
}

// RecordName is the config type's name.
func (r *ConfigType) RecordName() string { return r.Name }

// Config is a piece of configuration of a config type, attached to services.
type Config struct {
	Base
	Named
	ConfigTypeID string `json:"configTypeId"`
	// Data is the configuration object, raw so numbers keep their precision.
	Data json.RawMessage `json:"data"`
}

// RecordName is the config's name.
func (r *Config) RecordName() string { return r.Name }

// Kinds of the config family.
var (
	KindConfigType = &Kind{Table: "configTypes", Entity: "config type", Named: true,
		new: func() Record { return &ConfigType{} }, Fields: namedFields(nil)}
	KindConfig = &Kind{Table: "configs", Entity: "config", Named: true,
		new:     func() Record { return &Config{} },
		indexes: []*memdb.IndexSchema{strIndex("configType", "ConfigTypeID")},
		Fields:  namedFields(configFilterFields)}
)

var configTypeID = filter.StringField(func(r any) string { return r.(*Config).ConfigTypeID })

var configFilterFields = map[string]filter.Field{
	"configTypeId": configTypeID,
	// OpenZiti's name, a reference to the config type ("type.name").
	"type": refField("configs", idOf(func(r any) string { return r.(*Config).ConfigTypeID }),
		func() *filter.Schema { return KindConfigType.Fields }, KindConfigType),
	"configType.id": configTypeID,
}

// staleReason marks a write that was validated against a config type (or
// configs) that changed before the write was applied. The API validates
// config data against the schema before proposing; the command carries the
// versions it validated against, and Apply refuses the write when they moved,
// so two nodes can never commit a config and a schema that disagree.
const staleReason = "stale"

// Stale reports a write validated against data that changed meanwhile; the
// proposer validates again and retries.
func Stale(field, format string, args ...any) *Error {
	return &Error{Kind: "conflict", Field: field, Reason: staleReason, Message: fmt.Sprintf(format, args...)}
}

// IsStale reports whether err is a Stale error.
func IsStale(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == "conflict" && e.Reason == staleReason
}

// HasSchema reports whether raw holds a schema (not absent, not null).
func HasSchema(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// SameJSON reports whether two JSON documents (schemas) are equal as values;
// absent and null are equal.
func SameJSON(a, b json.RawMessage) bool {
	if !HasSchema(a) || !HasSchema(b) {
		return HasSchema(a) == HasSchema(b)
	}
	va, errA := decodeExact(a)
	vb, errB := decodeExact(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}

// decodeExact decodes JSON keeping numbers as written, so 2^53+1 and 2^53 differ.
func decodeExact(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	return v, dec.Decode(&v)
}

// CreateConfigType adds a config type.
func (tx *Tx) CreateConfigType(t *ConfigType) error { return tx.Insert(KindConfigType, t) }

// UpdateConfigType applies a PUT or PATCH to a config type. When the schema
// changes, checked must hold every config of the type with the updatedAt the
// proposer validated it at: a config written since makes the update stale.
func (tx *Tx) UpdateConfigType(id string, p Patch, at time.Time, checked map[string]time.Time) error {
	if IsBuiltinConfigType(id) {
		return Invalid("id", "is a built-in config type: it cannot be changed", id)
	}
	_, _, err := tx.Update(KindConfigType, id, p, at, func(old, upd Record) error {
		if SameJSON(old.(*ConfigType).Schema, upd.(*ConfigType).Schema) {
			return nil
		}
		n := 0
		var stale error
		tx.Each(KindConfig, "configType", func(r Record) bool {
			n++
			c := r.(*Config)
			if v, ok := checked[c.ID]; !ok || !v.Equal(c.UpdatedAt) {
				stale = Stale("schema", "config %q changed while the new schema was checked against it", c.ID)
				return false
			}
			return true
		}, id)
		if stale == nil && n != len(checked) {
			stale = Stale("schema", "the configs of the config type changed while the new schema was checked")
		}
		return stale
	})
	return err
}

// DeleteConfigType removes a config type that no config uses.
func (tx *Tx) DeleteConfigType(id string) error {
	if !tx.Exists(KindConfigType, id) {
		return NotFound(KindConfigType.Entity, id)
	}
	if IsBuiltinConfigType(id) {
		return Invalid("id", "is a built-in config type: it cannot be deleted", id)
	}
	if c := tx.First(KindConfig, "configType", id); c != nil {
		return Referenced("config type %q is used by config %q (and maybe others)", id, c.GetID())
	}
	return tx.Remove(KindConfigType, id)
}

// checkTypeVersion verifies that the config type is still the one the data was validated against.
func (tx *Tx) checkTypeVersion(typeID string, version time.Time) error {
	t, err := GetAs[*ConfigType](tx, KindConfigType, typeID)
	if err != nil {
		return Invalid("configTypeId", "no config type with this id", typeID)
	}
	if !t.UpdatedAt.Equal(version) {
		return Stale("configTypeId", "config type %q changed while the data was validated", typeID)
	}
	return nil
}

// CreateConfig adds a config whose data was validated against the schema of
// its type as it was at typeVersion (the type's updatedAt).
func (tx *Tx) CreateConfig(c *Config, typeVersion time.Time) error {
	if err := tx.checkTypeVersion(c.ConfigTypeID, typeVersion); err != nil {
		return err
	}
	return tx.Insert(KindConfig, c)
}

// UpdateConfig applies a PUT or PATCH to a config. The config type never
// changes. When the patch carries data, typeVersion is the type's updatedAt
// the data was validated at.
func (tx *Tx) UpdateConfig(id string, p Patch, at time.Time, typeVersion *time.Time) error {
	_, _, err := tx.Update(KindConfig, id, p, at, func(old, upd Record) error {
		o, n := old.(*Config), upd.(*Config)
		n.ConfigTypeID = o.ConfigTypeID
		if _, ok := p["data"]; !ok {
			return nil
		}
		if typeVersion == nil {
			return Stale("data", "the data of config %q was not validated", id)
		}
		return tx.checkTypeVersion(n.ConfigTypeID, *typeVersion)
	})
	return err
}

// DeleteConfig removes a config that no service and no identity uses.
func (tx *Tx) DeleteConfig(id string) error {
	if !tx.Exists(KindConfig, id) {
		return NotFound(KindConfig.Entity, id)
	}
	if s := tx.First(KindService, "configs", id); s != nil {
		return Referenced("config %q is used by service %q (and maybe others)", id, s.GetID())
	}
	if a := tx.First(KindIdentityServiceConfig, "config", id); a != nil {
		return Referenced("config %q is used by identity %q for service %q (and maybe others)", id,
			a.(*IdentityServiceConfig).IdentityID, a.(*IdentityServiceConfig).ServiceID)
	}
	return tx.Remove(KindConfig, id)
}
