package api

// Speed-tuned: the Client API service list, written by hand, with the parts
// that do not depend on the caller cached per record version (fragCache).
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'ClientServices_List50' ./api/
//	correctness: TestClientServicesAnswerSameBytesAsBefore, TestClientServicesFollowRecordChanges,
//	             TestFragCacheBounded (./api/)
//
// A change must keep: the bytes of the answer before the hand encoder;
// fragments keyed by the record's pointer (a stored record is immutable,
// so a key never names a changed record) and nothing per caller in them.

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"edgectl/policy"
	"edgectl/store"
)

// The JSON of the Client API service view (Service in the spec), written by
// hand for one caller. What does not depend on the caller is encoded once per
// record version by encoding/json and kept: a stored record is an immutable
// value (a change stores a new one), so a fragment keyed by the record's
// pointer can never be stale. The per-caller parts (configs after overrides
// and the session's configTypes, permissions, posture verdicts at the
// request's time) are appended for every request. Field order is the view's:
// _links, id, createdAt, updatedAt, tags, name, config, configs,
// encryptionRequired, terminatorStrategy, roleAttributes, maxIdleTimeMillis,
// permissions, postureQueries.

// fragCache holds fragments by record pointer. The map keeps each key
// record alive, so an address is never reused while cached. Old versions
// are not evicted one by one; the whole map is dropped when it grows past
// maxFrags (one rebuild per record afterwards).
type fragCache struct {
	m sync.Map
	n atomic.Int64
}

const maxFrags = 16384

func (c *fragCache) get(key any, build func() (any, error)) (any, error) {
	if v, ok := c.m.Load(key); ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	if c.n.Add(1) > maxFrags {
		c.m.Clear()
		c.n.Store(1)
	}
	c.m.Store(key, v)
	return v, nil
}

// frags is shared by every Server of the process: keys are record pointers
// of one store or another, which cannot collide.
var frags fragCache

// serviceFrag is the caller-independent JSON of a service: head runs from
// the opening brace to `"config":`, mid from `,"encryptionRequired"` to
// `"permissions":`.
type serviceFrag struct{ head, mid []byte }

func serviceFragOf(svc *store.Service) (*serviceFrag, error) {
	v, err := frags.get(svc, func() (any, error) {
		head, err := appendRecordHead(nil, "services", &svc.Base)
		if err != nil {
			return nil, err
		}
		head = append(head, `,"name":`...)
		head = appendJSONString(head, svc.Name)
		mid, err := json.Marshal(struct {
			EncryptionRequired bool     `json:"encryptionRequired"`
			TerminatorStrategy string   `json:"terminatorStrategy"`
			RoleAttributes     []string `json:"roleAttributes"`
			MaxIdleTimeMillis  int64    `json:"maxIdleTimeMillis"`
		}{svc.EncryptionRequired, svc.TerminatorStrategy, nonNilStrings(svc.RoleAttributes), svc.MaxIdleTimeMillis})
		if err != nil {
			return nil, err
		}
		return &serviceFrag{
			head: append(head, `,"config":`...),
			mid:  append(append([]byte{','}, mid[1:len(mid)-1]...), `,"permissions":`...),
		}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*serviceFrag), nil
}

// checkFrag is the caller-independent JSON of a posture query: head runs
// from the opening brace to `"isPassing":`, tail is the process fields
// (empty when the check has none) without the closing brace.
type checkFrag struct{ head, tail []byte }

func checkFragOf(pc *store.PostureCheck) (*checkFrag, error) {
	v, err := frags.get(pc, func() (any, error) {
		head, err := appendRecordHead(nil, "posture-checks", &pc.Base)
		if err != nil {
			return nil, err
		}
		head = append(head, `,"queryType":`...)
		head = appendJSONString(head, pc.TypeID)
		type proc struct {
			OSType string `json:"osType"`
			Path   string `json:"path"`
		}
		procs := struct {
			Process   *proc  `json:"process,omitempty"`
			Processes []proc `json:"processes,omitempty"`
		}{}
		if pc.Process != nil {
			procs.Process = &proc{OSType: pc.Process.OSType, Path: pc.Process.Path}
		}
		for _, p := range pc.Processes {
			procs.Processes = append(procs.Processes, proc{OSType: p.OSType, Path: p.Path})
		}
		tail, err := json.Marshal(procs)
		if err != nil {
			return nil, err
		}
		f := &checkFrag{head: append(head, `,"isPassing":`...)}
		if len(tail) > 2 {
			f.tail = append([]byte{','}, tail[1:len(tail)-1]...)
		}
		return f, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*checkFrag), nil
}

// checkOfKey keys the evaluator's form of a posture check in frags (the
// record itself keys its JSON fragments).
type checkOfKey struct{ pc *store.PostureCheck }

// judgedCheck is store.CheckOf(pc), converted once per record version: the
// evaluator only reads it.
func judgedCheck(pc *store.PostureCheck) *policy.Check {
	v, _ := frags.get(checkOfKey{pc}, func() (any, error) { return store.CheckOf(pc), nil })
	return v.(*policy.Check)
}

// configDataOf is a config's data as encoding/json writes a json.RawMessage
// (compacted, HTML-escaped), "{}" without data.
func configDataOf(cfg *store.Config) ([]byte, error) {
	v, err := frags.get(cfg, func() (any, error) { return json.Marshal(rawOrEmpty(cfg.Data)) })
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// typedConfig is one config of a service as the caller sees it.
type typedConfig struct {
	typeID string
	cfg    *store.Config
}

// appendClientService appends the view of svc, granted by grants, for the
// caller of v.
func (v *clientViews) appendClientService(dst []byte, svc *store.Service, grants []policy.Grant) ([]byte, error) {
	fr, err := serviceFragOf(svc)
	if err != nil {
		return dst, err
	}
	dst = append(dst, fr.head...)
	if dst, err = v.appendConfigs(dst, svc); err != nil {
		return dst, err
	}
	dst = append(dst, fr.mid...)
	dial, bind := false, false
	for _, g := range grants {
		dial, bind = dial || g.Type == policy.Dial, bind || g.Type == policy.Bind
	}
	dst = append(dst, '[')
	if dial {
		dst = appendJSONString(dst, policy.Dial)
	}
	if bind {
		if dial {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, policy.Bind)
	}
	dst = append(dst, `],"postureQueries":[`...)
	for i, g := range grants {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = v.appendPolicyQueries(dst, g); err != nil {
			return dst, err
		}
	}
	return append(dst, "]}"...), nil
}

// appendConfigs appends the "config" object and the "configs" array: the
// service's configs, then the identity's overrides, one per config type;
// "config" holds those of the types the API session asked for, by type name.
func (v *clientViews) appendConfigs(dst []byte, svc *store.Service) ([]byte, error) {
	byType := v.byType[:0]
	set := func(cfg *store.Config) {
		for i := range byType {
			if byType[i].typeID == cfg.ConfigTypeID {
				byType[i].cfg = cfg
				return
			}
		}
		byType = append(byType, typedConfig{typeID: cfg.ConfigTypeID, cfg: cfg})
	}
	for _, id := range svc.Configs {
		if cfg, err := store.GetAs[*store.Config](v.tx, store.KindConfig, id); err == nil {
			set(cfg)
		}
	}
	for _, o := range v.overrides {
		if o.ServiceID == svc.ID {
			if cfg, err := store.GetAs[*store.Config](v.tx, store.KindConfig, o.ConfigID); err == nil {
				set(cfg)
			}
		}
	}
	v.byType = byType
	named := v.named[:0]
	ids := v.ids[:0]
	for _, tc := range byType {
		ids = append(ids, tc.cfg.ID)
		t, err := store.GetAs[*store.ConfigType](v.tx, store.KindConfigType, tc.typeID)
		if err == nil && wantsConfigType(v.sess, t) {
			named = append(named, namedConfig{name: t.Name, cfg: tc.cfg})
		}
	}
	v.named, v.ids = named, ids
	// encoding/json writes map keys in byte order.
	slices.SortFunc(named, func(a, b namedConfig) int { return strings.Compare(a.name, b.name) })
	slices.Sort(ids)
	dst = append(dst, '{')
	for i, n := range named {
		if i > 0 {
			dst = append(dst, ',')
		}
		data, err := configDataOf(n.cfg)
		if err != nil {
			return dst, err
		}
		dst = appendJSONString(dst, n.name)
		dst = append(dst, ':')
		dst = append(dst, data...)
	}
	dst = append(dst, `},"configs":`...)
	return appendJSONStrings(dst, ids), nil
}

type namedConfig struct {
	name string
	cfg  *store.Config
}

// appendPolicyQueries appends the PolicyPostureQueries of one grant. Within
// one request a policy's grant is the same for every service it grants (its
// type and checks come from the policy, the verdicts from the session at
// the request's time), so its JSON is written once and copied for the rest.
func (v *clientViews) appendPolicyQueries(dst []byte, g policy.Grant) ([]byte, error) {
	if frag, ok := v.policies[g.PolicyID]; ok {
		return append(dst, frag...), nil
	}
	start := len(dst)
	dst, err := v.writePolicyQueries(dst, g)
	if err != nil {
		return dst, err
	}
	if v.policies == nil {
		v.policies = map[string][]byte{}
	}
	v.policies[g.PolicyID] = slices.Clone(dst[start:])
	return dst, nil
}

// writePolicyQueries writes the PolicyPostureQueries of one grant: the
// policy passes when every check it names (that still exists) passes.
func (v *clientViews) writePolicyQueries(dst []byte, g policy.Grant) ([]byte, error) {
	dst = append(dst, `{"policyId":`...)
	dst = appendJSONString(dst, g.PolicyID)
	dst = append(dst, `,"policyType":`...)
	dst = appendJSONString(dst, g.Type)
	passing := true
	for _, id := range g.Checks {
		if pv := v.pe.check(id); pv.pc != nil {
			passing = passing && pv.r.Passing
		}
	}
	dst = append(dst, `,"isPassing":`...)
	dst = appendJSONBool(dst, passing)
	dst = append(dst, `,"postureQueries":[`...)
	first := true
	for _, id := range g.Checks {
		pv := v.pe.check(id)
		if pv.pc == nil {
			continue
		}
		fr, err := checkFragOf(pv.pc)
		if err != nil {
			return dst, err
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, fr.head...)
		dst = appendJSONBool(dst, pv.r.Passing)
		dst = append(dst, `,"timeout":`...)
		dst = appendJSONInt(dst, pv.r.Timeout)
		dst = append(dst, `,"timeoutRemaining":`...)
		dst = appendJSONInt(dst, pv.r.TimeoutRemaining)
		dst = append(dst, fr.tail...)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), nil
}
