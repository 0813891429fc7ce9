package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"time"

	"edgectl/auth"
	"edgectl/policy"
	"edgectl/store"
)

// The oracle: the Client API service views as they were encoded before the
// hand-written encoder (typed views marshalled by encoding/json into the
// map-based envelope of call.okMeta and the page loop of call.page), kept
// verbatim so that tests can compare the served bytes with what the old
// code answered for the same model, session and request.

type oldClientService struct {
	Links              selfLink                   `json:"_links"`
	ID                 string                     `json:"id"`
	CreatedAt          string                     `json:"createdAt"`
	UpdatedAt          string                     `json:"updatedAt"`
	Tags               map[string]any             `json:"tags"`
	Name               string                     `json:"name"`
	Config             map[string]json.RawMessage `json:"config"`
	Configs            []string                   `json:"configs"`
	EncryptionRequired bool                       `json:"encryptionRequired"`
	TerminatorStrategy string                     `json:"terminatorStrategy"`
	RoleAttributes     []string                   `json:"roleAttributes"`
	MaxIdleTimeMillis  int64                      `json:"maxIdleTimeMillis"`
	Permissions        []string                   `json:"permissions"`
	PostureQueries     []oldPolicyPostureQueries  `json:"postureQueries"`
}

type oldPolicyPostureQueries struct {
	PolicyID       string            `json:"policyId"`
	PolicyType     string            `json:"policyType"`
	IsPassing      bool              `json:"isPassing"`
	PostureQueries []oldPostureQuery `json:"postureQueries"`
}

type oldPostureQuery struct {
	Links            selfLink          `json:"_links"`
	ID               string            `json:"id"`
	CreatedAt        string            `json:"createdAt"`
	UpdatedAt        string            `json:"updatedAt"`
	Tags             map[string]any    `json:"tags"`
	QueryType        string            `json:"queryType"`
	IsPassing        bool              `json:"isPassing"`
	Timeout          int64             `json:"timeout"`
	TimeoutRemaining int64             `json:"timeoutRemaining"`
	Process          *oldQueryProcess  `json:"process,omitempty"`
	Processes        []oldQueryProcess `json:"processes,omitempty"`
}

type oldQueryProcess struct {
	OSType string `json:"osType"`
	Path   string `json:"path"`
}

type oldVerdict struct {
	r  policy.Result
	pc *store.PostureCheck
}

type oldPostureEval struct {
	tx    *store.Tx
	data  *policy.Data
	now   time.Time
	cache map[string]oldVerdict
}

func (e *oldPostureEval) check(id string) oldVerdict {
	if v, ok := e.cache[id]; ok {
		return v
	}
	v := oldVerdict{r: policy.Result{Timeout: -1, TimeoutRemaining: -1}}
	if pc, err := store.GetAs[*store.PostureCheck](e.tx, store.KindPostureCheck, id); err == nil {
		v = oldVerdict{r: policy.Evaluate(store.CheckOf(pc), e.data, e.now), pc: pc}
	}
	e.cache[id] = v
	return v
}

func oldClientServiceView(tx *store.Tx, svc *store.Service, grants []policy.Grant, sess *store.APISession, pe *oldPostureEval) *oldClientService {
	byType := map[string]*store.Config{}
	for _, id := range svc.Configs {
		if cfg, err := store.GetAs[*store.Config](tx, store.KindConfig, id); err == nil {
			byType[cfg.ConfigTypeID] = cfg
		}
	}
	tx.Each(store.KindIdentityServiceConfig, "identity", func(r store.Record) bool {
		o := r.(*store.IdentityServiceConfig)
		if o.ServiceID == svc.ID {
			if cfg, err := store.GetAs[*store.Config](tx, store.KindConfig, o.ConfigID); err == nil {
				byType[cfg.ConfigTypeID] = cfg
			}
		}
		return true
	}, sess.IdentityID)
	v := &oldClientService{
		Links: linkTo("services", svc.ID), ID: svc.ID, CreatedAt: jsonTime(svc.CreatedAt), UpdatedAt: jsonTime(svc.UpdatedAt),
		Tags: tagsOrEmpty(svc.Tags), Name: svc.Name, Config: map[string]json.RawMessage{}, Configs: []string{},
		EncryptionRequired: svc.EncryptionRequired, TerminatorStrategy: svc.TerminatorStrategy,
		RoleAttributes: nonNilStrings(svc.RoleAttributes), MaxIdleTimeMillis: svc.MaxIdleTimeMillis,
		Permissions: []string{}, PostureQueries: []oldPolicyPostureQueries{},
	}
	for typeID, cfg := range byType {
		v.Configs = append(v.Configs, cfg.ID)
		t, err := store.GetAs[*store.ConfigType](tx, store.KindConfigType, typeID)
		if err == nil && wantsConfigType(sess, t) {
			v.Config[t.Name] = rawOrEmpty(cfg.Data)
		}
	}
	sort.Strings(v.Configs)
	dial, bind := false, false
	for _, g := range grants {
		dial, bind = dial || g.Type == policy.Dial, bind || g.Type == policy.Bind
		v.PostureQueries = append(v.PostureQueries, pe.policyQueries(g))
	}
	if dial {
		v.Permissions = append(v.Permissions, policy.Dial)
	}
	if bind {
		v.Permissions = append(v.Permissions, policy.Bind)
	}
	return v
}

func (e *oldPostureEval) policyQueries(g policy.Grant) oldPolicyPostureQueries {
	out := oldPolicyPostureQueries{PolicyID: g.PolicyID, PolicyType: g.Type, IsPassing: true, PostureQueries: []oldPostureQuery{}}
	for _, id := range g.Checks {
		v := e.check(id)
		pc := v.pc
		if pc == nil {
			continue
		}
		out.IsPassing = out.IsPassing && v.r.Passing
		q := oldPostureQuery{Links: linkTo("posture-checks", pc.ID), ID: pc.ID, CreatedAt: jsonTime(pc.CreatedAt), UpdatedAt: jsonTime(pc.UpdatedAt),
			Tags: tagsOrEmpty(pc.Tags), QueryType: pc.TypeID, IsPassing: v.r.Passing, Timeout: v.r.Timeout, TimeoutRemaining: v.r.TimeoutRemaining}
		if pc.Process != nil {
			q.Process = &oldQueryProcess{OSType: pc.Process.OSType, Path: pc.Process.Path}
		}
		for _, p := range pc.Processes {
			q.Processes = append(q.Processes, oldQueryProcess{OSType: p.OSType, Path: p.Path})
		}
		out.PostureQueries = append(out.PostureQueries, q)
	}
	return out
}

// oldPage is call.page as it was: filter, sort, page, then one okMeta.
func oldPage(c *call, lr *listReq, recs []store.Record, view func(store.Record) any) {
	data := []any{}
	count := 0
	want := func() bool { return lr.all || len(data) < lr.limit }
	if !lr.q.HasCondition() && !lr.q.HasSort() && lr.roles == nil {
		count = len(recs)
		for i := lr.offset; i < len(recs) && want(); i++ {
			data = append(data, view(recs[i]))
		}
	} else {
		var matches []store.Record
		for _, r := range recs {
			if lr.match(r) {
				matches = append(matches, r)
			}
		}
		if lr.q.HasSort() {
			sort.SliceStable(matches, func(i, j int) bool { return lr.q.Compare(matches[i], matches[j]) < 0 })
		}
		count = len(matches)
		for i := lr.offset; i < len(matches) && want(); i++ {
			data = append(data, view(matches[i]))
		}
	}
	limit := lr.limit
	if lr.all {
		limit = count
	}
	oldWrite(c, map[string]any{"data": data, "meta": meta(map[string]any{
		"pagination":       map[string]any{"limit": limit, "offset": lr.offset, "totalCount": count},
		"filterableFields": lr.fields.Names(),
	})})
}

func oldWrite(c *call, body any) {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(c.w).Encode(body)
}

// oldAnswer is what the old handlers answered to GET target (a Client API
// path under /services) for the session of token: the status and the body.
func oldAnswer(s *Server, token, target string) (int, []byte) {
	rec := httptest.NewRecorder()
	tx := s.Store.Read()
	sess := tx.APISessionByTokenHash(auth.HashToken(token))
	ident, _ := store.GetAs[*store.Identity](tx, store.KindIdentity, sess.IdentityID)
	c := &call{s: s, w: rec, r: httptest.NewRequest(http.MethodGet, target, nil), tx: tx, session: sess, identity: ident}
	pe := &oldPostureEval{tx: tx, data: tx.PostureInput(sess), now: s.now(), cache: map[string]oldVerdict{}}
	if id := target[len(ClientPrefix+"/services"):]; len(id) > 1 && id[0] == '/' {
		id = id[1:]
		grants := policy.PairGrants(tx, ident.ID, id)
		svc, err := store.GetAs[*store.Service](tx, store.KindService, id)
		if err != nil || len(grants) == 0 {
			return http.StatusNotFound, nil
		}
		oldWrite(c, map[string]any{"data": oldClientServiceView(tx, svc, grants, sess, pe), "meta": meta(nil)})
		return rec.Code, rec.Body.Bytes()
	}
	lr, err := c.parseList(store.KindService.Fields, true)
	if err != nil {
		return http.StatusBadRequest, nil
	}
	grants := policy.IdentityServices(tx, ident.ID)
	recs := make([]store.Record, 0, grants.Len())
	for i := range grants.Len() {
		if r, err := tx.Get(store.KindService, grants.ID(i)); err == nil {
			recs = append(recs, r)
		}
	}
	sortByName(recs)
	oldPage(c, lr, recs, func(r store.Record) any {
		return oldClientServiceView(tx, r.(*store.Service), grants.Get(r.GetID()), sess, pe)
	})
	return rec.Code, rec.Body.Bytes()
}
