package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"edgectl/fsm"
	"edgectl/store"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxStaleRetries bounds how often a config write is validated again after
// its config type (or, for a schema change, one of its configs) changed
// between validation and Apply.
const maxStaleRetries = 5

// configTypeFields are the writable fields of a config type.
var configTypeFields = []field{
	{name: "name", kind: fString, required: true, min: 1, max: 255},
	{name: "schema", kind: fCustom, nullable: true, custom: decodeSchema, ui: fieldUI{label: "Schema (JSON schema)"}},
	tagsField,
}

// configFields are the writable fields of a config; the type is chosen at create.
var configFields = []field{
	{name: "configTypeId", kind: fString, required: true, min: 1, create: true, ref: "config-types"},
	{name: "name", kind: fString, required: true, min: 1, max: 255},
	{name: "data", kind: fCustom, required: true, custom: decodeConfigData},
	tagsField,
}

// decodeSchema accepts a JSON object that compiles as a JSON schema.
func decodeSchema(raw json.RawMessage) (any, error) {
	if !isObject(raw) {
		return nil, invalidField("schema", "must be an object (a JSON schema)", causeValue(raw))
	}
	if _, err := compileSchema(raw); err != nil {
		return nil, invalidField("schema", err.Error(), nil)
	}
	return compact(raw), nil
}

// decodeConfigData accepts any JSON object; the schema check needs the type.
func decodeConfigData(raw json.RawMessage) (any, error) {
	if !isObject(raw) {
		return nil, invalidField("data", "must be an object", causeValue(raw))
	}
	return compact(raw), nil
}

// causeValue is a raw field value to show as an error's cause.value.
func causeValue(raw json.RawMessage) any {
	if !json.Valid(raw) {
		return nil
	}
	return raw
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// compact keeps a JSON value raw (numbers keep their precision) without spaces.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return json.RawMessage(b.Bytes())
}

func (s *Server) createConfigType(c *call) error {
	return s.createHandler(store.KindConfigType, "config-types", configTypeFields, fsm.CmdConfigTypeCreate, nil)(c)
}

// updateConfigType applies a PUT or PATCH. A new schema must accept the data
// of every existing config of the type; the command names the config versions
// it checked, and a config written meanwhile makes it check again.
func (s *Server) updateConfigType(m mode) func(c *call) error {
	return func(c *call) error {
		id := c.param("id")
		if !c.tx.Exists(store.KindConfigType, id) {
			return notFound("config type", id)
		}
		p, err := parseBody(c, configTypeFields, m)
		if err != nil {
			return err
		}
		tx := c.tx
		for attempt := 0; ; attempt++ {
			cur, err := store.GetAs[*store.ConfigType](tx, store.KindConfigType, id)
			if err != nil {
				return err
			}
			var checked map[string]time.Time
			if newSchema, ok := p.patch["schema"]; ok && !store.SameJSON(cur.Schema, newSchema) {
				if checked, err = checkConfigsAgainst(tx, id, newSchema); err != nil {
					return err
				}
			}
			_, err = s.Writer.Do(c.r.Context(), fsm.CmdConfigTypeUpdate,
				fsm.ConfigTypeUpdate{Update: fsm.Update{ID: id, Patch: p.patch, At: s.now()}, Checked: checked})
			if !store.IsStale(err) || attempt >= maxStaleRetries {
				return err
			}
			tx = s.Store.Read()
		}
	}
}

// checkConfigsAgainst validates every config of a type against a new schema
// and returns the versions it checked.
func checkConfigsAgainst(tx *store.Tx, typeID string, schema json.RawMessage) (map[string]time.Time, error) {
	var sch *jsonschema.Schema
	if store.HasSchema(schema) {
		var err error
		if sch, err = compileSchema(schema); err != nil {
			return nil, invalidField("schema", err.Error(), nil)
		}
	}
	checked := map[string]time.Time{}
	var bad error
	tx.Each(store.KindConfig, "configType", func(r store.Record) bool {
		cfg := r.(*store.Config)
		if err := validateData(sch, cfg.Data); err != nil {
			reason := err.Error()
			if ae, ok := err.(*apiError); ok {
				reason = ae.message
			}
			bad = invalidField("schema", fmt.Sprintf("config %q (%s) would no longer be valid: %s", cfg.Name, cfg.ID, reason), nil)
			return false
		}
		checked[cfg.ID] = cfg.UpdatedAt
		return true
	}, typeID)
	return checked, bad
}

func (s *Server) deleteConfigType(c *call) error {
	id := c.param("id")
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdConfigTypeDelete, fsm.Delete{ID: id}); err != nil {
		return err
	}
	schemaCache.Delete(id)
	return nil
}

func (s *Server) getConfigType(c *call) error {
	t, err := store.GetAs[*store.ConfigType](c.tx, store.KindConfigType, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(configTypeView(t))
	return nil
}

func (s *Server) listConfigTypes(c *call) error {
	return c.listKind(store.KindConfigType, false, func(r store.Record) any { return configTypeView(r.(*store.ConfigType)) })
}

// configTypeConfigs lists the configs of a config type.
func (s *Server) configTypeConfigs(c *call) error {
	id := c.param("id") // an existing config type (ofExistingRecords)
	return s.listIndexed(c, store.KindConfig, "configType", id, func(r store.Record) any { return s.configView(c.tx, r.(*store.Config)) })
}

// configTypeView is a config type as the Management API shows it.
func configTypeView(t *store.ConfigType) map[string]any {
	v := namedRecordView(t, "config-types", t.Tags, "configs")
	v["schema"] = rawOrEmpty(t.Schema)
	return v
}

// rawOrEmpty shows an absent JSON object as {}.
func rawOrEmpty(raw json.RawMessage) json.RawMessage {
	if !store.HasSchema(raw) {
		return json.RawMessage("{}")
	}
	return raw
}

// configTypeRoutes are the config type operations.
func (s *Server) configTypeRoutes() []route {
	return append(crudRoutes("/config-types", "ConfigType", "ConfigTypes", "Config", crudOps{list: s.listConfigTypes, create: s.createConfigType, detail: s.getConfigType, update: s.updateConfigType, del: s.deleteConfigType}),
		route{managementAPI, get, "/config-types/:id/configs", "listConfigsForConfigType", "Config", admin, s.configTypeConfigs},
	)
}
