package dataplane

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"
)

// Edge sync: the handshake a connected edge router needs before it admits
// SDK clients.
//
// On connect this node sends the server hello; the router answers with its
// client hello (its edge listeners), and gets the full set of API sessions
// it is to look up ("instant" sync: a sync id that grows with time, a
// sequence, the last chunk marked), after which it counts as synced. That
// set is empty: API session tokens are JWTs the router verifies with the
// keys of its data model (docs/architecture.md), so no session is sent, and
// the empty full state clears any a router still holds. A router that asks
// to resync gets it again. Service sessions that end are sent as they end.

// maxQueued bounds the changes waiting for one router; past it the router
// gets the full state again instead.
const maxQueued = 10000

// routerSync is the sending side of one router's edge sync.
type routerSync struct {
	mu     sync.Mutex
	live   bool // the hello is done: changes are queued for it
	full   bool // a full sync of the API sessions is wanted
	queue  []syncItem
	wake   chan struct{}
	lastID string       // the last sync id sent
	sub    subscription // the router data model subscription
	// dropped counts the session removals dropped because they alone
	// filled the queue (logged by runSync).
	dropped int
}

// syncItem is a queued message, or a data model change set (sent if the
// subscription still wants it when its turn comes).
type syncItem struct {
	msg *ctrlchan.Message
	set *rdmSet
	// index is the Raft index of the change it carries (0: none), for the lag metric.
	index uint64
}

func (s *routerSync) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// enqueue queues a change message (of the entry at index, 0 for none)
// for a router whose hello is done.
func (s *routerSync) enqueue(m *ctrlchan.Message, index uint64) {
	s.push(syncItem{msg: m, index: index})
}

// enqueueSet queues a data model change set for a subscribed router.
func (s *routerSync) enqueueSet(set rdmSet) {
	s.push(syncItem{set: &set, index: set.index})
}

// oldest is the index of the oldest change queued (0: none).
func (s *routerSync) oldest() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range s.queue {
		if it.index > 0 {
			return it.index
		}
	}
	return 0
}

func (s *routerSync) push(it syncItem) {
	s.mu.Lock()
	switch {
	case !s.live && it.set != nil:
		// The hello is not done: the full state that follows it covers
		// the change set. A session removal is kept for after it (the
		// full state holds no service session).
	case len(s.queue) >= maxQueued:
		// Too far behind: the full states again instead. They hold no
		// service session, so the session removals stay queued (an id
		// each) unless they alone fill the queue.
		s.queue = slices.DeleteFunc(s.queue, func(it syncItem) bool { return it.set != nil })
		if len(s.queue) < maxQueued {
			s.queue = append(s.queue, it)
		} else {
			s.dropped += len(s.queue) + 1
			s.queue = nil
		}
		s.full = true
		if !s.sub.until.IsZero() {
			s.sub.pending, s.sub.index = true, 0
		}
	default:
		s.queue = append(s.queue, it)
	}
	s.mu.Unlock()
	s.signal()
}

// resync asks for the full state to be sent again.
func (s *routerSync) resync() {
	s.mu.Lock()
	s.full = true
	s.mu.Unlock()
	s.signal()
}

// runSync drives router r's edge sync until its channel closes.
func (m *Manager) runSync(r *Router) {
	hello, err := m.helloExchange(r)
	if err != nil {
		if !errors.Is(err, ctrlchan.ErrClosed) {
			m.log.Warn("edge sync: no client hello from the router", "router", r.ID, "error", err)
			r.setSync(SyncUnknown)
		}
		return
	}
	r.mu.Lock()
	r.hostname, r.protocols = hello.Hostname, hello.SupportedProtocols()
	r.mu.Unlock()
	m.report(r)
	m.goAttach(func() { m.validateTerminators(r) })
	s := &r.edge
	s.mu.Lock()
	s.live, s.full = true, true
	s.mu.Unlock()
	s.signal()
	for {
		select {
		case <-r.channel().Done():
			return
		case <-s.wake:
		}
		s.mu.Lock()
		full, catchUp, dropped := s.full, s.sub.pending, s.dropped
		s.full, s.sub.pending, s.dropped = false, false, 0
		queue := s.queue
		s.queue = nil
		s.mu.Unlock()
		if dropped > 0 {
			m.log.Warn("edge sync: the router is too far behind; session removals were dropped, it may keep their connections open",
				"router", r.ID, "dropped", dropped)
		}
		if full {
			// The full state holds no service sessions, so the session
			// removals queued with it are still sent after it.
			r.setSync(SyncInProgress)
			if err := m.sendFullState(r); err != nil {
				m.log.Warn("edge sync: full state not sent", "router", r.ID, "error", err)
				return
			}
			r.setSync(SyncDone)
		}
		if catchUp {
			if err := m.catchUp(r); err != nil {
				return
			}
		}
		for _, it := range queue {
			var err error
			if it.set != nil {
				err = m.sendChangeSet(r, *it.set)
			} else {
				err = m.send(r, it.msg)
			}
			if err != nil {
				return
			}
		}
	}
}

// helloExchange sends the server hello and waits for the router's client hello.
func (m *Manager) helloExchange(r *Router) (*wire.ClientHello, error) {
	r.setSync(SyncHello)
	for attempt := 1; ; attempt++ {
		msg := ctrlchan.NewMessage(wire.ServerHelloType, wire.ServerHello(ProtocolLevel, map[string]string{"instant": "true", "routerModel": "true"}))
		msg.Headers.PutBool(wire.RouterDataModelHeader, true)
		ctx, cancel := m.timeout(10 * time.Second)
		reply, err := m.request(ctx, r, msg)
		cancel()
		if err == nil {
			if reply.ContentType != wire.ClientHelloType {
				return nil, fmt.Errorf("the answer to the server hello is content type %d, not a client hello", reply.ContentType)
			}
			return wire.DecodeClientHello(reply.Body)
		}
		if errors.Is(err, ctrlchan.ErrClosed) || attempt == 3 {
			return nil, err
		}
	}
}

// report records the router's hostname and edge listeners in the model
// when they differ from what it holds (edge routers only).
func (m *Manager) report(r *Router) {
	if r.Kind != store.KindEdgeRouter || m.cfg.Writer == nil {
		return
	}
	r.mu.Lock()
	host, protocols := r.hostname, maps.Clone(r.protocols)
	r.mu.Unlock()
	rec, err := store.GetAs[*store.EdgeRouter](m.cfg.Store.Read(), store.KindEdgeRouter, r.ID)
	if err != nil || (rec.Hostname == host && maps.Equal(rec.SupportedProtocols, protocols)) {
		return
	}
	m.goAttach(func() {
		ctx, cancel := m.timeout(writeTimeout)
		defer cancel()
		if _, err := m.cfg.Writer.Do(ctx, fsm.CmdRouterReport, fsm.RouterReport{ID: r.ID, Fingerprint: r.currentFingerprint(),
			Hostname: host, SupportedProtocols: protocols}); err != nil {
			m.log.Warn("the router's listeners were not recorded", "router", r.ID, "error", err)
		}
	})
}

// instantState is the sync state header of a full-state chunk.
type instantState struct {
	ID       string `json:"id"`
	IsLast   bool   `json:"isLast"`
	Sequence int    `json:"sequence"`
}

// nextSyncID is a sync id greater, as a string, than the router's last one.
func (s *routerSync) nextSyncID(now time.Time) string {
	id := syncIDAt(now)
	if id <= s.lastID {
		id = s.lastID + "0"
	}
	s.lastID = id
	return id
}

// sendFullState starts the router's edge sync with the full set of API
// sessions, which is empty (API session tokens are JWTs the router verifies
// itself: see the top of this file), in one chunk marked last.
func (m *Manager) sendFullState(r *Router) error {
	st := instantState{ID: r.edge.nextSyncID(m.cfg.Now()), IsLast: true}
	msg := ctrlchan.NewMessage(wire.APISessionAddedType, wire.APISessionAdded(true, nil))
	msg.Headers.PutString(wire.SyncStrategyTypeHeader, "instant")
	state, _ := json.Marshal(st)
	msg.Headers[wire.SyncStrategyStateHeader] = state
	if err := m.send(r, msg); err != nil {
		return err
	}
	m.log.Debug("edge sync: full state sent", "router", r.ID)
	return nil
}

// restart asks for both full states again (the model was replaced by a
// snapshot: the changes that led there were never seen).
func (s *routerSync) restart() {
	s.mu.Lock()
	s.full, s.queue = true, nil
	if !s.sub.until.IsZero() {
		s.sub.pending, s.sub.index = true, 0
	}
	s.mu.Unlock()
	s.signal()
}
