package dpevent

import (
	"sync"
	"time"
)

// Retention defaults: the newest 10,000 events, none older than an hour.
const (
	DefaultCount  = 10_000
	DefaultMaxAge = time.Hour
)

// Log is a node's data-plane events in a ring buffer: the newest Count
// events, none older than MaxAge. Ids increase by one from the node's
// start time in microseconds, so that they keep increasing across
// restarts (a reader resuming after one learns it lost what was between).
type Log struct {
	nodeID string
	count  int
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	ring    []*Event // ring[(head+i)%len] for i < n, oldest first
	head, n int
	next    int64
	changed chan struct{}
	dropped uint64 // events gone by retention
}

// Config sets a Log's node and retention (zero: the defaults).
type Config struct {
	NodeID string
	Count  int
	MaxAge time.Duration
	Now    func() time.Time
}

// New returns an empty Log.
func New(cfg Config) *Log {
	if cfg.Count <= 0 {
		cfg.Count = DefaultCount
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Log{nodeID: cfg.NodeID, count: cfg.Count, maxAge: cfg.MaxAge, now: cfg.Now,
		ring: make([]*Event, 0, min(cfg.Count, 1024)), next: cfg.Now().UnixMicro() + 1, changed: make(chan struct{})}
}

// NodeID is the node the Log records for.
func (l *Log) NodeID() string {
	if l == nil {
		return ""
	}
	return l.nodeID
}

// Append records e, giving it its id, its node and (unless set) its time.
// A nil Log records nothing. e must not be changed afterwards.
func (l *Log) Append(e *Event) {
	if l == nil {
		return
	}
	now := l.now().UTC()
	if e.At.IsZero() {
		e.At = now
	}
	if e.NodeID == "" {
		e.NodeID = l.nodeID
	}
	l.mu.Lock()
	e.ID = l.next
	l.next++
	l.trim(now)
	if l.n == l.count {
		l.ring[l.head] = nil
		l.head = (l.head + 1) % len(l.ring)
		l.n--
		l.dropped++
	}
	if l.n < len(l.ring) {
		l.ring[(l.head+l.n)%len(l.ring)] = e
	} else {
		// grow: unroll the ring into a bigger slice
		grown := make([]*Event, 0, min(l.count, max(2*len(l.ring), 16)))
		for i := 0; i < l.n; i++ {
			grown = append(grown, l.ring[(l.head+i)%len(l.ring)])
		}
		grown = append(grown, e)
		l.ring, l.head = grown[:cap(grown)], 0
	}
	l.n++
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// trim drops the events older than the retention's age.
func (l *Log) trim(now time.Time) {
	cut := now.Add(-l.maxAge)
	for l.n > 0 && l.ring[l.head].At.Before(cut) {
		l.ring[l.head] = nil
		l.head = (l.head + 1) % len(l.ring)
		l.n--
		l.dropped++
	}
}

// Changed is closed when the next event is appended.
func (l *Log) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// Last is the id of the newest event (or of the one before the first to
// come).
func (l *Log) Last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next - 1
}

// After calls fn with the kept events after id from, oldest first, until
// fn returns false. lost says that events after from are no longer kept
// (from is 0, before this node's first event, or older than the
// retention); oldest is then the id of the oldest kept event or, with none
// kept, of the next to come.
func (l *Log) After(from int64, fn func(*Event) bool) (oldest int64, lost bool) {
	l.mu.Lock()
	l.trim(l.now().UTC())
	oldest = l.next
	if l.n > 0 {
		oldest = l.ring[l.head].ID
	}
	lost = from > 0 && from < oldest-1
	// The events are immutable: copy the pointers, call fn unlocked.
	// The ring's ids are consecutive: the first after from is at from+1-oldest.
	var batch []*Event
	for i := max(from+1-oldest, 0); i < int64(l.n); i++ {
		batch = append(batch, l.ring[(l.head+int(i))%len(l.ring)])
	}
	l.mu.Unlock()
	for _, e := range batch {
		if !fn(e) {
			break
		}
	}
	return oldest, lost
}

// Stats are the Log's counts: events kept, and dropped by the retention.
func (l *Log) Stats() (kept int, dropped uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n, l.dropped
}
