package dataplane

import (
	"crypto/x509"
	"encoding/json"
	"sort"

	"edgectl/pki"
	"edgectl/store"

	"google.golang.org/protobuf/encoding/protowire"
)

// The router data model (RDM): what routers from v1.7 hold of the model to
// judge sessions themselves: config types, configs, identities, services,
// posture checks, service policies with the services, posture checks and
// identities they select, and the public keys that verify the JWTs they
// are shown. A router subscribes to it on one node; it gets the full state
// (DataState) and then change sets (ChangeSet) keyed by the Raft index, on
// a timeline that is the cluster's (store.DataPlaneKeys.TimelineID), so it
// can move to another node and carry on from its index.

// Event actions (DataState.Action).
const (
	actionCreate = 0
	actionUpdate = 1
	actionDelete = 2
)

// Related entity types of a ServicePolicyChange.
const (
	relatedService      = 1
	relatedIdentity     = 2
	relatedPostureCheck = 3
)

// Public key usages and formats.
const (
	usageJWTValidation        = 0
	usageClientCertValidation = 1
	formatX509CertDer         = 0
	formatPKIXPublicKey       = 1
)

// event is one DataState.Event: action 1, isSynthetic 3, the model in the
// oneof field (identity 10, service 11, servicePolicy 12, postureCheck 13,
// publicKey 14, servicePolicyChange 16, configType 17, config 18).
func event(action int, synthetic bool, field protowire.Number, model []byte) []byte {
	return protoBuf(nil).uint(1, uint64(action)).boolean(3, synthetic).msg(field, model)
}

const (
	fieldIdentity            = 10
	fieldService             = 11
	fieldServicePolicy       = 12
	fieldPostureCheck        = 13
	fieldPublicKey           = 14
	fieldServicePolicyChange = 16
	fieldConfigType          = 17
	fieldConfig              = 18
)

// dataState is DataState: events 1, endIndex 2, timelineId 3.
func dataState(events [][]byte, endIndex uint64, timeline string) []byte {
	var b protoBuf
	for _, e := range events {
		b = b.msg(1, e)
	}
	return b.uint(2, endIndex).str(3, timeline)
}

// changeSet is DataState.ChangeSet: index 1, isSynthetic 2, changes 3.
func changeSet(index uint64, synthetic bool, events [][]byte) []byte {
	b := protoBuf(nil).uint(1, index).boolean(2, synthetic)
	for _, e := range events {
		b = b.msg(3, e)
	}
	return b
}

func configTypeModel(c *store.ConfigType) []byte {
	return protoBuf(nil).str(1, c.ID).str(2, c.Name)
}

func configModel(c *store.Config) []byte {
	return protoBuf(nil).str(1, c.ID).str(2, c.ConfigTypeID).str(3, c.Name).str(4, string(c.Data))
}

func serviceModel(s *store.Service) []byte {
	return protoBuf(nil).str(1, s.ID).str(2, s.Name).boolean(3, s.EncryptionRequired).strs(4, s.Configs)
}

// precedence is a TerminatorPrecedence: default 0, required 1, failed 2.
func precedence(p string) uint64 {
	switch p {
	case "required":
		return 1
	case "failed":
		return 2
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// identityModel is DataState.Identity, with the identity's service config
// overrides (serviceConfigs: service id → config type id → config id).
func identityModel(tx *store.Tx, i *store.Identity) []byte {
	b := protoBuf(nil).str(1, i.ID).str(2, i.Name).uint(3, precedence(i.DefaultHostingPrecedence)).uint(4, uint64(max(i.DefaultHostingCost, 0)))
	for _, k := range sortedKeys(i.ServiceHostingPrecedences) {
		b = b.msg(5, protoBuf(nil).str(1, k).uint(2, precedence(i.ServiceHostingPrecedences[k])))
	}
	for _, k := range sortedKeys(i.ServiceHostingCosts) {
		b = b.msg(6, protoBuf(nil).str(1, k).uint(2, uint64(max(i.ServiceHostingCosts[k], 0))))
	}
	if len(i.AppData) > 0 {
		if raw, err := json.Marshal(i.AppData); err == nil {
			b = b.bytes(7, raw)
		}
	}
	overrides := map[string]map[string]string{}
	tx.Each(store.KindIdentityServiceConfig, "identity", func(r store.Record) bool {
		o := r.(*store.IdentityServiceConfig)
		if overrides[o.ServiceID] == nil {
			overrides[o.ServiceID] = map[string]string{}
		}
		overrides[o.ServiceID][o.ConfigTypeID] = o.ConfigID
		return true
	}, i.ID)
	for _, svc := range sortedKeys(overrides) {
		b = b.msg(8, protoBuf(nil).str(1, svc).msg(2, protoBuf(nil).strMap(1, overrides[svc])))
	}
	return b.boolean(9, i.Disabled)
}

// postureCheckModel is DataState.PostureCheck: id 1, name 2, typeId 4 and
// its type's part (mac 7, mfa 8, osList 9, process 10, processMulti 11, domains 12).
func postureCheckModel(p *store.PostureCheck) []byte {
	b := protoBuf(nil).str(1, p.ID).str(2, p.Name).str(4, p.TypeID)
	process := func(pr store.Process) []byte {
		return protoBuf(nil).str(1, pr.OSType).str(2, pr.Path).strs(3, pr.Hashes).strs(4, pr.SignerFingerprints)
	}
	switch p.TypeID {
	case "MAC":
		b = b.msg(7, protoBuf(nil).strs(1, p.MacAddresses))
	case "MFA":
		b = b.msg(8, protoBuf(nil).uint(1, uint64(p.TimeoutSeconds)).boolean(2, p.PromptOnWake).boolean(3, p.PromptOnUnlock))
	case "OS":
		var l protoBuf
		for _, os := range p.OperatingSystems {
			l = l.msg(1, protoBuf(nil).str(1, os.Type).strs(2, os.Versions))
		}
		b = b.msg(9, l)
	case "PROCESS":
		if p.Process != nil {
			b = b.msg(10, process(*p.Process))
		}
	case "PROCESS_MULTI":
		m := protoBuf(nil).str(1, p.Semantic)
		for _, pr := range p.Processes {
			m = m.msg(2, process(pr))
		}
		b = b.msg(11, m)
	case "DOMAIN":
		b = b.msg(12, protoBuf(nil).strs(1, p.Domains))
	}
	return b
}

// policyType is a PolicyType: Dial 1, Bind 2.
func policyType(t string) uint64 {
	if t == "Bind" {
		return 2
	}
	return 1
}

func servicePolicyModel(p *store.ServicePolicy) []byte {
	return protoBuf(nil).str(1, p.ID).str(2, p.Name).uint(3, policyType(p.Type))
}

// policyChange is a ServicePolicyChange event: ids of one related type added or removed.
func policyChange(policyID string, related int, ids []string, add bool) []byte {
	return event(actionUpdate, false, fieldServicePolicyChange,
		protoBuf(nil).str(1, policyID).strs(2, ids).uint(3, uint64(related)).boolean(4, add))
}

// publicKeyModel is DataState.PublicKey: data 1, kid 2, usages 3 (packed), format 4.
func publicKeyModel(data []byte, kid string, format uint64, usages ...uint64) []byte {
	var packed []byte
	for _, u := range usages {
		packed = protowire.AppendVarint(packed, u)
	}
	b := protoBuf(nil).bytes(1, data).str(2, kid)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, packed)
	return b.uint(4, format)
}

// publicKeys are the keys routers trust: the key that signs service
// session JWTs (JWT validation) and the cluster's CA certificates (client
// certificate validation).
func publicKeys(tx *store.Tx, keys *store.DataPlaneKeys, authority func(*store.Tx) (*pki.Authority, error)) [][]byte {
	var out [][]byte
	if keys != nil {
		if signer, err := pki.ParseKeyPEM([]byte(keys.SigningKeyPEM)); err == nil {
			if der, err := x509.MarshalPKIXPublicKey(signer.Public()); err == nil {
				out = append(out, event(actionCreate, true, fieldPublicKey, publicKeyModel(der, keys.KeyID, formatPKIXPublicKey, usageJWTValidation)))
			}
		}
	}
	if authority != nil {
		if a, err := authority(tx); err == nil {
			for _, c := range append([]*x509.Certificate{a.Root()}, a.Intermediates()...) {
				out = append(out, event(actionCreate, true, fieldPublicKey,
					publicKeyModel(c.Raw, pki.Fingerprint(c), formatX509CertDer, usageClientCertValidation)))
			}
		}
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
		return event(actionCreate, false, fieldConfigType, configTypeModel(r.(*store.ConfigType)))
	})
	each(store.KindConfig, func(r store.Record) []byte {
		return event(actionCreate, false, fieldConfig, configModel(r.(*store.Config)))
	})
	each(store.KindIdentity, func(r store.Record) []byte {
		return event(actionCreate, false, fieldIdentity, identityModel(tx, r.(*store.Identity)))
	})
	each(store.KindService, func(r store.Record) []byte {
		return event(actionCreate, false, fieldService, serviceModel(r.(*store.Service)))
	})
	each(store.KindPostureCheck, func(r store.Record) []byte {
		return event(actionCreate, false, fieldPostureCheck, postureCheckModel(r.(*store.PostureCheck)))
	})
	tx.Each(store.KindServicePolicy, "id", func(r store.Record) bool {
		out = append(out, policyEvents(tx, r.(*store.ServicePolicy))...)
		return true
	})
	return append(out, publicKeys(tx, tx.DataPlaneKeys(), m.cfg.Authority)...)
}

// policyEvents create service policy p with the entities it selects.
func policyEvents(tx *store.Tx, p *store.ServicePolicy) [][]byte {
	out := [][]byte{event(actionCreate, false, fieldServicePolicy, servicePolicyModel(p))}
	for _, rel := range []struct {
		name    string
		related int
	}{{store.RelServicePolicyService, relatedService}, {store.RelServicePolicyPostureCheck, relatedPostureCheck}, {store.RelServicePolicyIdentity, relatedIdentity}} {
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
		gone := c.New == nil
		action := actionUpdate
		if c.Old == nil {
			action = actionCreate
		}
		switch c.Kind {
		case store.KindConfigType:
			out = append(out, entityEvent(tx, c, fieldConfigType, func(r store.Record) []byte { return configTypeModel(r.(*store.ConfigType)) }))
		case store.KindConfig:
			out = append(out, entityEvent(tx, c, fieldConfig, func(r store.Record) []byte { return configModel(r.(*store.Config)) }))
		case store.KindIdentity, store.KindService, store.KindPostureCheck:
			out = append(out, entitySelectionEvents(tx, c, action, gone)...)
		case store.KindIdentityServiceConfig:
			var id string
			if gone {
				id = c.Old.(*store.IdentityServiceConfig).IdentityID
			} else {
				id = c.New.(*store.IdentityServiceConfig).IdentityID
			}
			if i, err := store.GetAs[*store.Identity](tx, store.KindIdentity, id); err == nil {
				out = append(out, event(actionUpdate, false, fieldIdentity, identityModel(tx, i)))
			}
		case store.KindServicePolicy:
			// A policy changed as a whole: removed and made again with
			// what it selects now.
			id := recordID(c)
			out = append(out, event(actionDelete, false, fieldServicePolicy, protoBuf(nil).str(1, id)))
			if p, err := store.GetAs[*store.ServicePolicy](tx, store.KindServicePolicy, id); err == nil && !gone {
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
func entityEvent(tx *store.Tx, c store.Change, field protowire.Number, model func(store.Record) []byte) []byte {
	id := recordID(c)
	r, err := tx.Get(c.Kind, id)
	if c.New == nil || err != nil {
		return event(actionDelete, false, field, protoBuf(nil).str(1, id))
	}
	action := actionUpdate
	if c.Old == nil {
		action = actionCreate
	}
	return event(action, false, field, model(r))
}

// entitySelectionEvents are the events of an identity, service or posture
// check change: the record itself, and the policies it moved in or out of.
// A new entity comes before the policies take it; a removed one leaves the
// policies first (a policy must never name a posture check the router
// lacks).
func entitySelectionEvents(tx *store.Tx, c store.Change, action int, gone bool) [][]byte {
	var rel string
	var related int
	var field protowire.Number
	var model func(store.Record) []byte
	switch c.Kind {
	case store.KindIdentity:
		rel, related, field = store.RelServicePolicyIdentity, relatedIdentity, fieldIdentity
		model = func(r store.Record) []byte { return identityModel(tx, r.(*store.Identity)) }
	case store.KindService:
		rel, related, field = store.RelServicePolicyService, relatedService, fieldService
		model = func(r store.Record) []byte { return serviceModel(r.(*store.Service)) }
	default:
		rel, related, field = store.RelServicePolicyPostureCheck, relatedPostureCheck, fieldPostureCheck
		model = func(r store.Record) []byte { return postureCheckModel(r.(*store.PostureCheck)) }
	}
	id := recordID(c)
	var oldAttrs, newAttrs []string
	if c.Old != nil {
		oldAttrs = c.Old.(interface{ Roles() []string }).Roles()
	}
	now, err := tx.Get(c.Kind, id)
	exists := err == nil && !gone
	if exists {
		newAttrs = now.(interface{ Roles() []string }).Roles()
	}
	added, removed := tx.SelectionChange(rel, id, oldAttrs, newAttrs, c.Old != nil, exists)
	var out [][]byte
	for _, p := range removed {
		out = append(out, policyChange(p, related, []string{id}, false))
	}
	if !exists {
		return append(out, event(actionDelete, false, field, protoBuf(nil).str(1, id)))
	}
	out = append(out, event(action, false, field, model(now)))
	for _, p := range added {
		out = append(out, policyChange(p, related, []string{id}, true))
	}
	return out
}
