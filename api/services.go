package api

import (
	"bytes"
	"encoding/json"

	"edgectl/fsm"
	"edgectl/store"
)

// terminatorStrategies are the strategies a service may pick its terminators by.
var terminatorStrategies = []string{"smartrouting", "weighted", "random", "ha"}

// maxIdleTimeMillis is the largest idle time a service accepts (2^53-1, the
// largest integer every JSON client reads exactly).
const maxIdleTimeMillis = 1<<53 - 1

// serviceFields are the writable fields of a service. encryptionRequired is
// set at create; updates handle it apart (see updateService).
var serviceFields = []field{
	{name: "name", kind: fString, required: true, min: 1, max: 255},
	{name: "configs", kind: fStringList, nullable: true, min: 1, ref: "configs"},
	{name: "encryptionRequired", kind: fBool, nullable: true, create: true, def: false, ui: fieldUI{value: true}},
	{name: "terminatorStrategy", kind: fString, nullable: true, enum: terminatorStrategies, def: "smartrouting"},
	{name: "roleAttributes", kind: fStringList, nullable: true, min: 1, max: 255},
	{name: "maxIdleTimeMillis", kind: fInt, nullable: true, min: 0, max: maxIdleTimeMillis, def: 0},
	tagsField,
}

func (s *Server) createService(c *call) error {
	return s.createHandler(store.KindService, "services", serviceFields, fsm.CmdServiceCreate, nil)(c)
}

// updateService applies a PUT or PATCH. encryptionRequired is read-only
// after create: absent (also on PUT) keeps it, the same value is accepted,
// another value is refused by the model with a 400 on encryptionRequired.
func (s *Server) updateService(m mode) func(c *call) error {
	return s.updateHandler(store.KindService, serviceFields, fsm.CmdServiceUpdate, m, encryptionRequiredPatch)
}

// encryptionRequiredPatch passes the encryptionRequired an update sends on to
// the model, which accepts the same value and refuses a change (the field
// is create-only, so parseFields skips it).
func encryptionRequiredPatch(_ *call, p *parsed) error {
	rv, ok := p.raw["encryptionRequired"]
	if !ok || string(bytes.TrimSpace(rv)) == "null" {
		return nil
	}
	var b bool
	if err := unmarshalField("encryptionRequired", rv, &b); err != nil {
		return err
	}
	return p.set("encryptionRequired", b)
}

func (s *Server) deleteService(c *call) error {
	_, err := s.Writer.Do(c.r.Context(), fsm.CmdServiceDelete, fsm.Delete{ID: c.param("id")})
	return err
}

func (s *Server) getService(c *call) error {
	svc, err := store.GetAs[*store.Service](c.tx, store.KindService, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(s.serviceView(c.tx, svc))
	return nil
}

func (s *Server) listServices(c *call) error {
	return c.listKind(store.KindService, true, func(r store.Record) any { return s.serviceView(c.tx, r.(*store.Service)) })
}

// serviceConfigs lists the configs of a service, in the service's order.
func (s *Server) serviceConfigs(c *call) error {
	svc, err := store.GetAs[*store.Service](c.tx, store.KindService, c.param("id"))
	if err != nil {
		return err
	}
	lr, err := c.parseList(store.KindConfig.Fields, false)
	if err != nil {
		return err
	}
	recs := make([]store.Record, 0, len(svc.Configs))
	for _, id := range svc.Configs {
		if r, err := c.tx.Get(store.KindConfig, id); err == nil {
			recs = append(recs, r)
		}
	}
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return s.configView(c.tx, r.(*store.Config)) })
}

// serviceTerminators lists the terminators of a service.
func (s *Server) serviceTerminators(c *call) error {
	id := c.param("id") // an existing service (ofExistingRecords)
	return s.listIndexed(c, store.KindTerminator, "service", id, func(r store.Record) any { return s.terminatorView(c.tx, r.(*store.Terminator), c.api) })
}

// serviceView is a service as the Management API shows it. config maps the
// name of each config's type to the config's data.
func (s *Server) serviceView(tx *store.Tx, svc *store.Service) map[string]any {
	l := selfLinks("services", svc.ID)
	for _, rel := range []string{"configs", "terminators", "service-policies", "service-edge-router-policies",
		"identities", "edge-routers"} {
		l[rel] = map[string]string{"href": "./services/" + svc.ID + "/" + rel}
	}
	config := map[string]json.RawMessage{}
	for _, id := range svc.Configs {
		cfg, err := store.GetAs[*store.Config](tx, store.KindConfig, id)
		if err != nil {
			continue
		}
		if t, err := tx.Get(store.KindConfigType, cfg.ConfigTypeID); err == nil {
			config[t.RecordName()] = rawOrEmpty(cfg.Data)
		}
	}
	return map[string]any{
		"_links":             l,
		"id":                 svc.ID,
		"createdAt":          svc.CreatedAt,
		"updatedAt":          svc.UpdatedAt,
		"tags":               tagsOrEmpty(svc.Tags),
		"name":               svc.Name,
		"configs":            nonNilStrings(svc.Configs),
		"config":             config,
		"encryptionRequired": svc.EncryptionRequired,
		"terminatorStrategy": svc.TerminatorStrategy,
		"roleAttributes":     nonNilStrings(svc.RoleAttributes),
		"maxIdleTimeMillis":  svc.MaxIdleTimeMillis,
	}
}

// serviceRoutes are the service operations of the Management API, and the admin writes the Client API also offers.
func (s *Server) serviceRoutes() []route {
	return append(crudRoutes("/services", "Service", "Services", "Service", crudOps{list: s.listServices, create: s.createService, detail: s.getService, update: s.updateService, del: s.deleteService}),
		route{managementAPI, get, "/services/:id/configs", "listServiceConfig", "Service", admin, s.serviceConfigs},
		route{managementAPI, get, "/services/:id/terminators", "listServiceTerminators", "Service", admin, s.serviceTerminators},
		route{clientAPI, put, "/services/:id", "updateService", "Service", admin, s.updateService(modePut)},
		route{clientAPI, patch, "/services/:id", "patchService", "Service", admin, s.updateService(modePatch)},
		route{clientAPI, del, "/services/:id", "deleteService", "Service", admin, s.deleteService},
	)
}
