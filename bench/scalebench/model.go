package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/store"
)

// model is what buildModel made: the ids the measurements draw from.
type model struct {
	attrs      []string // attr-00 ...
	identities []string
	services   []string
	routers    []string
	checks     []postureCheck // of the client identity's posture policy

	clientID       string   // the identity of the Client API figures
	clientServices []string // the services it sees (about 50)
	clientPass     string

	steps []step // how long each part of the fill took
	mem   memory
}

// step is one part of the fill, for the report.
type step struct {
	what  string
	n     int
	took  time.Duration
	extra string
}

func (s step) rate() float64 { return float64(s.n) / s.took.Seconds() }

// postureCheck is one posture check of the client identity, with the
// response that satisfies it.
type postureCheck struct {
	id       string
	response map[string]any
}

const (
	clientAttr    = "scale-client"
	postureAttr   = "scale-posture"
	clientWantSvc = 50
	processHash   = "6f1ed002ab5595859014ebf0951522d9e0e8f3c54c6a6e6b9b6f6c6f4c5a6e7b"
)

// pick returns k distinct elements of l.
func pick(rng *rand.Rand, l []string, k int) []string {
	k = min(k, len(l))
	out := make([]string, 0, k)
	for _, i := range rng.Perm(len(l))[:k] {
		out = append(out, l[i])
	}
	return out
}

// attrRoles are 1..maxN distinct #attr roles.
func (m *model) attrRoles(rng *rand.Rand, maxN int) []string {
	var out []string
	for _, a := range pick(rng, m.attrs, 1+rng.IntN(maxN)) {
		out = append(out, "#"+a)
	}
	return out
}

func idRoles(rng *rand.Rand, ids []string, maxN int) []string {
	var out []string
	for _, id := range pick(rng, ids, 1+rng.IntN(maxN)) {
		out = append(out, "@"+id)
	}
	return out
}

// policyBody is a policy named name with the role lists roles gives it under
// the keys a and b: of a random semantic, or AnyOf where roles names
// entities by @id (anyOf).
func policyBody(rng *rand.Rand, name, a, b string, roles func() (ra, rb []string, anyOf bool)) map[string]any {
	sem := semantic(rng)
	ra, rb, anyOf := roles()
	if anyOf {
		sem = "AnyOf"
	}
	return map[string]any{"name": name, a: ra, b: rb, "semantic": sem}
}

func semantic(rng *rand.Rand) string {
	if rng.IntN(2) == 0 {
		return "AllOf"
	}
	return "AnyOf"
}

// buildModel fills the node: services, edge routers and posture checks over
// HTTPS, identities in-process with many writers, then the policies over
// HTTPS, then the client identity of the Client API figures.
func (b *bench) buildModel(ctx context.Context) (*model, error) {
	c := b.cfg
	rng := rand.New(rand.NewPCG(c.seed, 42))
	m := &model{}
	for i := range c.attrs {
		m.attrs = append(m.attrs, fmt.Sprintf("attr-%02d", i))
	}
	entityRoles := func() []string { return pick(rng, m.attrs, 1+rng.IntN(3)) }
	fmt.Printf("building the model: %d identities, %d services, %d edge routers, %d/%d/%d service/edge router/service edge router policies\n",
		c.identities, c.services, c.routers, c.servicePolicies, c.erps, c.serps)

	bodies := make([]any, 0, c.services)
	for i := range c.services {
		bodies = append(bodies, map[string]any{"name": fmt.Sprintf("svc-%04d", i), "roleAttributes": entityRoles()})
	}
	var err error
	if m.services, err = b.fillHTTPS(ctx, m, "services", "/services", bodies); err != nil {
		return nil, err
	}
	bodies = nil
	for i := range c.routers {
		bodies = append(bodies, map[string]any{"name": fmt.Sprintf("er-%04d", i), "roleAttributes": entityRoles(), "isTunnelerEnabled": false})
	}
	if m.routers, err = b.fillHTTPS(ctx, m, "edge routers", "/edge-routers", bodies); err != nil {
		return nil, err
	}
	if err := b.createPostureChecks(ctx, m); err != nil {
		return nil, err
	}

	// Identities: the record the createIdentity handler builds for
	// {name, type: Device, isAdmin: false, roleAttributes}, proposed with
	// fsm.CmdIdentityCreate by many writers at once.
	idents := make([]*store.Identity, c.identities)
	for i := range idents {
		idents[i] = &store.Identity{Named: store.Named{Name: fmt.Sprintf("id-%06d", i)}, TypeID: "Device",
			AuthPolicyID: "default", DefaultHostingPrecedence: "default", RoleAttributes: entityRoles()}
		idents[i].ID = auth.NewID()
		m.identities = append(m.identities, idents[i].ID)
	}

	// Policies. A few select #all; some name entities by @id.
	var spBodies, erpBodies, serpBodies []any
	all := []string{"#all"}
	for i := range c.servicePolicies {
		p := policyBody(rng, fmt.Sprintf("sp-%04d", i), "identityRoles", "serviceRoles", func() ([]string, []string, bool) {
			switch {
			case i%125 == 10:
				// Every identity: one attribute of services (a tenth of them), so that the
				// client identity still sees about 50 services.
				return all, m.attrRoles(rng, 1), false
			case i%10 == 7:
				return idRoles(rng, m.identities, 3), m.attrRoles(rng, 2), true
			case i%10 == 3:
				return m.attrRoles(rng, 2), idRoles(rng, m.services, 3), true
			}
			return m.attrRoles(rng, 2), m.attrRoles(rng, 2), false
		})
		p["type"], p["postureCheckRoles"] = "Dial", []string{}
		if i%4 == 3 {
			p["type"] = "Bind"
		}
		spBodies = append(spBodies, p)
	}
	for i := range c.erps {
		erpBodies = append(erpBodies, policyBody(rng, fmt.Sprintf("erp-%04d", i), "identityRoles", "edgeRouterRoles", func() ([]string, []string, bool) {
			switch {
			case i%125 == 10:
				return all, m.attrRoles(rng, 1), false
			case i%125 == 60:
				return m.attrRoles(rng, 2), all, false
			case i%10 == 7:
				return idRoles(rng, m.identities, 3), m.attrRoles(rng, 2), true
			}
			return m.attrRoles(rng, 2), m.attrRoles(rng, 2), false
		}))
	}
	for i := range c.serps {
		serpBodies = append(serpBodies, policyBody(rng, fmt.Sprintf("serp-%04d", i), "serviceRoles", "edgeRouterRoles", func() ([]string, []string, bool) {
			switch {
			case i%50 == 25:
				return all, m.attrRoles(rng, 2), false
			case i%10 == 3:
				return m.attrRoles(rng, 2), idRoles(rng, m.routers, 3), true
			}
			return m.attrRoles(rng, 2), m.attrRoles(rng, 2), false
		}))
	}

	// The policies go in before most identities, as they did when a policy
	// written over 100,000 identities wrote ~10,000 link rows (see
	// docs/performance-history.md, Issue 4); the identities the policies name by @id must
	// exist first.
	named := map[string]bool{}
	for _, l := range [][]any{spBodies, erpBodies} {
		for _, p := range l {
			for _, r := range p.(map[string]any)["identityRoles"].([]string) {
				if r[0] == '@' {
					named[r[1:]] = true
				}
			}
		}
	}
	var first, rest []*store.Identity
	for _, id := range idents {
		if named[id.ID] {
			first = append(first, id)
		} else {
			rest = append(rest, id)
		}
	}
	if err := b.fillIdentities(ctx, m, "identities named by @id in policies", first); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		what, path string
		bodies     []any
	}{
		{"service policies", "/service-policies", spBodies},
		{"edge router policies", "/edge-router-policies", erpBodies},
		{"service edge router policies", "/service-edge-router-policies", serpBodies},
	} {
		if _, err := b.fillHTTPS(ctx, m, f.what, f.path, f.bodies); err != nil {
			return nil, err
		}
	}
	if err := b.fillIdentities(ctx, m, "identities", rest); err != nil {
		return nil, err
	}
	if err := b.makeClientIdentity(ctx, m, rng); err != nil {
		return nil, err
	}
	m.mem = b.measureMemory()
	tx := b.nodes[0].Store.Read()
	fmt.Printf("  %d policy→entity pairs; live heap after a full GC %.1f GiB, process RSS %.1f GiB\n", m.mem.links, gib(m.mem.heapLive), gib(m.mem.rss))
	fmt.Printf("model ready: %d identities, %d services, %d edge routers, %d service policies, %d edge router policies, %d service edge router policies, %d posture checks\n",
		tx.Count(store.KindIdentity), tx.Count(store.KindService), tx.Count(store.KindEdgeRouter), tx.Count(store.KindServicePolicy),
		tx.Count(store.KindEdgeRouterPolicy), tx.Count(store.KindServiceEdgeRouterPolicy), tx.Count(store.KindPostureCheck))
	return m, nil
}

// fillHTTPS creates the records of bodies with b.cfg.clients concurrent
// HTTPS clients and returns their ids in the order of bodies.
func (b *bench) fillHTTPS(ctx context.Context, m *model, what, path string, bodies []any) ([]string, error) {
	ids := make([]string, len(bodies))
	var next atomic.Int64
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for range min(b.cfg.clients, len(bodies)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				id, err := b.createdID(ctx, path, bodies[i])
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("create %s: %w", what, firstErr)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s := step{what: what + " (HTTPS, " + fmt.Sprint(b.cfg.clients) + " clients)", n: len(bodies), took: time.Since(start)}
	m.steps = append(m.steps, s)
	fmt.Printf("  %d %s in %s (%.0f/s)\n", len(bodies), what, s.took.Round(time.Millisecond), s.rate())
	return ids, nil
}

func cmpErr(have, err error) error {
	if have != nil {
		return have
	}
	return err
}

// fillIdentities proposes the identities with b.cfg.fillWorkers writers.
func (b *bench) fillIdentities(ctx context.Context, m *model, what string, idents []*store.Identity) error {
	w := b.nodes[0].Writer
	var next, done atomic.Int64
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	stop := b.profile("fill " + what)
	defer stop()
	var wg sync.WaitGroup
	for range b.cfg.fillWorkers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(idents) {
					return
				}
				now := time.Now().UTC()
				idents[i].CreatedAt, idents[i].UpdatedAt = now, now
				if _, err := w.Do(ctx, fsm.CmdIdentityCreate, fsm.IdentityCreate{Identity: idents[i]}); err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, fmt.Errorf("identity %d: %w", i, err))
					mu.Unlock()
					return
				}
				if n := done.Add(1); n%20000 == 0 {
					fmt.Printf("    %d identities (%.0f/s)\n", n, float64(n)/time.Since(start).Seconds())
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("create identities: %w", firstErr)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s := step{what: fmt.Sprintf("%s (in-process fsm.Writer.Do, %d writers)", what, b.cfg.fillWorkers), n: len(idents), took: time.Since(start)}
	m.steps = append(m.steps, s)
	fmt.Printf("  %d %s in %s (%.0f/s)\n", len(idents), what, s.took.Round(time.Millisecond), s.rate())
	return nil
}
