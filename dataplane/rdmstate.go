package dataplane

import (
	"sync"
	"time"

	"edgectl/dataplane/wire"
)

// The router data model's full state is encoded once and shared by every
// router that needs it: the same bytes go to each router's channel, which
// builds only the frame head per router (ctrlchan writes the body from the
// message itself). With 100 routers reconnecting at once, 100 encodings of
// a model of megabytes each were the node's memory peak (docs/performance.md,
// "Fleet at scale").
//
// An encoding is of the model at an applied index. A router that needs the
// full state later, while the encoding is kept (fullStateKeep), gets the
// same bytes, marked with that index, then the change sets after it from
// the rdmLog: as a change set is never older than its index, the router
// ends where the model is, as it would with a fresh encoding. When the log
// no longer covers the encoding's index (a router further behind than
// maxLoggedSets, or the log reset: no router connected, a snapshot
// restored), the state is encoded again.

// fullStateKeep is how long an encoding is offered to the routers that
// come after it; past it the cache lets go of it, so the memory is the
// collector's again (the channels still sending it hold their reference).
const fullStateKeep = 10 * time.Second

// encodedState is one encoding of the full state.
type encodedState struct {
	index    uint64 // the applied index it was read at (or past)
	timeline string
	at       time.Time
	ready    chan struct{} // closed once body is set
	body     []byte        // wire.DataState; never changed once set
}

// stateCache holds the latest encoding while it is offered.
type stateCache struct {
	mu   sync.Mutex
	cur  *encodedState
	drop *time.Timer
}

// sharedFullState returns an encoding of the full state of timeline for a
// router, and the change sets the router needs after it (none when it is
// at the applied index). Routers asking while one is being encoded wait
// for it rather than encoding another.
func (m *Manager) sharedFullState(timeline string) (*encodedState, []rdmSet) {
	applied, _ := m.cfg.AppliedIndex()
	now := m.cfg.Now()
	c := &m.states
	c.mu.Lock()
	if e := c.cur; e != nil && e.timeline == timeline && e.index <= applied && now.Sub(e.at) < fullStateKeep {
		if sets, ok := m.rdm.since(e.index); ok {
			c.mu.Unlock()
			<-e.ready
			m.metrics.fullStates.WithLabelValues("shared").Inc()
			return e, sets
		}
	}
	e := &encodedState{index: applied, timeline: timeline, at: now, ready: make(chan struct{})}
	c.cur = e
	if c.drop != nil {
		c.drop.Stop()
	}
	c.drop = time.AfterFunc(fullStateKeep, func() { c.forget(e) })
	c.mu.Unlock()
	tx := m.cfg.Store.Read() // at or past applied: the state is never older than its index
	e.body = wire.DataState(m.fullState(tx), applied, timeline)
	close(e.ready)
	m.metrics.fullStates.WithLabelValues("encoded").Inc()
	return e, nil
}

// forget lets go of e if it is still the cache's (nil: whatever it holds).
func (c *stateCache) forget(e *encodedState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e == nil || c.cur == e {
		c.cur = nil
		if c.drop != nil {
			c.drop.Stop()
			c.drop = nil
		}
	}
}
