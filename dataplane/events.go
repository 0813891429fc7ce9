package dataplane

import (
	"sync"
	"time"

	"edgectl/fsm"
)

// Router events go to the cluster's event log (the router namespace)
// through Raft, from a queue: a channel's life never waits for a write. A
// full queue drops the event (counted). Refusals are throttled: one event
// per reason and certificate per minute, so that a client that keeps
// knocking cannot flood the log; the refused-routers metric counts them all.

const (
	eventQueue       = 256
	refusalQuiet     = time.Minute
	maxRefusalsNoted = 1024
)

type eventReporter struct {
	queue chan fsm.RouterEvent

	mu      sync.Mutex
	refused map[string]time.Time // reason + fingerprint → last reported
}

// event queues a router event for the log.
func (m *Manager) event(ev fsm.RouterEvent) {
	m.routerEvent(ev)
	if m.cfg.Writer == nil {
		return
	}
	ev.NodeID = m.cfg.NodeID
	select {
	case m.events.queue <- ev:
	default:
		m.metrics.eventsDropped.Inc()
	}
}

// refusedEvent queues the event of a refused connection unless the same
// refusal was reported within the last minute.
func (m *Manager) refusedEvent(ref *refusal, remote string) {
	if !m.refusalNew(ref.reason + "/" + ref.fingerprint) {
		return
	}
	detail := map[string]any{"reason": ref.reason, "detail": ref.detail, "remoteAddress": remote}
	if ref.fingerprint != "" {
		detail["fingerprint"] = ref.fingerprint
	}
	m.event(fsm.RouterEvent{Action: fsm.RouterRefused, RouterID: ref.routerID, Kind: ref.kind, Detail: detail})
}

// reportEvents writes the queued events until the Manager stops.
func (m *Manager) reportEvents() {
	for {
		select {
		case <-m.stop:
			return
		case ev := <-m.events.queue:
			ctx, cancel := m.timeout(10 * time.Second)
			if _, err := m.cfg.Writer.Do(ctx, fsm.CmdRouterEvent, ev); err != nil {
				m.log.Debug("router event not recorded", "action", ev.Action, "router", ev.RouterID, "error", err)
			}
			cancel()
		}
	}
}

// refusalNew says whether the refusal of key was not reported within the
// last minute, and notes it now.
func (m *Manager) refusalNew(key string) bool {
	now := time.Now()
	m.events.mu.Lock()
	defer m.events.mu.Unlock()
	if last, ok := m.events.refused[key]; ok && now.Sub(last) < refusalQuiet {
		return false
	}
	if len(m.events.refused) >= maxRefusalsNoted {
		m.events.refused = map[string]time.Time{}
	}
	m.events.refused[key] = now
	return true
}
