package dataplane

import (
	"slices"
	"time"
)

// Routers keep a legacy API session with the node that last sent it, and
// send that session's dials and terminator requests there only (OpenZiti's
// controller affinity; every node sends every session). When a member stops
// answering, every node that still runs sends its routers all the API
// sessions again, so that the sessions a dead or paused node had sent last
// move to a live one and new dials go through the survivors.

// watchPeers resends the API sessions when a member goes offline.
func (m *Manager) watchPeers(every time.Duration) {
	if m.cfg.OfflinePeers == nil {
		<-m.stop
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var offline []string
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		now := m.cfg.OfflinePeers()
		slices.Sort(now)
		gone := false
		for _, id := range now {
			if !slices.Contains(offline, id) {
				gone = true
			}
		}
		offline = now
		if !gone {
			continue
		}
		m.log.Info("a member stopped answering: routers get the API sessions from this node", "offline", now)
		for _, r := range m.edgeRouters() {
			r.edge.resync()
		}
	}
}
