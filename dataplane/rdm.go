package dataplane

import (
	"crypto/x509"
	"encoding/json"
	"sort"

	"edgectl/auth"
	"edgectl/dataplane/wire"
	"edgectl/pki"
	"edgectl/store"
)

// The router data model (RDM): what routers from v1.7 hold of the model to
// judge sessions themselves: config types, configs, identities, services,
// posture checks, service policies with the services and identities they
// select (not their posture checks: policyEvents), and the public keys that
// verify the JWTs they are shown. A router subscribes to it on one node; it gets the full state
// (DataState) and then change sets (ChangeSet) keyed by the Raft index, on
// a timeline that is the cluster's (store.DataPlaneKeys.TimelineID), so it
// can move to another node and carry on from its index.

// event is an event of a model; the actions and models are the wire package's.
func event(action wire.Action, m wire.Model) []byte { return wire.Event(action, false, m) }

func configTypeModel(c *store.ConfigType) wire.Model { return wire.ConfigType{ID: c.ID, Name: c.Name} }

func configModel(c *store.Config) wire.Model {
	return wire.Config{ID: c.ID, TypeID: c.ConfigTypeID, Name: c.Name, DataJSON: string(c.Data)}
}

func serviceModel(s *store.Service) wire.Model {
	return wire.Service{ID: s.ID, Name: s.Name, EncryptionRequired: s.EncryptionRequired, Configs: s.Configs}
}

// precedence is a terminator precedence as routers know it.
func precedence(p string) wire.Precedence {
	switch p {
	case "required":
		return wire.PrecedenceRequired
	case "failed":
		return wire.PrecedenceFailed
	}
	return wire.PrecedenceDefault
}

// identityModel is an identity with its service config overrides.
func identityModel(tx *store.Tx, i *store.Identity) wire.Model {
	m := wire.Identity{ID: i.ID, Name: i.Name, DefaultHostingPrecedence: precedence(i.DefaultHostingPrecedence),
		DefaultHostingCost: uint32(max(i.DefaultHostingCost, 0)), Disabled: i.Disabled}
	if len(i.ServiceHostingPrecedences) > 0 {
		m.ServiceHostingPrecedences = map[string]wire.Precedence{}
		for k, v := range i.ServiceHostingPrecedences {
			m.ServiceHostingPrecedences[k] = precedence(v)
		}
	}
	if len(i.ServiceHostingCosts) > 0 {
		m.ServiceHostingCosts = map[string]uint32{}
		for k, v := range i.ServiceHostingCosts {
			m.ServiceHostingCosts[k] = uint32(max(v, 0))
		}
	}
	if len(i.AppData) > 0 {
		m.AppDataJSON, _ = json.Marshal(i.AppData)
	}
	tx.Each(store.KindIdentityServiceConfig, "identity", func(r store.Record) bool {
		o := r.(*store.IdentityServiceConfig)
		if m.ServiceConfigs == nil {
			m.ServiceConfigs = map[string]map[string]string{}
		}
		if m.ServiceConfigs[o.ServiceID] == nil {
			m.ServiceConfigs[o.ServiceID] = map[string]string{}
		}
		m.ServiceConfigs[o.ServiceID][o.ConfigTypeID] = o.ConfigID
		return true
	}, i.ID)
	return m
}

func postureCheckModel(p *store.PostureCheck) wire.Model {
	m := wire.PostureCheck{ID: p.ID, Name: p.Name, TypeID: p.TypeID, MacAddresses: p.MacAddresses,
		Semantic: p.Semantic, Domains: p.Domains}
	process := func(pr store.Process) wire.Process {
		return wire.Process{OSType: pr.OSType, Path: pr.Path, Hashes: pr.Hashes, Fingerprints: pr.SignerFingerprints}
	}
	if p.TypeID == "MFA" {
		m.MFA = &wire.MFA{TimeoutSeconds: p.TimeoutSeconds, PromptOnWake: p.PromptOnWake, PromptOnUnlock: p.PromptOnUnlock}
	}
	for _, os := range p.OperatingSystems {
		m.OSList = append(m.OSList, wire.OS{Type: os.Type, Versions: os.Versions})
	}
	if p.Process != nil {
		pr := process(*p.Process)
		m.Process = &pr
	}
	for _, pr := range p.Processes {
		m.Processes = append(m.Processes, process(pr))
	}
	return m
}

func servicePolicyModel(p *store.ServicePolicy) wire.Model {
	t := wire.DialPolicy
	if p.Type == "Bind" {
		t = wire.BindPolicy
	}
	return wire.ServicePolicy{ID: p.ID, Name: p.Name, PolicyType: t}
}

// policyChange is the event of ids of one related type added to or removed from a policy.
func policyChange(policyID string, related wire.Related, ids []string, add bool) []byte {
	return event(wire.Update, wire.ServicePolicyChange{PolicyID: policyID, RelatedEntityIDs: ids, RelatedEntityType: related, Add: add})
}

// publicKeys are the keys routers trust: the keys that sign service
// session JWTs and API session JWTs (JWT validation) and the cluster's CA
// certificates (client certificate validation).
func publicKeys(tx *store.Tx, keys *store.DataPlaneKeys, authority func(*store.Tx) (*pki.Authority, error)) [][]byte {
	var out [][]byte
	if keys != nil {
		if ev := sessionKeyEvent(keys, true); ev != nil {
			out = append(out, ev)
		}
		if p := keys.Previous; p != nil {
			out = append(out, jwtKeyEvent(wire.Create, true, p.KeyID, p.PublicKey))
		}
		if ev := apiSessionKeyEvent(keys); ev != nil {
			out = append(out, ev)
		}
	}
	if authority != nil {
		if a, err := authority(tx); err == nil {
			for _, c := range append([]*x509.Certificate{a.Root()}, a.Intermediates()...) {
				out = append(out, wire.Event(wire.Create, true, wire.PublicKey{Data: c.Raw, Kid: pki.Fingerprint(c),
					Format: wire.FormatX509CertDer, Usages: []uint64{wire.UsageClientX509CertValidation}}))
			}
		}
	}
	return out
}

// sessionKeyEvent is the create event of the current session signing
// key's public key (full: part of a full state); nil if it does not parse.
func sessionKeyEvent(keys *store.DataPlaneKeys, full bool) []byte {
	signer, err := pki.ParseKeyPEM([]byte(keys.SigningKeyPEM))
	if err != nil {
		return nil
	}
	der, err := x509.MarshalPKIXPublicKey(signer.Public())
	if err != nil {
		return nil
	}
	return jwtKeyEvent(wire.Create, full, keys.KeyID, der)
}

// apiSessionKeyEvent is the create event of the API session signing key's
// public key (part of a full state; it never changes: it is derived from
// the token key).
func apiSessionKeyEvent(keys *store.DataPlaneKeys) []byte {
	pub := auth.APISessionSigningKey(keys.TokenKey).Public()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil
	}
	kid, err := pki.KeyID(pub)
	if err != nil {
		return nil
	}
	return jwtKeyEvent(wire.Create, true, kid, der)
}

func jwtKeyEvent(action wire.Action, full bool, kid string, der []byte) []byte {
	return wire.Event(action, full, wire.PublicKey{Data: der, Kid: kid, Format: wire.FormatPKIXPublicKey, Usages: []uint64{wire.UsageJWTValidation}})
}

// sessionKeyChange are the events of a session key rotation: the new
// key's public key added, the retired key's removed (the replaced key
// stays: it still verifies the sessions it signed).
func sessionKeyChange(c store.Change) [][]byte {
	if c.Old == nil || c.New == nil || c.New.GetID() != store.SettingDataPlane {
		return nil
	}
	var o, n store.DataPlaneKeys
	if json.Unmarshal(c.Old.(*store.Setting).Value, &o) != nil || json.Unmarshal(c.New.(*store.Setting).Value, &n) != nil || o.KeyID == n.KeyID {
		return nil
	}
	var out [][]byte
	if ev := sessionKeyEvent(&n, false); ev != nil {
		out = append(out, ev)
	}
	if o.Previous != nil && (n.Previous == nil || n.Previous.KeyID != o.Previous.KeyID) {
		out = append(out, jwtKeyEvent(wire.Delete, false, o.Previous.KeyID, o.Previous.PublicKey))
	}
	return out
}

// fullState is every event of the model, in the order routers apply them:
// config types, configs, identities, services, posture checks, then each
// service policy with its services, posture checks and identities, then
// the public keys.
func (m *Manager) fullState(tx *store.Tx) [][]byte {
	var out [][]byte
	each := func(k *store.Kind, fn func(store.Record) []byte) {
		tx.Each(k, "id", func(r store.Record) bool {
			out = append(out, fn(r))
			return true
		})
	}
	each(store.KindConfigType, func(r store.Record) []byte {
		return event(wire.Create, configTypeModel(r.(*store.ConfigType)))
	})
	each(store.KindConfig, func(r store.Record) []byte {
		return event(wire.Create, configModel(r.(*store.Config)))
	})
	each(store.KindIdentity, func(r store.Record) []byte {
		return event(wire.Create, identityModel(tx, r.(*store.Identity)))
	})
	each(store.KindService, func(r store.Record) []byte {
		return event(wire.Create, serviceModel(r.(*store.Service)))
	})
	each(store.KindPostureCheck, func(r store.Record) []byte {
		return event(wire.Create, postureCheckModel(r.(*store.PostureCheck)))
	})
	tx.Each(store.KindServicePolicy, "id", func(r store.Record) bool {
		out = append(out, policyEvents(tx, r.(*store.ServicePolicy))...)
		return true
	})
	return append(out, publicKeys(tx, tx.DataPlaneKeys(), m.cfg.Authority)...)
}

// policyEvents create service policy p with the identities and services it
// selects. Routers are not told the posture checks a policy requires: a
// router checks a client with a JWT API session against its model before it
// asks for a circuit, and OpenZiti's Go SDK sends its posture data to the
// controller, not to routers, so a router would refuse every dial of a
// service with posture checks. Posture is judged by the node that makes the
// circuit (docs/architecture.md).
func policyEvents(tx *store.Tx, p *store.ServicePolicy) [][]byte {
	out := [][]byte{event(wire.Create, servicePolicyModel(p))}
	for _, rel := range []struct {
		name    string
		related wire.Related
	}{{store.RelServicePolicyService, wire.RelatedService}, {store.RelServicePolicyIdentity, wire.RelatedIdentity}} {
		var ids []string
		tx.PolicyEntities(rel.name, p.ID, func(id string) bool { ids = append(ids, id); return true })
		if len(ids) > 0 {
			sort.Strings(ids)
			out = append(out, policyChange(p.ID, rel.related, ids, true))
		}
	}
	return out
}

// changeEvents are the events of one entry's record changes, read against
// tx (the model as it is now, at or past the entry).
func changeEvents(tx *store.Tx, changes []store.Change) [][]byte {
	var out [][]byte
	for _, c := range changes {
		switch c.Kind {
		case store.KindConfigType:
			out = append(out, entityEvent(tx, c, func(r store.Record) wire.Model { return configTypeModel(r.(*store.ConfigType)) },
				func(id string) wire.Model { return wire.ConfigType{ID: id} }))
		case store.KindConfig:
			out = append(out, entityEvent(tx, c, func(r store.Record) wire.Model { return configModel(r.(*store.Config)) },
				func(id string) wire.Model { return wire.Config{ID: id} }))
		case store.KindIdentity, store.KindService:
			out = append(out, entitySelectionEvents(tx, c)...)
		case store.KindPostureCheck:
			// The check itself; policies do not name it (policyEvents).
			out = append(out, entityEvent(tx, c, func(r store.Record) wire.Model { return postureCheckModel(r.(*store.PostureCheck)) },
				func(id string) wire.Model { return wire.PostureCheck{ID: id} }))
		case store.KindIdentityServiceConfig:
			var id string
			if c.New == nil {
				id = c.Old.(*store.IdentityServiceConfig).IdentityID
			} else {
				id = c.New.(*store.IdentityServiceConfig).IdentityID
			}
			if i, err := store.GetAs[*store.Identity](tx, store.KindIdentity, id); err == nil {
				out = append(out, event(wire.Update, identityModel(tx, i)))
			}
		case store.KindSetting:
			out = append(out, sessionKeyChange(c)...)
		case store.KindServicePolicy:
			// A policy changed as a whole: removed and made again with
			// what it selects now. Routers keep an identity's policies on
			// the identity (and judge its services, a router's own tunneler
			// included, by them): the identities the policy no longer
			// selects are taken out of it first.
			id := recordID(c)
			if lost := tx.SelectionLost(store.RelServicePolicyIdentity, c.Old, c.New); len(lost) > 0 {
				out = append(out, policyChange(id, wire.RelatedIdentity, lost, false))
			}
			out = append(out, event(wire.Delete, wire.ServicePolicy{ID: id}))
			if p, err := store.GetAs[*store.ServicePolicy](tx, store.KindServicePolicy, id); err == nil && c.New != nil {
				out = append(out, policyEvents(tx, p)...)
			}
		}
	}
	return out
}

func recordID(c store.Change) string {
	if c.New != nil {
		return c.New.GetID()
	}
	return c.Old.GetID()
}

// entityEvent is the upsert or delete of a record without relations.
func entityEvent(tx *store.Tx, c store.Change, model func(store.Record) wire.Model, deleted func(id string) wire.Model) []byte {
	id := recordID(c)
	r, err := tx.Get(c.Kind, id)
	if c.New == nil || err != nil {
		return event(wire.Delete, deleted(id))
	}
	if c.Old == nil {
		return event(wire.Create, model(r))
	}
	return event(wire.Update, model(r))
}

// entitySelectionEvents are the events of an identity or service change:
// the record itself, and the policies it moved in or out of. A new entity
// comes before the policies take it; a removed one leaves the policies
// first.
func entitySelectionEvents(tx *store.Tx, c store.Change) [][]byte {
	var rel string
	var related wire.Related
	var model func(store.Record) wire.Model
	var deleted func(id string) wire.Model
	switch c.Kind {
	case store.KindIdentity:
		rel, related = store.RelServicePolicyIdentity, wire.RelatedIdentity
		model = func(r store.Record) wire.Model { return identityModel(tx, r.(*store.Identity)) }
		deleted = func(id string) wire.Model { return wire.Identity{ID: id} }
	default:
		rel, related = store.RelServicePolicyService, wire.RelatedService
		model = func(r store.Record) wire.Model { return serviceModel(r.(*store.Service)) }
		deleted = func(id string) wire.Model { return wire.Service{ID: id} }
	}
	id := recordID(c)
	var oldAttrs, newAttrs []string
	if c.Old != nil {
		oldAttrs = c.Old.(interface{ Roles() []string }).Roles()
	}
	now, err := tx.Get(c.Kind, id)
	exists := err == nil && c.New != nil
	if exists {
		newAttrs = now.(interface{ Roles() []string }).Roles()
	}
	added, removed := tx.SelectionChange(rel, id, oldAttrs, newAttrs, c.Old != nil, exists)
	var out [][]byte
	for _, p := range removed {
		out = append(out, policyChange(p, related, []string{id}, false))
	}
	if !exists {
		return append(out, event(wire.Delete, deleted(id)))
	}
	action := wire.Update
	if c.Old == nil {
		action = wire.Create
	}
	out = append(out, event(action, model(now)))
	for _, p := range added {
		out = append(out, policyChange(p, related, []string{id}, true))
	}
	return out
}
