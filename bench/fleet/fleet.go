// Package fleet simulates a fleet of OpenZiti edge routers and their SDK
// clients against a controller (edgectl or OpenZiti's own), speaking the
// real control protocol with edgectl's own codec (ctrlchan for the frames,
// dataplane/wire for the messages): routers enrolled through the
// Management API, connected with their certificates, holding the router
// data model, reporting links between them and answering routes; on behalf
// of their clients, terminators made with real API session and service
// session tokens, circuits asked for and their ends reported as faults.
//
// It is a library for the fleet tool (bench/fleet/cmd/fleet) and for the
// correctness test (integration/fleet_test.go); it never imports OpenZiti's
// modules, and it measures nothing by itself beyond what a phase returns.
package fleet

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"edgectl/bench/benchkit"
	"edgectl/dataplane/wire"
)

// Fleet is the simulated routers and their clients' model on one
// controller.
type Fleet struct {
	API     *benchkit.API
	Prefix  string
	Routers []*Router
	Model   *Model

	// LinkIDs are the links the routers report, by the routers' numbers
	// (lower first).
	LinkIDs map[[2]int]string

	mu      sync.Mutex
	cancels []context.CancelFunc // each router's Run, nil while stopped
	wg      sync.WaitGroup
}

// Config sizes a fleet.
type Config struct {
	// Prefix starts every name the fleet makes ("fleet-" when empty).
	Prefix string
	// Routers and Hosts are the numbers of edge routers and of hosting
	// identities; Services the number of services (host i binds service
	// i mod Services; 0 means 1).
	Routers, Hosts, Services int
	// Ctrl are the nodes' control channel listeners (HOST:PORT): every
	// router connects to each, router i prefers Ctrl[i%len(Ctrl)].
	Ctrl []string
}

// New enrolls the routers and makes the model through api. The routers
// are not connected yet (Start).
func New(ctx context.Context, api *benchkit.API, cfg Config) (*Fleet, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = "fleet-"
	}
	if cfg.Routers < 1 || cfg.Hosts < 1 || len(cfg.Ctrl) == 0 {
		return nil, fmt.Errorf("fleet: at least one router, one host and one controller address are needed")
	}
	f := &Fleet{API: api, Prefix: cfg.Prefix, Routers: make([]*Router, cfg.Routers)}
	err := parallel(cfg.Routers, 8, func(i int) error {
		r, err := EnrollRouter(api, fmt.Sprintf("%srouter-%03d", cfg.Prefix, i), []string{cfg.Prefix + "router"}, cfg.Ctrl, i)
		f.Routers[i] = r
		return err
	})
	if err != nil {
		return nil, err
	}
	if f.Model, err = Setup(ctx, api, cfg.Prefix, cfg.Hosts, max(cfg.Services, 1)); err != nil {
		return nil, err
	}
	return f, nil
}

// Start connects every router (each keeps its channel open until Stop).
func (f *Fleet) Start() {
	for i := range f.Routers {
		f.StartRouter(i)
	}
}

// StartRouter connects router i (until StopRouter or Stop); it does
// nothing if the router runs.
func (f *Fleet) StartRouter(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancels == nil {
		f.cancels = make([]context.CancelFunc, len(f.Routers))
	}
	if f.cancels[i] != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancels[i] = cancel
	f.wg.Add(1)
	go func() { defer f.wg.Done(); f.Routers[i].Run(ctx) }()
}

// StopRouter closes router i's channels, as a router that leaves: it
// returns once they are closed.
func (f *Fleet) StopRouter(i int) {
	f.mu.Lock()
	cancel := f.cancels[i]
	f.cancels[i] = nil
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	for _, c := range f.Routers[i].ctrls {
		if ch := c.open(); ch != nil {
			<-ch.Done()
		}
	}
}

// Stop closes every router's channel and waits for them.
func (f *Fleet) Stop() {
	f.mu.Lock()
	for i, cancel := range f.cancels {
		if cancel != nil {
			cancel()
			f.cancels[i] = nil
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// WaitConnected waits until every router has a channel open at least
// minConns times in all and its current one got the data model.
func (f *Fleet) WaitConnected(minConns int, timeout time.Duration) error {
	return f.waitConns(minConns, true, timeout)
}

// WaitReconnected waits until every router has a channel to every node and
// opened at least minConns channels in all. Unlike WaitConnected it does
// not wait for a full state or a change set: a router that comes back
// with the node's index already is sent neither (as OpenZiti's controller
// does); WaitService after a change shows that each router's model is
// current.
func (f *Fleet) WaitReconnected(minConns int, timeout time.Duration) error {
	return f.waitConns(minConns, false, timeout)
}

func (f *Fleet) waitConns(minConns int, synced bool, timeout time.Duration) error {
	return benchkit.WaitFor("every router connected and holding the data model", timeout, func() error {
		for _, r := range f.Routers {
			st := r.State()
			if !st.Connected || st.Conns < minConns || (synced && !st.Synced) {
				return fmt.Errorf("router %s: connected %v, channels %d (want %d), data model %v, last error %v",
					r.Name, st.Connected, st.Conns, minConns, st.Synced, st.LastErr)
			}
		}
		return nil
	})
}

// WaitService waits until every router's data model holds service name.
func (f *Fleet) WaitService(name string, timeout time.Duration) error {
	return benchkit.WaitFor("every router's data model holding service "+name, timeout, func() error {
		for _, r := range f.Routers {
			found := false
			for _, n := range r.State().Services {
				found = found || n == name
			}
			if !found {
				return fmt.Errorf("router %s does not hold %s", r.Name, name)
			}
		}
		return nil
	})
}

// Links makes each router report links, as the dialing side of each, and
// waits until the controller lists them all; it returns how many. Without
// full, each router links to the next two (a ring with chords: 2N links
// for N ≥ 3); with full, every two routers are linked (a full mesh:
// N(N-1)/2 links, router i dialing every j > i).
func (f *Fleet) Links(full bool, timeout time.Duration) (int, error) {
	n := len(f.Routers)
	total := 0
	f.LinkIDs = map[[2]int]string{}
	for i, r := range f.Routers {
		var dsts []int
		if full {
			for j := i + 1; j < n; j++ {
				dsts = append(dsts, j)
			}
		} else {
			for d := 1; d <= 2 && d < n; d++ {
				if n == 2 && d == 1 && i == 1 {
					continue // one link between two routers
				}
				dsts = append(dsts, (i+d)%n)
			}
		}
		var links []wire.RouterLink
		for _, j := range dsts {
			id := fmt.Sprintf("%sl-%d-%d", f.Prefix, i, j)
			f.LinkIDs[[2]int{min(i, j), max(i, j)}] = id
			links = append(links, wire.RouterLink{ID: id, DestRouterID: f.Routers[j].ID,
				Protocol: "tls", DialAddress: "tls:127.0.0.1:1", Iteration: 1})
		}
		total += len(links)
		r.setLinks(links)
		for _, j := range dsts {
			f.Routers[j].accept(f.LinkIDs[[2]int{min(i, j), max(i, j)}])
		}
	}
	err := benchkit.WaitFor("the controller listing the fleet's links", timeout, func() error {
		got, err := f.Count(benchkit.FabricAPI+"/links", "")
		if err != nil {
			return err
		}
		if got < total {
			return fmt.Errorf("%d links listed, want %d", got, total)
		}
		return nil
	})
	return total, err
}

// Count is the total count of list path with filter (none if "").
func (f *Fleet) Count(path, filter string) (int, error) {
	q := "?limit=1"
	if filter != "" {
		q += "&" + benchkit.Filter(filter)
	}
	out, err := f.API.Do(http.MethodGet, path+q, nil)
	if err != nil {
		return 0, err
	}
	n, ok := benchkit.JGet(out, "meta", "pagination", "totalCount").(float64)
	if !ok {
		return 0, fmt.Errorf("GET %s: no meta.pagination.totalCount", path)
	}
	return int(n), nil
}

// TerminatorCounts are the controller's terminator counts of each router
// (by router id), from the Fabric API's list.
func (f *Fleet) TerminatorCounts() (map[string]int, error) {
	out := map[string]int{}
	for _, r := range f.Routers {
		n, err := f.Count(benchkit.FabricAPI+"/terminators", fmt.Sprintf(`router = "%s"`, r.ID))
		if err != nil {
			return nil, err
		}
		out[r.ID] = n
	}
	return out, nil
}

// CheckTerminators compares each router's terminators with the
// controller's list: "" when every count matches, else what differs.
func (f *Fleet) CheckTerminators() (string, error) {
	counts, err := f.TerminatorCounts()
	if err != nil {
		return "", err
	}
	var bad []string
	for _, r := range f.Routers {
		if want := r.State().Terminators; counts[r.ID] != want {
			bad = append(bad, fmt.Sprintf("%s: the controller lists %d, the router made %d", r.Name, counts[r.ID], want))
		}
	}
	return strings.Join(bad, "; "), nil
}

// OnlineRouters is how many of the fleet's edge routers the controller
// says are online, and how many of those have finished their edge sync
// (syncStatus SYNC_DONE).
func (f *Fleet) OnlineRouters() (online, synced int, err error) {
	list, err := f.API.List("/edge-routers?" + benchkit.Filter(fmt.Sprintf(`name contains "%s"`, f.Prefix)))
	if err != nil {
		return 0, 0, err
	}
	for _, e := range list {
		if on, _ := benchkit.JGet(e, "isOnline").(bool); on {
			online++
			if st, _ := benchkit.JGet(e, "syncStatus").(string); st == "SYNC_DONE" {
				synced++
			}
		}
	}
	return online, synced, nil
}

// CircuitsByNode sums the routers' CircuitsByNode: how many circuits each
// node (in the order of Config.Ctrl) made.
func (f *Fleet) CircuitsByNode() []int {
	var sum []int
	for _, r := range f.Routers {
		for i, n := range r.CircuitsByNode() {
			if i >= len(sum) {
				sum = append(sum, 0)
			}
			sum[i] += n
		}
	}
	return sum
}
