package dataplane

import (
	"context"

	"edgectl/auth"
	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
)

// handlers are the message handlers of router r's channel.
func (m *Manager) handlers(r *Router) map[int32]ctrlchan.Handler {
	count := func(h ctrlchan.Handler) ctrlchan.Handler {
		return func(ch *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.metrics.received.WithLabelValues(contentName(msg.ContentType)).Inc()
			h(ch, msg)
		}
	}
	return map[int32]ctrlchan.Handler{
		wire.APISessionHeartbeatType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) { m.heartbeat(r, msg) }),
		wire.RequestClientReSyncType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.log.Info("edge sync: the router asks for the full state again", "router", r.ID, "reason", resyncReason(msg.Body))
			r.edge.resync()
		}),
		wire.CreateTerminatorV2RequestType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.submit("requests/"+r.ID, requestsPerRouter, func() { m.createTerminator(r, msg) })
		}),
		wire.UpdateTerminatorRequestType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.submit("requests/"+r.ID, requestsPerRouter, func() { m.terminatorRequest(r, msg) })
		}),
		wire.RemoveTerminatorRequestType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.submit("requests/"+r.ID, requestsPerRouter, func() { m.terminatorRequest(r, msg) })
		}),
		wire.HealthEventType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.submit("requests/"+r.ID, requestsPerRouter, func() { m.terminatorRequest(r, msg) })
		}),
		wire.RemoveTerminatorsRequestType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.submit("requests/"+r.ID, requestsPerRouter, func() { m.removeTerminators(r, msg) })
		}),
		wire.CreateCircuitV2RequestType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.submit("dials/"+r.ID, dialsPerRouter, func() { m.dial(r, msg) })
		}),
		wire.RouteResultType:                 count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) { m.routeResult(r, msg) }),
		wire.FaultType:                       count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) { m.fault(r, msg) }),
		wire.CircuitConfirmationType:         count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) { m.confirmCircuits(r, msg) }),
		wire.SubscribeToDataModelRequestType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) { m.subscribe(r, msg) }),
		wire.EnrollmentExtendRouterType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.submit("requests/"+r.ID, requestsPerRouter, func() { m.extend(r, msg) })
		}),
		wire.EnrollmentExtendRouterVerify: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.submit("requests/"+r.ID, requestsPerRouter, func() { m.extendVerify(r, msg) })
		}),
		wire.RouterLinksType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) { m.routerLinks(r, msg) }),
		wire.VerifyRouterType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.submit("requests/"+r.ID, requestsPerRouter, func() { m.verifyRouter(r, msg) })
		}),
		wire.LinkStateType: count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) { m.linkState(r, msg) }),
		wire.MetricsType:   count(func(_ *ctrlchan.Channel, msg *ctrlchan.Message) { m.linkMetrics(r, msg) }),
		// The router reports its network interfaces and waits for a result;
		// this node does not keep them (docs/openziti.md).
		wire.UpdateRouterInterfacesType: count(func(ch *ctrlchan.Channel, msg *ctrlchan.Message) {
			_ = ch.Reply(msg, ctrlchan.NewResult(true, ""))
		}),
	}
}

// unhandled counts and logs a message no handler takes: the router's
// reports this node does not use (metrics, links, connect events).
func (m *Manager) unhandled(ch *ctrlchan.Channel, msg *ctrlchan.Message) {
	m.metrics.received.WithLabelValues(contentName(msg.ContentType)).Inc()
	m.log.Trace("router message not handled", "type", msg.ContentType, "bytes", len(msg.Body))
}

// onConnect tells the routers of each other's link listeners, and starts
// the edge sync of an edge router.
func (m *Manager) onConnect(r *Router) {
	m.announce(r)
	if r.Kind.Table != "edgeRouters" {
		return
	}
	m.goAttach(func() { m.runSync(r) })
}

// heartbeat takes the API sessions a router reports in use: each known one
// counts as active now; the router is told to drop the unknown ones.
func (m *Manager) heartbeat(r *Router, msg *ctrlchan.Message) {
	tokens, err := wire.DecodeAPISessionHeartbeat(msg.Body)
	if err != nil {
		m.log.Warn("an API session heartbeat could not be read", "router", r.ID, "error", err)
		return
	}
	tx := m.cfg.Store.Read()
	now := m.cfg.Now().UTC()
	var gone []string
	for _, t := range tokens {
		s := tx.APISessionByTokenHash(auth.HashToken(t))
		if s == nil {
			gone = append(gone, t)
			continue
		}
		if m.cfg.Activity != nil {
			m.cfg.Activity.Touch(s.ID, now)
		}
	}
	if len(gone) > 0 {
		r.edge.enqueue(ctrlchan.NewMessage(wire.APISessionRemovedType, wire.APISessionRemoved(gone, nil)), 0)
	}
}

// send sends msg to router r, counting it. Routes, unroutes and faults
// are urgent: they overtake a large data model queued for the router, and
// their send never waits, so a handler on one router's reader that tells
// another router of a circuit or a link never waits for that router.
func (m *Manager) send(r *Router, msg *ctrlchan.Message) error {
	m.metrics.sent.WithLabelValues(contentName(msg.ContentType)).Inc()
	msg.Priority = priorityOf(msg.ContentType)
	return r.channel().Send(msg)
}

// request sends msg to router r and waits for its reply.
func (m *Manager) request(ctx context.Context, r *Router, msg *ctrlchan.Message) (*ctrlchan.Message, error) {
	m.metrics.sent.WithLabelValues(contentName(msg.ContentType)).Inc()
	msg.Priority = priorityOf(msg.ContentType)
	return r.channel().Request(ctx, msg)
}

// priorityOf is the priority of the messages of content type ct.
func priorityOf(ct int32) ctrlchan.Priority {
	switch ct {
	case wire.RouteType, wire.UnrouteType, wire.FaultType:
		return ctrlchan.Urgent
	}
	return ctrlchan.Standard
}

func resyncReason(b []byte) string {
	r, _ := wire.DecodeRequestClientReSync(b)
	return r
}
