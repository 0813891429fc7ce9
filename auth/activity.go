package auth

import (
	"context"
	"sync"
	"time"

	"edgectl/store"
)

// Activity keeps the last activity of API sessions on this node in memory and
// flushes it through Raft in batches (cachedLastActivityAt), so a busy client
// costs no write per request. Expiry checks take the later of the two times.
type Activity struct {
	mu      sync.Mutex
	seen    map[string]time.Time // session id → last activity seen here
	pending map[string]time.Time // not yet flushed
}

// NewActivity returns an empty tracker.
func NewActivity() *Activity {
	return &Activity{seen: map[string]time.Time{}, pending: map[string]time.Time{}}
}

// Touch records activity of a session at t.
func (a *Activity) Touch(id string, t time.Time) {
	a.mu.Lock()
	if t.After(a.seen[id]) {
		a.seen[id] = t
		a.pending[id] = t
	}
	a.mu.Unlock()
}

// Last returns the latest activity of s known to this node.
func (a *Activity) Last(s *store.APISession) time.Time {
	last := s.CachedLastActivityAt
	if last.Before(s.CreatedAt) {
		last = s.CreatedAt
	}
	a.mu.Lock()
	t := a.seen[s.ID]
	a.mu.Unlock()
	if t.After(last) {
		return t
	}
	return last
}

// Expired reports whether s has had no activity for longer than timeout.
func (a *Activity) Expired(s *store.APISession, now time.Time, timeout time.Duration) bool {
	return now.Sub(a.Last(s)) > timeout
}

// take returns the pending batch and clears it.
func (a *Activity) take() []store.Activity {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pending) == 0 {
		return nil
	}
	batch := make([]store.Activity, 0, len(a.pending))
	for id, t := range a.pending {
		batch = append(batch, store.Activity{ID: id, At: t})
	}
	a.pending = map[string]time.Time{}
	return batch
}

// giveBack re-queues a batch whose flush failed.
func (a *Activity) giveBack(batch []store.Activity) {
	a.mu.Lock()
	for _, e := range batch {
		if e.At.After(a.pending[e.ID]) {
			a.pending[e.ID] = e.At
		}
	}
	a.mu.Unlock()
}

// Forget drops the memory of sessions that no longer exist.
func (a *Activity) Forget(ids []string) {
	a.mu.Lock()
	for _, id := range ids {
		delete(a.seen, id)
		delete(a.pending, id)
	}
	a.mu.Unlock()
}

// Maintainer flushes activity and removes expired sessions.
type Maintainer struct {
	Activity *Activity
	Store    *store.Store
	Timeout  time.Duration
	Interval time.Duration
	Now      func() time.Time
	IsLeader func() bool
	// Flush proposes a batch of activity; Expire proposes the removal of sessions.
	Flush  func(ctx context.Context, batch []store.Activity) error
	Expire func(ctx context.Context, ids []string) error
}

// Run flushes and sweeps every Interval until ctx ends.
func (m *Maintainer) Run(ctx context.Context) {
	t := time.NewTicker(m.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.Tick(ctx)
		}
	}
}

// Tick does one flush and, on the leader, one sweep of expired sessions.
func (m *Maintainer) Tick(ctx context.Context) {
	if batch := m.Activity.take(); batch != nil {
		if err := m.Flush(ctx, batch); err != nil {
			m.Activity.giveBack(batch)
		}
	}
	if !m.IsLeader() {
		return
	}
	now := m.Now()
	// Other nodes flush their activity every Interval: wait that much longer
	// before calling a session idle, so activity seen elsewhere is not missed.
	limit := m.Timeout + 2*m.Interval
	var expired []string
	tx := m.Store.Read()
	tx.Each(store.KindAPISession, "id", func(r store.Record) bool {
		s := r.(*store.APISession)
		if m.Activity.Expired(s, now, limit) {
			expired = append(expired, s.ID)
		}
		return len(expired) < 1000
	})
	if len(expired) > 0 && m.Expire(ctx, expired) == nil {
		m.Activity.Forget(expired)
	}
}
