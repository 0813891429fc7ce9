package dataplane

import (
	"context"

	"edgectl/auth"
	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
)

// handlers are the message handlers of router r's channel. A handler runs
// on the router's reader when it never waits: what it sends another router
// is urgent (send), so a slow router holds up no other's reader. One that
// waits (a Raft write, a request, a dial's routes) is submitted to the
// router's pools (background.go), bounded per router and stopped by Close.
func (m *Manager) handlers(r *Router) map[int32]ctrlchan.Handler {
	// onReader runs h on the reader; async on the router's pool named pool.
	onReader := func(h func(*Router, *ctrlchan.Message)) ctrlchan.Handler {
		return func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.metrics.received.WithLabelValues(contentName(msg.ContentType)).Inc()
			h(r, msg)
		}
	}
	async := func(pool string, limit int, h func(*Router, *ctrlchan.Message)) ctrlchan.Handler {
		return func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.metrics.received.WithLabelValues(contentName(msg.ContentType)).Inc()
			m.submit(pool+"/"+r.ID, limit, func() { h(r, msg) })
		}
	}
	// bounded is async on the requests pool for a terminator create, when
	// the node takes one more (admitCreate); busy answers it otherwise.
	bounded := func(h, busy func(*Router, *ctrlchan.Message)) ctrlchan.Handler {
		return func(_ *ctrlchan.Channel, msg *ctrlchan.Message) {
			m.metrics.received.WithLabelValues(contentName(msg.ContentType)).Inc()
			if !m.admitCreate() {
				busy(r, msg)
				return
			}
			m.submit("requests/"+r.ID, requestsPerRouter, func() {
				defer m.creates.Add(-1)
				h(r, msg)
			})
		}
	}
	return map[int32]ctrlchan.Handler{
		wire.APISessionHeartbeatType:         onReader(m.heartbeat),
		wire.RequestClientReSyncType:         onReader(m.resyncAsked),
		wire.RouteResultType:                 onReader(m.routeResult),
		wire.FaultType:                       onReader(m.fault),
		wire.CircuitConfirmationType:         onReader(m.confirmCircuits),
		wire.SubscribeToDataModelRequestType: onReader(m.subscribe),
		wire.RouterLinksType:                 onReader(m.routerLinks),
		wire.LinkStateType:                   onReader(m.linkState),
		wire.MetricsType:                     onReader(m.metricsReport),
		// The router reports its network interfaces and waits for a result;
		// this node does not keep them (docs/openziti.md).
		wire.UpdateRouterInterfacesType: onReader(func(r *Router, msg *ctrlchan.Message) {
			_ = m.reply(r, msg, ctrlchan.NewResult(true, ""))
		}),

		wire.CreateCircuitV2RequestType:    async("dials", dialsPerRouter, m.dial),
		wire.CreateTerminatorV2RequestType: bounded(m.createTerminator, m.createTerminatorBusy),
		wire.UpdateTerminatorRequestType:   async("requests", requestsPerRouter, m.terminatorRequest),
		wire.RemoveTerminatorRequestType:   async("requests", requestsPerRouter, m.terminatorRequest),
		wire.HealthEventType:               async("requests", requestsPerRouter, m.terminatorRequest),
		wire.RemoveTerminatorsRequestType:  async("requests", requestsPerRouter, m.removeTerminators),
		// A router's own tunneler (tunnel.go).
		wire.CreateTunnelCircuitV2RequestType:    async("dials", dialsPerRouter, m.tunnelDial),
		wire.CreateTunnelTerminatorRequestV2Type: bounded(m.createTunnelTerminator, m.createTunnelTerminatorBusy),
		wire.UpdateTunnelTerminatorRequestType:   async("requests", requestsPerRouter, m.updateTunnelTerminator),
		wire.TunnelHealthEventType:               async("requests", requestsPerRouter, m.tunnelHealthEvent),

		wire.EnrollmentExtendRouterType:   async("requests", requestsPerRouter, m.extend),
		wire.EnrollmentExtendRouterVerify: async("requests", requestsPerRouter, m.extendVerify),
		wire.VerifyRouterType:             async("requests", requestsPerRouter, m.verifyRouter),
	}
}

// resyncAsked takes a router's request for the full state again.
func (m *Manager) resyncAsked(r *Router, msg *ctrlchan.Message) {
	m.log.Info("edge sync: the router asks for the full state again", "router", r.ID, "reason", resyncReason(msg.Body))
	r.edge.resync()
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
	m.goAttach(func() { m.reconcile(r, r.returned) })
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

// reply answers router r's request req with msg, counting it.
func (m *Manager) reply(r *Router, req, msg *ctrlchan.Message) error {
	m.metrics.sent.WithLabelValues(contentName(msg.ContentType)).Inc()
	return r.channel().Reply(req, msg)
}

// request sends msg to router r and waits for its reply, counting both.
func (m *Manager) request(ctx context.Context, r *Router, msg *ctrlchan.Message) (*ctrlchan.Message, error) {
	m.metrics.sent.WithLabelValues(contentName(msg.ContentType)).Inc()
	msg.Priority = priorityOf(msg.ContentType)
	reply, err := r.channel().Request(ctx, msg)
	if err == nil {
		m.metrics.received.WithLabelValues(contentName(reply.ContentType)).Inc()
	}
	return reply, err
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
