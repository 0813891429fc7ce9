package auth

import (
	"container/list"
	"sync"
	"time"
)

// Limit is a token bucket: Burst failed attempts at once, then one more
// every Every.
type Limit struct {
	Burst int
	Every time.Duration
}

// Throttle slows down failed authentication attempts per key (a username, a
// certificate fingerprint, a source address, an identity's MFA). It keeps one
// token bucket per key in memory on this node, as a GCRA "theoretical arrival
// time" (when the bucket is full again). The table holds at most max keys:
// the least recently touched key goes first, and a key whose bucket refilled
// is the same as no key, so an attacker who floods it with fresh keys can
// only push out buckets that are already nearly full again.
type Throttle struct {
	mu    sync.Mutex
	max   int
	items map[string]*list.Element
	lru   *list.List // front = most recently touched
}

type throttleEntry struct {
	key string
	tat time.Time // when the bucket is full again
}

// NewThrottle returns a throttle that tracks at most max keys.
func NewThrottle(max int) *Throttle {
	if max < 1 {
		max = 1
	}
	return &Throttle{max: max, items: map[string]*list.Element{}, lru: list.New()}
}

// Check reports whether key has a token left at now; when it has none, wait
// is how long until it has one.
func (t *Throttle) Check(key string, l Limit, now time.Time) (wait time.Duration, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	el := t.items[key]
	if el == nil {
		return 0, true
	}
	tat := el.Value.(*throttleEntry).tat
	// Tokens in use = (tat - now) / Every; one is left while that is at most Burst-1.
	over := tat.Sub(now) - time.Duration(l.Burst-1)*l.Every
	if over <= 0 {
		return 0, true
	}
	return over, false
}

// Fail takes one token of key: a failed attempt at now.
func (t *Throttle) Fail(key string, l Limit, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	el := t.items[key]
	if el == nil {
		el = t.lru.PushFront(&throttleEntry{key: key, tat: now})
		t.items[key] = el
		t.evict(now)
	} else {
		t.lru.MoveToFront(el)
	}
	e := el.Value.(*throttleEntry)
	if e.tat.Before(now) {
		e.tat = now
	}
	e.tat = e.tat.Add(l.Every)
	// Attempts that passed Check together may overdraw the bucket: cap the
	// debt at an empty bucket, so the wait never exceeds one interval.
	if limit := now.Add(time.Duration(l.Burst) * l.Every); e.tat.After(limit) {
		e.tat = limit
	}
}

// evict drops the keys at the back whose buckets refilled (they are the
// same as no key), then the least recently touched keys beyond max.
func (t *Throttle) evict(now time.Time) {
	for back := t.lru.Back(); back != nil && t.lru.Len() > 1; back = t.lru.Back() {
		e := back.Value.(*throttleEntry)
		if e.tat.After(now) && t.lru.Len() <= t.max {
			return
		}
		t.lru.Remove(back)
		delete(t.items, e.key)
	}
}

// Len is the number of keys tracked.
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.items)
}
