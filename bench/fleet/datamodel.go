package fleet

import (
	"context"
	"fmt"
	"time"

	"edgectl/bench/benchkit"
)

// The data model at scale (issue 45): many identities in the model, every
// router connecting at once and taking the full router data model, and a
// policy change timed from the API's answer to each router's receipt.

// Identities makes n identities (names prefix+"id-<k>", no policy gives
// them anything) through the Management API, workers at a time, until all
// are made or budget passes.
func (f *Fleet) Identities(n, workers int, budget time.Duration) Phase {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	cpu := benchkit.ReadCPU()
	rec := &recorder{start: time.Now()}
	_ = parallel(n, workers, func(k int) error {
		if ctx.Err() != nil {
			return nil
		}
		start := time.Now()
		_, err := f.API.Create("/identities", map[string]any{"name": fmt.Sprintf("%sid-%d", f.Prefix, k), "type": "User",
			"isAdmin": false, "roleAttributes": []string{f.Prefix + "bulk"}})
		if err != nil {
			rec.fail(err)
		} else {
			rec.ok(time.Since(start))
		}
		return nil
	})
	return rec.phase("identities", n, cpu)
}

// Sync is what every router's taking the full data model at once cost.
type Sync struct {
	// Elapsed is from the routers' dials to every one holding the model.
	Elapsed time.Duration
	// Bytes and Events are per router: the full states' bytes and events
	// each got (their mean over the routers).
	Bytes, Events int64
}

// Resync disconnects every router, drops the data model each holds, and
// connects them all at once: it times until each holds the full data model
// again (minConns: the channels each must have opened in all by then).
// stopped, when not nil, runs while every router is disconnected.
func (f *Fleet) Resync(minConns int, stopped func(), timeout time.Duration) (Sync, error) {
	var s Sync
	f.Stop()
	if stopped != nil {
		stopped()
	}
	bytes0, events0 := make([]int64, len(f.Routers)), make([]int64, len(f.Routers))
	for i, r := range f.Routers {
		r.forget()
		bytes0[i], events0[i] = r.FullBytes.Load(), r.Events.Load()
	}
	t0 := time.Now()
	f.Start()
	if err := f.WaitConnected(minConns, timeout); err != nil {
		return s, err
	}
	s.Elapsed = time.Since(t0)
	for i, r := range f.Routers {
		s.Bytes += r.FullBytes.Load() - bytes0[i]
		s.Events += r.Events.Load() - events0[i]
	}
	s.Bytes /= int64(len(f.Routers))
	s.Events /= int64(len(f.Routers))
	return s, nil
}

// PolicyChanges makes count service policies (Dial, for no identity, of
// the fleet's services) one after the other, and times each from the
// API's answer to its arrival in each router's data model: the phase's
// latencies are count × routers.
func (f *Fleet) PolicyChanges(count int, timeout time.Duration) (Phase, error) {
	watch := f.Prefix + "pol-"
	for _, r := range f.Routers {
		r.Watch(watch)
	}
	cpu := benchkit.ReadCPU()
	rec := &recorder{start: time.Now()}
	for k := range count {
		name := fmt.Sprintf("%s%d", watch, k)
		// From the request's start: the API's answer comes once the change
		// is applied, and a router may hold it before the answer is read.
		t0 := time.Now()
		if _, err := f.API.Create("/service-policies", map[string]any{"name": name, "type": "Dial", "semantic": "AnyOf",
			"serviceRoles": []string{"#" + f.Prefix + "svc"}, "identityRoles": []string{"#" + f.Prefix + "nobody"}}); err != nil {
			return rec.phase("policy changes", count, cpu), err
		}
		err := benchkit.WaitFor("policy "+name+" in every router's data model", timeout, func() error {
			for _, r := range f.Routers {
				if _, ok := r.Seen(name); !ok {
					return fmt.Errorf("router %s does not hold %s (change sets %d, full states %d, index %d)", r.Name, name,
						r.ChangeSets.Load(), r.DataStates.Load(), r.State().Index)
				}
			}
			return nil
		})
		if err != nil {
			return rec.phase("policy changes", count, cpu), err
		}
		for _, r := range f.Routers {
			at, _ := r.Seen(name)
			rec.ok(at.Sub(t0))
		}
	}
	p := rec.phase("policy changes", count*len(f.Routers), cpu)
	p.Rate = 0 // the changes are made one at a time: no rate
	p.Buckets = nil
	return p, nil
}
