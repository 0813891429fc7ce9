package fleet

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"edgectl/bench/benchkit"
)

// Links at scale (issue 45): dials whose terminator is on another router
// than the ingress, so that every circuit crosses a link of the mesh, and a
// router in the middle of circuits that leaves.

// Far is the terminator of a service of its own on one router: what the
// mesh dials and the leave phase reach.
type Far struct {
	ServiceID   string
	Router      int    // the number of the router holding the terminator
	DialSession string // the dialer's Dial session of the service
}

// NewFar makes service prefix+"far" (the fleet's policies give it to the
// hosts and the dialer), a terminator of it on router number at (bound by
// the first host), and the dialer's Dial session.
func (f *Fleet) NewFar(ctx context.Context, at int) (*Far, error) {
	id, err := f.API.Create("/services", map[string]any{"name": f.Prefix + "far", "encryptionRequired": true,
		"roleAttributes": []string{f.Prefix + "svc"}})
	if err != nil {
		return nil, err
	}
	h := *f.Model.Hosts[0]
	if h.BindSession, err = newSession(ctx, f.API, h.APISession, id, "Bind"); err != nil {
		return nil, err
	}
	err = benchkit.WaitFor("the far terminator", time.Minute, func() error {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// The routers may not hold the service yet: retried.
		return f.Routers[at].CreateTerminator(rctx, &h, f.Prefix+"far-t")
	})
	if err != nil {
		return nil, err
	}
	far := &Far{ServiceID: id, Router: at}
	far.DialSession, err = newSession(ctx, f.API, f.Model.Dialer.APISession, id, "Dial")
	return far, err
}

// dialFar asks for a circuit to the far service through router i; it
// returns the circuit's id.
func (f *Fleet) dialFar(ctx context.Context, far *Far, i int) (string, error) {
	d := *f.Model.Dialer
	d.DialSessions = []string{far.DialSession}
	return f.Routers[i].Dial(ctx, &d, 0)
}

// ingresses are the routers' numbers but those in skip.
func (f *Fleet) ingresses(skip ...int) []int {
	var out []int
	for i := range f.Routers {
		keep := true
		for _, s := range skip {
			keep = keep && i != s
		}
		if keep {
			out = append(out, i)
		}
	}
	return out
}

// MeshDials asks for count circuits to the far service, dial k through the
// k-th router other than the far one, concurrency at a time, until all are
// done or budget passes; each is ended by a fault once made. The phase
// counts the Routes the far router got beside: one per circuit shows that
// each crossed a link.
func (f *Fleet) MeshDials(far *Far, count, concurrency int, budget time.Duration) (Phase, int64) {
	ins := f.ingresses(far.Router)
	routes0 := f.Routers[far.Router].Routes.Load()
	p := f.dials("mesh dials", count, concurrency, budget, func(ctx context.Context, k int) (*Router, string, error) {
		i := ins[k%len(ins)]
		id, err := f.dialFar(ctx, far, i)
		return f.Routers[i], id, err
	})
	return p, f.Routers[far.Router].Routes.Load() - routes0
}

// Leave is what the leave phase found.
type Leave struct {
	// Circuits is how many were open through the leaving router; Moved
	// how many got new Routes at both ends after it left, the last of them
	// Elapsed after it left.
	Circuits, Moved int
	Elapsed         time.Duration
	// P50 and P99 are the times of each circuit's move.
	P50, P99 time.Duration
	Steal    float64
	// Note says what went otherwise (circuits not through the router, not
	// moved in time).
	Note string
}

// expensive is the static cost given to the far router's links but the
// one to the leaving router, so that the cheapest path to it crosses that
// router: more than a link's cost without a measured latency (the fleet's
// routers report none: 65 s each way, 130,000 in all, on either
// controller).
const expensive = 1_000_000

// LeaveRouter measures a router that leaves with circuits through it: the
// far router's links, but the one to router via, are made expensive (the
// Fabric API's link staticCost; the mesh must be full), count circuits
// are opened to the far service from the other routers (each crossing via)
// and kept, router via disconnects, and the phase times until both ends of
// each circuit got a new Route (the controller moved it to another path).
// The circuits are ended after, the links' costs put back and via
// started again.
func (f *Fleet) LeaveRouter(far *Far, via, count int, timeout time.Duration) (Leave, error) {
	var lv Leave
	for j := range f.Routers {
		if j == far.Router || j == via {
			continue
		}
		if err := f.linkCost(far.Router, j, expensive); err != nil {
			return lv, err
		}
	}
	defer func() {
		for j := range f.Routers {
			if j != far.Router && j != via {
				_ = f.linkCost(far.Router, j, 1)
			}
		}
	}()
	type open struct {
		id      string
		ingress int
	}
	var circuits []open
	ins := f.ingresses(far.Router, via)
	for k := range count {
		i := ins[k%len(ins)]
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		id, err := f.dialFar(ctx, far, i)
		cancel()
		if err != nil {
			return lv, fmt.Errorf("a circuit through %s: %w", f.Routers[i].Name, err)
		}
		circuits = append(circuits, open{id, i})
	}
	defer func() {
		for _, c := range circuits {
			_ = f.Routers[c.ingress].Fault(c.id)
		}
	}()
	var through []open
	for _, c := range circuits {
		if _, ok := f.Routers[via].Routed(c.id); ok {
			through = append(through, c)
		}
	}
	lv.Circuits = len(through)
	if len(through) < len(circuits) {
		lv.Note = fmt.Sprintf("%d of %d circuits did not cross %s (one's path: %v); ", len(circuits)-len(through), len(circuits),
			f.Routers[via].Name, f.circuitPath(circuits[0].id))
	}
	cpu := benchkit.ReadCPU()
	t0 := time.Now()
	// The router dies: its channels close, and each router linked to it
	// loses its end of their link (reporting a fault for the links it
	// dialed, as OpenZiti's routers do).
	f.StopRouter(via)
	var restores []func()
	for k := range f.Routers {
		if id, ok := f.LinkIDs[[2]int{min(k, via), max(k, via)}]; ok && k != via {
			restores = append(restores, f.Routers[k].linkLost(id))
		}
	}
	defer func() {
		for _, restore := range restores {
			restore()
		}
		f.Routers[via].forget() // back with the full data model
		f.StartRouter(via)
	}()
	var moves []time.Duration
	err := benchkit.WaitFor("every circuit through the router that left moved", timeout, func() error {
		moves = moves[:0]
		for _, c := range through {
			a, okA := f.Routers[c.ingress].Routed(c.id)
			b, okB := f.Routers[far.Router].Routed(c.id)
			if !okA || !okB || !a.After(t0) || !b.After(t0) {
				continue
			}
			moves = append(moves, max(a.Sub(t0), b.Sub(t0)))
		}
		if len(moves) < len(through) {
			return fmt.Errorf("%d of %d moved", len(moves), len(through))
		}
		return nil
	})
	lv.Steal = benchkit.StolenPct(cpu, benchkit.ReadCPU())
	lv.Moved = len(moves)
	if len(moves) > 0 {
		for _, m := range moves {
			lv.Elapsed = max(lv.Elapsed, m)
		}
		lv.P50, lv.P99 = benchkit.P50P99(moves)
	}
	if err != nil {
		lv.Note += err.Error()
	}
	return lv, nil
}

// linkCost sets the static cost of the link between routers i and j
// through the Fabric API.
func (f *Fleet) linkCost(i, j, cost int) error {
	id, ok := f.LinkIDs[[2]int{min(i, j), max(i, j)}]
	if !ok {
		return fmt.Errorf("no link between %s and %s (the leave phase needs a full mesh)", f.Routers[i].Name, f.Routers[j].Name)
	}
	_, err := f.API.Do(http.MethodPatch, benchkit.FabricAPI+"/links/"+id, map[string]any{"staticCost": cost})
	return err
}

// circuitPath is circuit id's path as the Fabric API shows it (for a
// report).
func (f *Fleet) circuitPath(id string) any {
	out, err := f.API.Do(http.MethodGet, benchkit.FabricAPI+"/circuits/"+id, nil)
	if err != nil {
		return err
	}
	return benchkit.JGet(out, "data", "path")
}
