package dataplane

import (
	"sync"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
)

// The node keeps the router data model's recent change sets in memory,
// keyed by Raft index (rdmLog). A change set is made from an entry's record
// changes read against the model as it is when the set is made, which may
// be past the entry: its events are upserts of whole records and policy
// membership changes, so a set's content is never older than its index,
// and a router that applies the sets in order ends where the model is.

// maxLoggedSets bounds the change sets a node keeps; a router further
// behind gets the full state.
const maxLoggedSets = 10000

type rdmSet struct {
	index  uint64
	events [][]byte
}

// rdmLog holds the change sets of the entries from start on.
type rdmLog struct {
	mu    sync.Mutex
	start uint64
	sets  []rdmSet
}

func (l *rdmLog) add(s rdmSet) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sets = append(l.sets, s)
	if len(l.sets) > maxLoggedSets {
		drop := len(l.sets) - maxLoggedSets
		l.start = l.sets[drop-1].index + 1
		l.sets = append([]rdmSet(nil), l.sets[drop:]...)
	}
}

func (l *rdmLog) reset(start uint64) {
	l.mu.Lock()
	l.start, l.sets = start, nil
	l.mu.Unlock()
}

// since returns the sets after index, and whether the log covers every
// entry after it (false: the router needs the full state).
func (l *rdmLog) since(index uint64) ([]rdmSet, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if index+1 < l.start {
		return nil, false
	}
	var out []rdmSet
	for _, s := range l.sets {
		if s.index > index {
			out = append(out, s)
		}
	}
	return out, true
}

// subscription is a router's data model subscription on this node.
type subscription struct {
	until    time.Time
	index    uint64 // the router's index: what it has been sent up to
	timeline string
	pending  bool // a request to answer with a catch-up
}

// subscribe takes a router's subscription request; the router's sync
// goroutine answers it.
func (m *Manager) subscribe(r *Router, msg *ctrlchan.Message) {
	req, err := wire.DecodeSubscribe(msg.Body)
	if err != nil {
		m.log.Warn("router data model: a subscription request could not be read", "router", r.ID, "error", err)
		return
	}
	d := min(max(req.Duration, 10*time.Second), 360*time.Second)
	s := &r.edge
	s.mu.Lock()
	if !req.Renew || s.sub.until.IsZero() {
		s.sub.index, s.sub.timeline = req.CurrentIndex, req.TimelineID
	}
	s.sub.until = m.cfg.Now().Add(d)
	s.sub.pending = true
	s.mu.Unlock()
	s.signal()
}

// catchUp answers a subscription: the change sets since the router's
// index when this node has them all and the router is on the cluster's
// timeline, else the full state, shared with the other routers that need
// it (rdmstate.go), and the change sets after the index it was encoded at.
func (m *Manager) catchUp(r *Router) error {
	s := &r.edge
	s.mu.Lock()
	index, timeline := s.sub.index, s.sub.timeline
	s.mu.Unlock()
	keys := m.cfg.Store.Read().DataPlaneKeys()
	ours := ""
	if keys != nil {
		ours = keys.TimelineID
	}
	if ours != "" && timeline == ours && index > 0 {
		if sets, ok := m.rdm.since(index); ok {
			for _, set := range sets {
				if err := m.sendChangeSet(r, set); err != nil {
					return err
				}
			}
			return nil
		}
	}
	st, after := m.sharedFullState(ours)
	if err := m.send(r, ctrlchan.NewMessage(wire.DataStateType, st.body)); err != nil {
		return err
	}
	s.mu.Lock()
	s.sub.index, s.sub.timeline = st.index, ours
	s.mu.Unlock()
	m.log.Info("router data model: full state sent", "router", r.ID, "index", st.index, "bytes", len(st.body), "changeSetsAfter", len(after))
	for _, set := range after {
		if err := m.sendChangeSet(r, set); err != nil {
			return err
		}
	}
	return nil
}

// sendChangeSet sends one change set if the router's subscription wants it
// (active, and past the router's index).
func (m *Manager) sendChangeSet(r *Router, set rdmSet) error {
	s := &r.edge
	s.mu.Lock()
	want := !s.sub.until.IsZero() && m.cfg.Now().Before(s.sub.until) && set.index > s.sub.index
	if want {
		s.sub.index = set.index
	}
	s.mu.Unlock()
	if !want {
		return nil
	}
	return m.send(r, ctrlchan.NewMessage(wire.DataStateChangeSetType, wire.ChangeSet(set.index, false, set.events)))
}

// rdmChanges turns a run of entries' changes into change sets, logs them,
// and hands them to the routers' sync goroutines.
func (m *Manager) rdmChanges(sets []fsm.Changes, routers []*Router) {
	tx := m.cfg.Store.Read()
	for _, c := range sets {
		events := changeEvents(tx, c.Changes)
		if len(events) == 0 {
			continue
		}
		set := rdmSet{index: c.Index, events: events}
		m.rdm.add(set)
		for _, r := range routers {
			r.edge.enqueueSet(set)
		}
	}
}
