package api

import (
	"encoding/json"
	"sort"
	"time"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/store"
)

// validatedData validates data against the current schema of a config type
// and returns the type's version (updatedAt) it was validated at.
func validatedData(tx *store.Tx, typeID string, data json.RawMessage) (time.Time, error) {
	t, err := store.GetAs[*store.ConfigType](tx, store.KindConfigType, typeID)
	if err != nil {
		return time.Time{}, invalidField("configTypeId", "no config type with this id", typeID)
	}
	sch, err := typeSchema(t)
	if err != nil {
		return time.Time{}, err
	}
	return t.UpdatedAt, validateData(sch, data)
}

// createConfig validates the data against its type's schema, then proposes
// the config with the type version it validated at; if the type changed
// before Apply, it validates again.
func (s *Server) createConfig(c *call) error {
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	p, err := parseFields(raw, configFields, modeCreate)
	if err != nil {
		return err
	}
	cfg := &store.Config{}
	if err := fill(cfg, p.patch); err != nil {
		return err
	}
	now := s.now()
	cfg.ID, cfg.CreatedAt, cfg.UpdatedAt = auth.NewID(), now, now
	tx := c.tx
	for attempt := 0; ; attempt++ {
		version, err := validatedData(tx, cfg.ConfigTypeID, cfg.Data)
		if err != nil {
			return err
		}
		_, err = s.Writer.Do(c.r.Context(), fsm.CmdConfigCreate, fsm.ConfigCreate{Config: cfg, TypeVersion: version})
		if err == nil {
			c.created("configs", cfg.ID)
			return nil
		}
		if !store.IsStale(err) || attempt >= maxStaleRetries {
			return err
		}
		tx = s.Store.Read()
	}
}

// updateConfig applies a PUT or PATCH; new data is validated like at create.
// The config type cannot change: a configTypeId other than the current one is refused.
func (s *Server) updateConfig(m mode) func(c *call) error {
	return func(c *call) error {
		id := c.param("id")
		cur, err := store.GetAs[*store.Config](c.tx, store.KindConfig, id)
		if err != nil {
			return err
		}
		raw, err := decodeObject(c.r)
		if err != nil {
			return err
		}
		p, err := parseFields(raw, configFields, m)
		if err != nil {
			return err
		}
		if rv, ok := raw["configTypeId"]; ok {
			var typeID string
			if err := unmarshalField("configTypeId", rv, &typeID); err != nil {
				return err
			}
			if typeID != cur.ConfigTypeID {
				return invalidField("configTypeId", "the config type of a config cannot change", typeID)
			}
		}
		tx := c.tx
		for attempt := 0; ; attempt++ {
			var version *time.Time
			if data, ok := p.patch["data"]; ok {
				cur, err := store.GetAs[*store.Config](tx, store.KindConfig, id)
				if err != nil {
					return err
				}
				v, err := validatedData(tx, cur.ConfigTypeID, data)
				if err != nil {
					return err
				}
				version = &v
			}
			_, err = s.Writer.Do(c.r.Context(), fsm.CmdConfigUpdate,
				fsm.ConfigUpdate{Update: fsm.Update{ID: id, Patch: p.patch, At: s.now()}, TypeVersion: version})
			if !store.IsStale(err) || attempt >= maxStaleRetries {
				return err
			}
			tx = s.Store.Read()
		}
	}
}

func (s *Server) deleteConfig(c *call) error {
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdConfigDelete, fsm.Delete{ID: c.param("id")})
	return err
}

func (s *Server) getConfig(c *call) error {
	cfg, err := store.GetAs[*store.Config](c.tx, store.KindConfig, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(s.configView(c.tx, cfg))
	return nil
}

func (s *Server) listConfigs(c *call) error {
	return c.listKind(store.KindConfig, false, func(r store.Record) any { return s.configView(c.tx, r.(*store.Config)) })
}

// configServices lists the services that use a config, through the services' config index.
func (s *Server) configServices(c *call) error {
	id := c.param("id") // an existing config (ofExistingRecords)
	return s.listIndexed(c, store.KindService, "configs", id, func(r store.Record) any { return s.serviceView(c.tx, r.(*store.Service)) })
}

// configView is a config as the Management API shows it.
func (s *Server) configView(tx *store.Tx, cfg *store.Config) map[string]any {
	v := namedRecordView(cfg, "configs", cfg.Tags, "services")
	v["configType"] = s.entityRef(tx, store.KindConfigType, "config-types", cfg.ConfigTypeID)
	v["configTypeId"], v["data"] = cfg.ConfigTypeID, rawOrEmpty(cfg.Data)
	return v
}

// listIndexed serves a list of the records of k that an index matches with
// value, in the default order (name then id, or creation then id). It reads
// only the matching records.
func (s *Server) listIndexed(c *call, k *store.Kind, index, value string, view func(store.Record) any) error {
	lr, err := c.parseList(k.Fields, false)
	if err != nil {
		return err
	}
	var recs []store.Record
	c.tx.Each(k, index, func(r store.Record) bool { recs = append(recs, r); return true }, value)
	sortDefault(k, recs)
	return c.page(lr, recordsSource(recs), len(recs), view)
}

// sortDefault sorts records in the default list order of their kind.
func sortDefault(k *store.Kind, recs []store.Record) {
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if k.Named {
			if a.RecordName() != b.RecordName() {
				return a.RecordName() < b.RecordName()
			}
		} else if ta, tb := store.BaseOf(a).CreatedAt, store.BaseOf(b).CreatedAt; !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return a.GetID() < b.GetID()
	})
}

// recordsSource iterates a slice of records.
// ownedRecords returns the records of k whose index matches value (the
// records one identity, API session... owns), in the default list order:
// an owner index gives them in id order.
func ownedRecords(tx *store.Tx, k *store.Kind, index, value string) []store.Record {
	var recs []store.Record
	tx.Each(k, index, func(r store.Record) bool { recs = append(recs, r); return true }, value)
	sortDefault(k, recs)
	return recs
}

func recordsSource(recs []store.Record) source {
	return func(fn func(store.Record) bool) {
		for _, r := range recs {
			if !fn(r) {
				return
			}
		}
	}
}

// configRoutes are the config operations.
func (s *Server) configRoutes() []route {
	return append(crudRoutes("/configs", "Config", "Configs", "Config", crudOps{list: s.listConfigs, create: s.createConfig, detail: s.getConfig, update: s.updateConfig, del: s.deleteConfig}),
		route{managementAPI, get, "/configs/:id/services", "listConfigServices", "Config", admin, s.configServices},
	)
}
