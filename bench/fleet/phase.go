package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"edgectl/bench/benchkit"
)

// Phase is what one phase measured.
type Phase struct {
	Name string
	// Count is what succeeded; Failed what failed for good; Retries the
	// attempts repeated (the controller busy, a router reconnecting).
	Count, Failed, Retries int
	// Elapsed is the phase's time; Rate is Count per second of it.
	Elapsed time.Duration
	Rate    float64
	// P50 and P99 are the latencies of the successful operations.
	P50, P99 time.Duration
	// Buckets are the rates (per second) over each tenth of the target
	// count, in order, as far as the phase got.
	Buckets []float64
	// Steal is the share of CPU time the host stole meanwhile, in percent.
	Steal float64
	// FirstErr is the first failure, for the report.
	FirstErr error
	// Done are the completion times since the phase's start, in order.
	Done []time.Duration
}

// RateAt is the rate (per second) over the window operations that ended
// with the n-th; 0 when the phase did not get that far.
func (p Phase) RateAt(n, window int) float64 {
	if n > len(p.Done) || n <= window || window <= 0 {
		return 0
	}
	if d := (p.Done[n-1] - p.Done[n-1-window]).Seconds(); d > 0 {
		return float64(window) / d
	}
	return 0
}

// recorder collects the completions of a phase.
type recorder struct {
	mu      sync.Mutex
	start   time.Time
	done    []time.Duration // completion times since start, in order
	lat     []time.Duration
	failed  int
	retries int
	first   error
}

func (r *recorder) ok(lat time.Duration) {
	now := time.Since(r.start)
	r.mu.Lock()
	r.done = append(r.done, now)
	r.lat = append(r.lat, lat)
	r.mu.Unlock()
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	r.failed++
	if r.first == nil {
		r.first = err
	}
	r.mu.Unlock()
}

func (r *recorder) retry() {
	r.mu.Lock()
	r.retries++
	r.mu.Unlock()
}

// phase summarizes the recorder for a target of target operations.
func (r *recorder) phase(name string, target int, cpu benchkit.CPUTicks) Phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := Phase{Name: name, Count: len(r.done), Failed: r.failed, Retries: r.retries, Elapsed: time.Since(r.start),
		Steal: benchkit.StolenPct(cpu, benchkit.ReadCPU()), FirstErr: r.first, Done: slices.Clone(r.done)}
	if p.Count > 0 {
		p.Rate = float64(p.Count) / p.Elapsed.Seconds()
		p.P50, p.P99 = benchkit.P50P99(slices.Clone(r.lat))
	}
	size := max(target/10, 1)
	for b := 0; (b+1)*size <= len(r.done); b++ {
		var from time.Duration
		if b > 0 {
			from = r.done[b*size-1]
		}
		to := r.done[(b+1)*size-1]
		if d := (to - from).Seconds(); d > 0 {
			p.Buckets = append(p.Buckets, float64(size)/d)
		} else {
			p.Buckets = append(p.Buckets, 0)
		}
	}
	return p
}

// Terminators makes m terminators, terminator j for host j mod H (of the
// host's service) through router terminatorRouter(j), with inflight
// requests at a time per router, until all are made or budget passes. A busy controller's refusal, or a router between
// two channels, is retried (as routers do); other failures are counted.
// Terminator ids are unique to the fleet and to first (the index of the
// first, so that phases can add more).
func (f *Fleet) Terminators(m, first, inflight int, budget time.Duration) Phase {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	cpu := benchkit.ReadCPU()
	rec := &recorder{start: time.Now()}
	n := len(f.Routers)
	lists := make([][]int, n)
	for j := first; j < first+m; j++ {
		r := terminatorRouter(j, n, len(f.Model.Hosts))
		lists[r] = append(lists[r], j)
	}
	var wg sync.WaitGroup
	for i, r := range f.Routers {
		queue := make(chan int, len(lists[i]))
		for _, j := range lists[i] {
			queue <- j
		}
		close(queue)
		for range inflight {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range queue {
					h := f.Model.Hosts[j%len(f.Model.Hosts)]
					f.createOne(ctx, r, h, fmt.Sprintf("%st-%d", f.Prefix, j), rec)
					if ctx.Err() != nil {
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	return rec.phase("terminators", m, cpu)
}

// terminatorRouter is the router (of n) that makes terminator j of hosts
// hosts: host j mod hosts's k-th terminator (k = j / hosts) goes through the
// router after the one its (k-1)-th went through, so that a host binds
// through distinct routers as sdk-golang does (one listener per router, up
// to ListenOptions.MaxTerminators), until it has one on every router; the
// routers' shares stay within one of each other per round of hosts.
func terminatorRouter(j, n, hosts int) int {
	return (j%hosts + j/hosts) % n
}

// createOne makes one terminator, retrying while the controller is busy or
// the router has no channel. ctx (the budget) stops the retries, not a
// request under way: one the controller made after the budget ended is
// still the router's.
func (f *Fleet) createOne(ctx context.Context, r *Router, h *Host, id string, rec *recorder) {
	for {
		start := time.Now()
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := r.CreateTerminator(rctx, h, id)
		cancel()
		switch {
		case err == nil:
			rec.ok(time.Since(start))
			return
		case errors.Is(err, ErrBusy), errors.Is(err, ErrNotConnected), errors.Is(err, context.DeadlineExceeded):
			if ctx.Err() != nil {
				return // the budget ended: not retried
			}
			rec.retry()
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		default:
			rec.fail(err)
			return
		}
	}
}

// Circuits asks for count circuits, dial k through router k mod N to
// service k mod S, with
// concurrency dials at a time, until all are done or budget passes; each
// circuit made is ended at once by a fault from its ingress router.
func (f *Fleet) Circuits(count, concurrency int, budget time.Duration) Phase {
	return f.dials("circuits", count, concurrency, budget, func(ctx context.Context, k int) (*Router, string, error) {
		r := f.Routers[k%len(f.Routers)]
		id, err := r.Dial(ctx, f.Model.Dialer, k%len(f.Model.ServiceIDs))
		return r, id, err
	})
}

// dials runs a phase of count dials, concurrency at a time, until all are
// done or budget passes. dial k makes circuit k (each given 30 s) and names
// the router it went in through; that router ends the circuit at once by a
// fault. A failure after the budget ended is not counted.
func (f *Fleet) dials(name string, count, concurrency int, budget time.Duration,
	dial func(ctx context.Context, k int) (*Router, string, error)) Phase {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	cpu := benchkit.ReadCPU()
	rec := &recorder{start: time.Now()}
	jobs := make(chan int, count)
	for k := range count {
		jobs <- k
	}
	close(jobs)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				if ctx.Err() != nil {
					return
				}
				start := time.Now()
				dctx, dcancel := context.WithTimeout(ctx, 30*time.Second)
				r, id, err := dial(dctx, k)
				dcancel()
				if err != nil {
					if ctx.Err() == nil {
						rec.fail(err)
					}
					continue
				}
				rec.ok(time.Since(start))
				_ = r.Fault(id)
			}
		}()
	}
	wg.Wait()
	return rec.phase(name, count, cpu)
}

// CircuitsAtRate asks for count circuits at a fixed offered load of rate
// per second (dial k starts at k/rate whatever the answers before it),
// dial k through router k mod N to service k mod S; each circuit made is
// ended at once by a fault. Dials not started when budget passes are not
// made. Its latencies are those of a controller that is not saturated,
// when it keeps up.
func (f *Fleet) CircuitsAtRate(count int, rate float64, budget time.Duration) Phase {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	cpu := benchkit.ReadCPU()
	rec := &recorder{start: time.Now()}
	var wg sync.WaitGroup
	for k := range count {
		at := rec.start.Add(time.Duration(float64(k) / rate * float64(time.Second)))
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(at)):
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.Routers[k%len(f.Routers)]
			dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer dcancel()
			start := time.Now()
			id, err := r.Dial(dctx, f.Model.Dialer, k%len(f.Model.ServiceIDs))
			if err != nil {
				rec.fail(err)
				return
			}
			rec.ok(time.Since(start))
			_ = r.Fault(id)
		}()
	}
	wg.Wait()
	return rec.phase("circuits at a fixed rate", count, cpu)
}

// DialUntil dials through every router in turn until one circuit through
// each succeeds (router i to service i mod S), or timeout passes; it
// returns the first error left.
func (f *Fleet) DialUntil(timeout time.Duration) error {
	for i, r := range f.Routers {
		err := benchkit.WaitFor("a circuit through "+r.Name, timeout, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			id, err := r.Dial(ctx, f.Model.Dialer, i%len(f.Model.ServiceIDs))
			if err == nil {
				_ = r.Fault(id)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Load is circuits asked for in the background while something else
// happens (a restart): every success and failure is kept with its time, so
// that the gaps without a circuit made can be read against the events.
type Load struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	start  time.Time
	oks    []time.Time
	failed int
}

// StartLoad dials through the routers in turn, concurrency at a time,
// until Stop; each circuit made is ended at once by a fault. A failed dial
// is retried after 50 ms (a router between channels fails at once).
func (f *Fleet) StartLoad(concurrency int) *Load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Load{cancel: cancel, start: time.Now()}
	var next sync.Mutex
	k := 0
	for range concurrency {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for ctx.Err() == nil {
				next.Lock()
				i := k
				k++
				next.Unlock()
				r := f.Routers[i%len(f.Routers)]
				dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
				id, err := r.Dial(dctx, f.Model.Dialer, i%len(f.Model.ServiceIDs))
				dcancel()
				l.mu.Lock()
				if err == nil {
					l.oks = append(l.oks, time.Now())
				} else if ctx.Err() == nil {
					l.failed++
				}
				l.mu.Unlock()
				if err == nil {
					_ = r.Fault(id)
					continue
				}
				select {
				case <-ctx.Done():
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
	}
	return l
}

// Made is how many circuits the load has made so far.
func (l *Load) Made() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.oks)
}

// LoadResult is what a background load saw.
type LoadResult struct {
	Made, Failed int
	// LongestGap is the longest time without a circuit made, and when it
	// began (since the load's start).
	LongestGap, GapFrom time.Duration
	oks                 []time.Time
}

// Stop ends the load and sums it up.
func (l *Load) Stop() LoadResult {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	oks := slices.Clone(l.oks)
	slices.SortFunc(oks, func(a, b time.Time) int { return a.Compare(b) })
	res := LoadResult{Made: len(oks), Failed: l.failed, oks: oks}
	prev := l.start
	for _, t := range append(oks, time.Now()) {
		if d := t.Sub(prev); d > res.LongestGap {
			res.LongestGap, res.GapFrom = d, prev.Sub(l.start)
		}
		prev = t
	}
	return res
}

// FirstAfter is the time from t to the first circuit made after it; -1
// when none was.
func (r LoadResult) FirstAfter(t time.Time) time.Duration {
	i, _ := slices.BinarySearchFunc(r.oks, t, func(a, b time.Time) int { return a.Compare(b) })
	if i == len(r.oks) {
		return -1
	}
	return r.oks[i].Sub(t)
}
