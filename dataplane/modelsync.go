package dataplane

import (
	"fmt"
	"slices"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"
)

// The Manager watches the model (fsm.Watcher): the FSM hands it the record
// changes of each applied batch, and a goroutine of its own turns those
// that routers care about into edge sync messages.

// Applied receives the changes of each batch the FSM applies (fsm.Watcher)
// and queues them: the FSM's apply lock is held, so no work here. (The
// applied index is Config.AppliedIndex.)
func (m *Manager) Applied(sets []fsm.Changes) {
	m.pendingMu.Lock()
	if len(m.pending) == 0 && len(sets) > 0 {
		m.pendingFrom.Store(sets[0].Index)
	}
	m.pending = append(m.pending, sets...)
	m.pendingMu.Unlock()
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// Restored notes that a snapshot replaced the model: every router gets the
// full state again, since the changes that led there were never seen.
func (m *Manager) Restored(uint64) {
	m.pendingMu.Lock()
	m.pending, m.restored = nil, true
	m.pendingMu.Unlock()
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// dispatch turns queued changes into messages for the connected routers.
func (m *Manager) dispatch() {
	for {
		select {
		case <-m.stop:
			return
		case <-m.changed:
		}
		m.pendingMu.Lock()
		sets, restored := m.pending, m.restored
		m.pending, m.restored = nil, false
		m.pendingFrom.Store(0)
		m.pendingMu.Unlock()
		routers := m.edgeRouters()
		if restored {
			applied, _ := m.cfg.AppliedIndex()
			m.rdm.reset(applied + 1)
			m.states.forget(nil)
			for _, r := range routers {
				r.edge.restart()
			}
		}
		if len(sets) == 0 {
			continue
		}
		m.endCircuitsOf(accessLost(sets))
		if reachMayShrink(sets) {
			m.endCircuitsOffReach()
		}
		m.terminatorEvents(sets)
		if m.cfg.PostureRequirementsChanged != nil && postureRequirementsChanged(sets) {
			m.cfg.PostureRequirementsChanged()
		}
		if len(routers) == 0 {
			// Nobody to tell: the log moves past these entries instead of
			// keeping them (a router that comes later, behind them, gets
			// the full state). Bulk writes with no router connected cost
			// no data model work.
			m.rdm.reset(sets[len(sets)-1].Index + 1)
			continue
		}
		m.rdmChanges(sets, routers)
		msgs := m.changeMessages(sets)
		if membershipChanged(sets) {
			if msg := m.ctrlAddressesMessage(); msg != nil {
				msgs = append(msgs, msg)
			}
		}
		for _, r := range routers {
			for _, msg := range msgs {
				r.edge.enqueue(cloneMessage(msg), sets[0].Index)
			}
		}
	}
}

// changeMessages are the edge sync messages of a run of changes, in order.
func (m *Manager) changeMessages(sets []fsm.Changes) []*ctrlchan.Message {
	tx := m.cfg.Store.Read()
	keys := tx.DataPlaneKeys()
	if keys == nil {
		return nil
	}
	var out []*ctrlchan.Message
	for _, set := range sets {
		for _, c := range set.Changes {
			// API sessions are JWTs routers verify themselves: none is sent.
			// A service session that ends is (routers close its connections).
			if c.Kind == store.KindSession && c.New == nil {
				out = append(out, ctrlchan.NewMessage(wire.SessionRemovedType, wire.APISessionRemoved(nil, []string{c.Old.GetID()})))
			}
		}
	}
	return out
}

// syncIDAt is a sync id made at t.
func syncIDAt(t time.Time) string { return fmt.Sprintf("%016x", t.UnixNano()) }

// cloneMessage is a copy of m that can be sent on its own (sending sets its
// sequence and heartbeat headers).
func cloneMessage(m *ctrlchan.Message) *ctrlchan.Message {
	c := &ctrlchan.Message{ContentType: m.ContentType, Headers: make(ctrlchan.Headers, len(m.Headers)), Body: m.Body}
	for k, v := range m.Headers {
		c.Headers[k] = v
	}
	return c
}

// membershipChanged reports whether a controller record came, went or moved.
func membershipChanged(sets []fsm.Changes) bool {
	for _, set := range sets {
		for _, c := range set.Changes {
			if c.Kind == store.KindController {
				var o, n string
				if c.Old != nil {
					o = c.Old.(*store.Controller).APIURL
				}
				if c.New != nil {
					n = c.New.(*store.Controller).APIURL
				}
				if o != n {
					return true
				}
			}
		}
	}
	return false
}

// syncLag is how many Raft entries this node has applied past the oldest
// change not yet sent to every connected edge router (0: all sent).
func (m *Manager) syncLag() float64 {
	oldest := m.pendingFrom.Load()
	for _, r := range m.edgeRouters() {
		if o := r.edge.oldest(); o > 0 && (oldest == 0 || o < oldest) {
			oldest = o
		}
	}
	applied, _ := m.cfg.AppliedIndex()
	if oldest == 0 || applied < oldest {
		return 0
	}
	return float64(applied - oldest + 1)
}

// postureRequirementsChanged tells whether the changes may make a posture
// check fail for sessions that passed it: a posture check changed (its data,
// its attributes) or a service policy's posture check roles changed.
func postureRequirementsChanged(sets []fsm.Changes) bool {
	for _, set := range sets {
		for _, c := range set.Changes {
			switch c.Kind {
			case store.KindPostureCheck:
				if c.New != nil { // made or changed: a policy may select it now
					return true
				}
			case store.KindServicePolicy:
				if c.Old != nil && c.New != nil && !slices.Equal(c.Old.(*store.ServicePolicy).PostureCheckRoles, c.New.(*store.ServicePolicy).PostureCheckRoles) {
					return true
				}
			}
		}
	}
	return false
}

// reachMayShrink tells whether the changes may take an edge router from
// what an identity may use for a service: an edge router policy or a
// service edge router policy changed or deleted, or the role attributes of
// an identity, an edge router or a service changed.
func reachMayShrink(sets []fsm.Changes) bool {
	type roled interface{ Roles() []string }
	for _, set := range sets {
		for _, c := range set.Changes {
			switch c.Kind {
			case store.KindEdgeRouterPolicy, store.KindServiceEdgeRouterPolicy:
				if c.Old != nil {
					return true
				}
			case store.KindIdentity, store.KindEdgeRouter, store.KindService:
				o, ok1 := c.Old.(roled)
				n, ok2 := c.New.(roled)
				if ok1 && ok2 && !slices.Equal(o.Roles(), n.Roles()) {
					return true
				}
			}
		}
	}
	return false
}

// accessLost collects from a run of changes the sessions and API sessions
// that ended and the identities that were disabled: their circuits end.
func accessLost(sets []fsm.Changes) (sessions, apiSessions, identities map[string]bool) {
	sessions, apiSessions, identities = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, set := range sets {
		for _, c := range set.Changes {
			switch {
			case c.Kind == store.KindSession && c.New == nil:
				sessions[c.Old.GetID()] = true
			case c.Kind == store.KindAPISession && c.New == nil:
				apiSessions[c.Old.GetID()] = true
			case c.Kind == store.KindIdentity && c.New == nil:
				identities[c.Old.GetID()] = true
			case c.Kind == store.KindIdentity && c.Old != nil && c.New.(*store.Identity).Disabled && !c.Old.(*store.Identity).Disabled:
				identities[c.New.GetID()] = true
			}
		}
	}
	return sessions, apiSessions, identities
}
