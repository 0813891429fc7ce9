package webhook

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"edgectl/dataplane/dpevent"
	"edgectl/store"
)

// Data-plane events (package dpevent) are node-local: every node POSTs its
// own to the subscriptions that ask for them: enabled ones whose filter is
// set and is a filter of data-plane events (namespace = "circuit", ...)
// that matches. The body is as the audit deliveries' ({"events": [...]},
// signed the same way), with X-Edgectl-Events: data-plane and
// X-Edgectl-Node naming the node. The cursor is this node's, in memory: a
// failed POST is retried (with backoff) while the ring buffer keeps the
// events; a node that restarts starts from its new events.

// DataPlaneDeliverer delivers this node's data-plane events.
type DataPlaneDeliverer struct {
	// D supplies the store, endpoints, log and user agent (its Run need
	// not be running: data-plane events go from every node).
	D      *Deliverer
	Events *dpevent.Log
	// Poll is how often subscriptions are looked at again.
	Poll time.Duration
}

// Run delivers until ctx ends.
func (p *DataPlaneDeliverer) Run(ctx context.Context) {
	poll := p.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	workers := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() {
		for _, cancel := range workers {
			cancel()
		}
	}()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		wanted := map[string]bool{}
		p.D.Store.Read().Each(store.KindEventSubscription, "id", func(r store.Record) bool {
			if s := r.(*store.EventSubscription); s.IsEnabled && takesDataPlane(s.Filter) {
				wanted[s.ID] = true
			}
			return true
		})
		for id, cancel := range workers {
			if !wanted[id] {
				cancel()
				delete(workers, id)
			}
		}
		for id := range wanted {
			if workers[id] != nil {
				continue
			}
			wctx, cancel := context.WithCancel(ctx)
			workers[id] = cancel
			w := &dpWorker{p: p, w: &worker{d: p.D, id: id}, from: p.Events.Last(), poll: poll}
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(wctx)
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// takesDataPlane says whether a subscription's filter asks for data-plane
// events: set, and a filter of theirs.
func takesDataPlane(f string) bool {
	if strings.TrimSpace(f) == "" {
		return false
	}
	_, err := dpevent.Compile(f)
	return err == nil
}

// dpWorker delivers to one subscription.
type dpWorker struct {
	p    *DataPlaneDeliverer
	w    *worker // its POST and HTTP client
	from int64
	poll time.Duration
}

func (d *dpWorker) run(ctx context.Context) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		changed := d.p.Events.Changed()
		more, err := d.round(ctx)
		wait := d.poll
		switch {
		case err != nil:
			d.p.D.Log.Debug("data-plane event delivery failed", "subscription", d.w.id, "error", err)
			backoff = min(max(2*backoff, minBackoff), maxBackoff)
			wait = backoff/2 + rand.N(backoff/2+1)
			changed = nil
		case more:
			backoff = 0
			continue
		default:
			backoff = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-time.After(wait):
		}
	}
}

// round posts one batch of the matching events after the cursor; more
// says a full batch went (others may wait).
func (d *dpWorker) round(ctx context.Context) (more bool, err error) {
	s, err := store.GetAs[*store.EventSubscription](d.p.D.Store.Read(), store.KindEventSubscription, d.w.id)
	if err != nil || !s.IsEnabled {
		return false, nil // the Run loop stops this worker
	}
	q, err := dpevent.Compile(s.Filter)
	if err != nil {
		return false, nil
	}
	var batch []*dpevent.Event
	reached := d.from
	oldest, lost := d.p.Events.After(d.from, func(e *dpevent.Event) bool {
		reached = e.ID
		if q.Match(e) {
			batch = append(batch, e)
		}
		return len(batch) < BatchSize
	})
	if lost {
		d.p.D.Log.Warn("data-plane events were dropped by this node's retention before they could be delivered",
			"subscription", s.Name, "from", d.from+1, "to", oldest-1)
	}
	if len(batch) > 0 {
		if err := d.w.postWith(ctx, s, map[string]any{"events": batch, "nodeId": d.p.Events.NodeID()},
			map[string]string{"X-Edgectl-Events": "data-plane", "X-Edgectl-Node": d.p.Events.NodeID()}); err != nil {
			return false, err
		}
	}
	d.from = reached
	return len(batch) == BatchSize, nil
}
