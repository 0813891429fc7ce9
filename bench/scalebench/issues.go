package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"time"

	"edgectl/policy"
	"edgectl/store"
)

// issue4 measures management at scale, sequential requests: one more
// identity, one more service policy, and the services of an identity.
func (b *bench) issue4(ctx context.Context, r *report) error {
	m, n := r.model, b.cfg.requests
	rng := rand.New(rand.NewPCG(b.cfg.seed, 4))
	fmt.Printf("\nIssue 4: management at scale (sequential requests, %d each after 20 warm-up)\n", n)

	seq := 0
	r.identityCreate = b.sequential(ctx, "POST /identities", 20, n, func(ctx context.Context, _, _ int) (int, []byte, error) {
		seq++
		raw, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("scale-extra-%05d", seq), "type": "Device", "isAdmin": false,
			"roleAttributes": pick(rng, m.attrs, 1+rng.IntN(3))})
		return b.send(ctx, b.base, http.MethodPost, mgmt+"/identities", b.admin, raw)
	})

	// Filtered identity lists, the default page of 10 with its total count:
	// two by name, both matching 10 identities, one with a byte few names
	// have (x: scale-extra-00010 to -00019, just created) and one whose
	// bytes every model name has (id-000120 to id-000129), which reads the
	// whole name column; and one by a role attribute (a tenth of the model).
	// The last two follow a rename of an identity each (not timed): a list
	// reads a generation of the table that no list has read before, as
	// while devices enroll.
	renames := 0
	rename := func(ctx context.Context) {
		renames++
		raw, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("scale-renamed-%06d", renames)})
		_, _, _ = b.send(ctx, b.base, http.MethodPatch, mgmt+"/identities/"+m.identities[len(m.identities)-1-renames%len(m.identities)], b.admin, raw)
	}
	r.filtered = []*filteredList{
		b.filteredList(ctx, `name contains "scale-extra-0001"`, n, nil),
		b.filteredList(ctx, `name contains "id-00012"`, n, nil),
		b.filteredList(ctx, fmt.Sprintf(`anyOf(roleAttributes) = %q`, m.attrs[7]), n, nil),
		b.filteredList(ctx, `name contains "id-00012"`, n, rename),
		b.filteredList(ctx, "", n, rename),
	}

	// The services of an identity, for random identities of the model.
	r.identityServices = b.sequential(ctx, "GET /identities/{id}/services", 20, n, func(ctx context.Context, _, _ int) (int, []byte, error) {
		id := m.identities[rng.IntN(len(m.identities))]
		return b.send(ctx, b.base, http.MethodGet, mgmt+"/identities/"+id+"/services", b.admin, nil)
	})
	tx := b.nodes[0].Store.Read()
	var reach []int
	for range 200 {
		reach = append(reach, policy.IdentityServices(tx, m.identities[rng.IntN(len(m.identities))]).Len())
	}
	r.identityReach = summarize(reach)

	// Service policies like most of the model's: 1-2 attributes per role
	// array, AllOf or AnyOf. Their ids (warm-up ones too) are kept to count
	// what they select. They stay: they do not select the Client API identity.
	var created, all []string
	keep := func(ids *[]string) func(st int, data []byte, err error) (int, []byte, error) {
		return func(st int, data []byte, err error) (int, []byte, error) {
			if id := idOf(data); err == nil && st == http.StatusCreated && id != "" {
				*ids = append(*ids, id)
			}
			return st, data, err
		}
	}
	seq = 0
	r.policyCreate = b.sequential(ctx, "POST /service-policies (attribute roles)", 10, b.cfg.policyRequests, func(ctx context.Context, _, _ int) (int, []byte, error) {
		seq++
		typ := "Dial"
		if rng.IntN(4) == 0 {
			typ = "Bind"
		}
		raw, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("scale-sp-%05d", seq), "type": typ, "semantic": semantic(rng),
			"identityRoles": m.attrRoles(rng, 2), "serviceRoles": m.attrRoles(rng, 2), "postureCheckRoles": []string{}})
		return keep(&created)(b.do(ctx, b.base, http.MethodPost, mgmt+"/service-policies", b.admin, raw))
	})
	tx = b.nodes[0].Store.Read()
	var links []int
	for _, id := range created {
		k := 0
		tx.PolicyEntities(store.RelServicePolicyIdentity, id, func(string) bool { k++; return true })
		links = append(links, k)
	}
	r.policyLinks = summarize(links)

	// A policy for every identity: it links every identity. These are
	// removed again (and the removal timed), so that the Client API
	// identity keeps its ~50 services; the attribute policies above stay.
	seq = 0
	r.policyAllCreate = b.sequential(ctx, "POST /service-policies (identityRoles #all)", 1, 3, func(ctx context.Context, _, _ int) (int, []byte, error) {
		seq++
		raw, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("scale-sp-all-%03d", seq), "type": "Dial", "semantic": "AllOf",
			"identityRoles": []string{"#all"}, "serviceRoles": m.attrRoles(rng, 1), "postureCheckRoles": []string{}})
		return keep(&all)(b.do(ctx, b.base, http.MethodPost, mgmt+"/service-policies", b.admin, raw))
	})
	del := 0
	r.policyAllDelete = b.sequential(ctx, "DELETE /service-policies/{id} (identityRoles #all)", 0, len(all), func(ctx context.Context, _, _ int) (int, []byte, error) {
		del++
		return b.send(ctx, b.base, http.MethodDelete, mgmt+"/service-policies/"+all[del-1], b.admin, nil)
	})
	if r.policyAllDelete.errs > 0 {
		return fmt.Errorf("could not remove the #all service policies: %s", r.policyAllDelete.errText())
	}
	return nil
}

// issue5 measures the Client API of one identity that sees about 50
// services, with b.cfg.clients concurrent clients, each its own API session.
func (b *bench) issue5(ctx context.Context, r *report) error {
	m := r.model
	fmt.Printf("\nIssue 5: access decisions (%d concurrent clients, each its own API session of the identity, %s each after %s warm-up)\n",
		b.cfg.clients, b.cfg.duration, b.cfg.warmup)
	start := time.Now()
	for range b.cfg.clients {
		tok, err := b.login(ctx, b.base, client, "scale-client", m.clientPass)
		if err != nil {
			return err
		}
		r.tokens = append(r.tokens, tok)
	}
	fmt.Printf("  %d client logins (POST /edge/client/v1/authenticate?method=password) in %s\n", b.cfg.clients, time.Since(start).Round(time.Millisecond))

	list := client + "/services?limit=100"
	data, err := b.call(ctx, http.MethodGet, list, r.tokens[0], nil, http.StatusOK)
	if err != nil {
		return err
	}
	var out struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return err
	}
	r.clientListed, r.clientListBytes = len(out.Data), len(data)
	fmt.Printf("  the client lists %d services (%d bytes of JSON)\n", len(out.Data), len(data))
	r.clientServices = b.concurrent(ctx, "GET /edge/client/v1/services?limit=100", b.cfg.clients, func(ctx context.Context, w, _ int) (int, []byte, error) {
		return b.send(ctx, b.base, http.MethodGet, list, r.tokens[w], nil)
	})
	r.clientServicesPage = b.concurrent(ctx, "GET /edge/client/v1/services (default page of 10)", b.cfg.clients, func(ctx context.Context, w, _ int) (int, []byte, error) {
		return b.send(ctx, b.base, http.MethodGet, client+"/services", r.tokens[w], nil)
	})

	// Sessions on the services a Dial grant without posture checks gives.
	tx := b.nodes[0].Store.Read()
	var dial []string
	for _, id := range m.clientServices {
		for _, g := range policy.PairGrants(tx, m.clientID, id) {
			if g.Type == policy.Dial && len(g.Checks) == 0 {
				dial = append(dial, id)
				break
			}
		}
	}
	if len(dial) == 0 {
		return fmt.Errorf("the client identity has no Dial grant without posture checks")
	}
	r.dialServices = len(dial)
	bodies := make([][]byte, len(dial))
	for i, id := range dial {
		bodies[i], _ = json.Marshal(map[string]any{"serviceId": id, "type": "Dial"})
	}
	if _, err := b.call(ctx, http.MethodPost, client+"/sessions", r.tokens[0], json.RawMessage(bodies[0]), http.StatusCreated); err != nil {
		return err
	}
	r.sessionCreate = b.concurrent(ctx, "POST /edge/client/v1/sessions", b.cfg.clients, func(ctx context.Context, w, i int) (int, []byte, error) {
		return b.send(ctx, b.base, http.MethodPost, client+"/sessions", r.tokens[w], bodies[i%len(bodies)])
	})
	return nil
}

// postureBulk is the bulk body of the five passing responses.
func postureBulk(m *model) []byte {
	var rs []map[string]any
	for _, c := range m.checks {
		rs = append(rs, c.response)
	}
	raw, _ := json.Marshal(rs)
	return raw
}

// issue7 measures posture responses, bulk of five, on one node. The
// clients log in afresh (the API sessions of issue 5 hold the thousands of
// sessions its rate phase made), report their posture once and dial the ten
// services the posture policy guards: each bulk re-evaluates ten sessions.
func (b *bench) issue7(ctx context.Context, r *report) error {
	m := r.model
	fmt.Printf("\nIssue 7: posture responses, bulk of %d (%d concurrent clients, one node)\n", len(m.checks), b.cfg.clients)
	body := postureBulk(m)
	guarded := m.clientServices[:min(10, len(m.clientServices))]
	for range b.cfg.clients {
		tok, err := b.login(ctx, b.base, client, "scale-client", m.clientPass)
		if err != nil {
			return err
		}
		data, err := b.call(ctx, http.MethodPost, client+"/posture-response-bulk", tok, json.RawMessage(body), http.StatusOK)
		if err != nil {
			return err
		}
		var out struct {
			Data struct {
				Services []json.RawMessage `json:"services"`
			} `json:"data"`
		}
		if err := json.Unmarshal(data, &out); err != nil {
			return err
		}
		r.postureAffected = len(out.Data.Services)
		for _, id := range guarded {
			if _, err := b.call(ctx, http.MethodPost, client+"/sessions", tok, map[string]any{"serviceId": id, "type": "Dial"}, http.StatusCreated); err != nil {
				return err
			}
		}
		r.postureTokens = append(r.postureTokens, tok)
	}
	r.postureSessions = len(guarded)
	fmt.Printf("  %d fresh API sessions, each with posture data and %d sessions; a bulk answer names %d affected services\n",
		len(r.postureTokens), len(guarded), r.postureAffected)
	r.posture1 = b.concurrent(ctx, "POST /edge/client/v1/posture-response-bulk (1 node)", b.cfg.clients, func(ctx context.Context, w, _ int) (int, []byte, error) {
		return b.send(ctx, b.base, http.MethodPost, client+"/posture-response-bulk", r.postureTokens[w], body)
	})
	return nil
}

// intStats are the mean, median and largest of some counts.
type intStats struct{ n, mean, p50, max int }

func summarize(l []int) intStats {
	if len(l) == 0 {
		return intStats{}
	}
	s := append([]int(nil), l...)
	sort.Ints(s)
	sum := 0
	for _, v := range s {
		sum += v
	}
	return intStats{n: len(s), mean: sum / len(s), p50: s[(len(s)-1)/2], max: s[len(s)-1]}
}

// filteredList is the latency of a filtered identity list and what its
// answer holds.
type filteredList struct {
	filter      string
	afterWrite  bool
	st          *stats
	page, total int // records on the page, meta.pagination.totalCount
}

// filteredList times n sequential requests of the identity list with filter,
// then reads one answer's page size and total count. With before, each
// request follows a write (not timed), so that it reads a generation of
// the identity table no list has read yet.
func (b *bench) filteredList(ctx context.Context, filter string, n int, before func(ctx context.Context)) *filteredList {
	path := mgmt + "/identities?" + url.Values{"filter": {filter}}.Encode()
	f := &filteredList{filter: filter}
	name := "GET /identities?filter=" + filter
	if before != nil {
		name += " (after a write)"
		f.afterWrite = true
	}
	f.st = b.sequentialAfter(ctx, name, 20, n, before, func(ctx context.Context, _, _ int) (int, []byte, error) {
		return b.send(ctx, b.base, http.MethodGet, path, b.admin, nil)
	})
	data, err := b.call(ctx, http.MethodGet, path, b.admin, nil, http.StatusOK)
	if err != nil {
		return f
	}
	var out struct {
		Data []json.RawMessage `json:"data"`
		Meta struct {
			Pagination struct {
				TotalCount int `json:"totalCount"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	if json.Unmarshal(data, &out) == nil {
		f.page, f.total = len(out.Data), out.Meta.Pagination.TotalCount
	}
	return f
}
