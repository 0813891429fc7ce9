package api

import (
	"bytes"
	"encoding/json"
	"fmt"

	"edgectl/fsm"
	"edgectl/store"
)

// decodeServiceConfigRefs reads an array body of {serviceId, configId}. An
// empty body or null is an empty array. Both fields are required in every
// item; with mustExist the service and the config must exist too.
func decodeServiceConfigRefs(c *call, mustExist bool) ([]store.ServiceConfigRef, error) {
	b, err := readBody(c.r, maxBody)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	if b[0] != '[' {
		return nil, badBody("the request body must be a JSON array of {serviceId, configId}")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, badBody("the request body is not valid JSON: %v", err)
	}
	out := make([]store.ServiceConfigRef, 0, len(items))
	for i, raw := range items {
		var obj map[string]json.RawMessage
		if err := unmarshalField(fmt.Sprintf("[%d]", i), raw, &obj); err != nil || obj == nil {
			return nil, invalidField(fmt.Sprintf("[%d]", i), "must be an object {serviceId, configId}", nil)
		}
		var ref store.ServiceConfigRef
		for _, f := range []struct {
			name string
			dst  *string
			kind *store.Kind
		}{{"serviceId", &ref.ServiceID, store.KindService}, {"configId", &ref.ConfigID, store.KindConfig}} {
			name := fmt.Sprintf("[%d].%s", i, f.name)
			rv, ok := obj[f.name]
			if !ok || string(bytes.TrimSpace(rv)) == "null" {
				return nil, invalidField(name, "is required", nil)
			}
			if err := unmarshalField(name, rv, f.dst); err != nil {
				return nil, err
			}
			if *f.dst == "" {
				return nil, invalidField(name, "must not be empty", "")
			}
			if mustExist && !c.tx.Exists(f.kind, *f.dst) {
				return nil, invalidField(name, "no "+f.kind.Entity+" with this id", *f.dst)
			}
		}
		out = append(out, ref)
	}
	return out, nil
}

// associateIdentityServiceConfigs sets, per service and config type, the
// config the identity uses instead of the service's.
func (s *Server) associateIdentityServiceConfigs(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindIdentity, id) {
		return notFound("identity", id)
	}
	items, err := decodeServiceConfigRefs(c, true)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	_, err = s.Writer.Do(c.r.Context(), fsm.CmdIdentityServiceConfigsAdd, fsm.ServiceConfigs{IdentityID: id, Items: items, At: s.now()})
	return err
}

// disassociateIdentityServiceConfigs removes the listed associations, or all
// of the identity's when the body is empty or an empty array. Items need not
// name existing records: removing what is not there is a no-op.
func (s *Server) disassociateIdentityServiceConfigs(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindIdentity, id) {
		return notFound("identity", id)
	}
	items, err := decodeServiceConfigRefs(c, false)
	if err != nil {
		return err
	}
	_, err = s.Writer.Do(c.r.Context(), fsm.CmdIdentityServiceConfigsRemove, fsm.ServiceConfigs{IdentityID: id, Items: items})
	return err
}

// listIdentityServiceConfigs lists the identity's associations as {config, service} pairs.
func (s *Server) listIdentityServiceConfigs(c *call) error {
	id := c.param("id") // an existing identity (ofExistingRecords)
	return s.listIndexed(c, store.KindIdentityServiceConfig, "identity", id, func(r store.Record) any {
		a := r.(*store.IdentityServiceConfig)
		return map[string]any{
			"config":  s.serviceConfigRef(c.tx, store.KindConfig, "configs", a.ConfigID),
			"service": s.serviceConfigRef(c.tx, store.KindService, "services", a.ServiceID),
		}
	})
}

// serviceConfigRef is an EntityRef with urlName, the spelling the spec uses for these lists.
func (s *Server) serviceConfigRef(tx *store.Tx, k *store.Kind, path, id string) map[string]any {
	ref := s.entityRef(tx, k, path, id)
	ref["urlName"] = path
	return ref
}

// serviceConfigRoutes are an identity's service-config overrides.
func (s *Server) serviceConfigRoutes() []route {
	return []route{
		{managementAPI, get, "/identities/:id/service-configs", "listIdentitysServiceConfigs", "Identity", admin, s.listIdentityServiceConfigs},
		{managementAPI, post, "/identities/:id/service-configs", "associateIdentitysServiceConfigs", "Identity", admin, s.associateIdentityServiceConfigs},
		{managementAPI, del, "/identities/:id/service-configs", "disassociateIdentitysServiceConfigs", "Identity", admin, s.disassociateIdentityServiceConfigs},
	}
}
