package dataplane

import (
	"context"
	"sync"
	"time"
)

// Background work. Every goroutine the Manager starts beyond a router's
// channel has an owner, as etcd's GoAttach: it joins the Manager's wait
// group, none starts once Close has begun, and each call it makes on its
// own (a Raft write, a request to a router) runs under the Manager's
// context, which Close cancels. Work that a router's messages start (dials,
// terminator writes) or that a fault starts per circuit (moves) runs on a
// pool per router: a few at once, the rest queued, so that a link carrying
// 10,000 circuits does not start 10,000 goroutines.

// At most this many of one router's dials, moves of circuits entering at
// it, and other requests (terminator writes, certificate extension, link
// verification) run at once.
const (
	dialsPerRouter    = 32
	movesPerRouter    = 8
	requestsPerRouter = 8
)

// writeTimeout bounds a Raft write the node makes on its own.
const writeTimeout = 30 * time.Second

// goAttach runs f on a goroutine of its own that Close waits for; it
// returns false (f does not run) once Close has begun.
func (m *Manager) goAttach(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
	return true
}

// timeout is the Manager's context bounded by d.
func (m *Manager) timeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(m.ctx, d)
}

// pools are the per-router work queues, by pool name.
type pools struct {
	mu    sync.Mutex
	byKey map[string]*pool
}

// pool is one queue: its waiting work and how many goroutines drain it.
type pool struct {
	queue   []func()
	running int
}

// submit queues f on pool key, run by at most limit goroutines at once.
func (m *Manager) submit(key string, limit int, f func()) {
	ps := &m.pools
	ps.mu.Lock()
	if ps.byKey == nil {
		ps.byKey = map[string]*pool{}
	}
	p := ps.byKey[key]
	if p == nil {
		p = &pool{}
		ps.byKey[key] = p
	}
	p.queue = append(p.queue, f)
	if p.running >= limit {
		ps.mu.Unlock()
		return
	}
	p.running++
	ps.mu.Unlock()
	if !m.goAttach(func() { m.drain(key, p) }) {
		ps.mu.Lock()
		p.running--
		p.queue = nil
		ps.mu.Unlock()
	}
}

// drain runs pool p's work until it is empty or the Manager closes.
func (m *Manager) drain(key string, p *pool) {
	ps := &m.pools
	for {
		ps.mu.Lock()
		if len(p.queue) == 0 || m.ctx.Err() != nil {
			p.running--
			if p.running == 0 && ps.byKey[key] == p {
				delete(ps.byKey, key)
			}
			ps.mu.Unlock()
			return
		}
		f := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		ps.mu.Unlock()
		f()
	}
}

// queued is the number of tasks waiting in pool key, and running.
func (m *Manager) queued(key string) (waiting, running int) {
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	if p := m.pools.byKey[key]; p != nil {
		return len(p.queue), p.running
	}
	return 0, 0
}
