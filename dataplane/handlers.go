package dataplane

import (
	"edgectl/ctrlchan"
)

// handlers are the message handlers of router r's channel.
func (m *Manager) handlers(r *Router) map[int32]ctrlchan.Handler {
	h := map[int32]ctrlchan.Handler{}
	return h
}

// unhandled counts and logs a message no handler takes: the router's
// reports this node does not use (metrics, link state, interfaces).
func (m *Manager) unhandled(ch *ctrlchan.Channel, msg *ctrlchan.Message) {
	m.metrics.received.WithLabelValues(contentName(msg.ContentType)).Inc()
	m.log.Debug("router message not handled", "type", msg.ContentType, "bytes", len(msg.Body))
}

// onConnect starts what follows a router's admission.
func (m *Manager) onConnect(r *Router) {}
