package dataplane

import (
	"edgectl/fsm"
	"edgectl/policy"
	"edgectl/store"
)

// A connected router's requests are held to what the router and its client
// may do, as strictly as its certificate is: a terminator is made only for
// a service its host may Bind, and changed or removed only by the router
// that holds it; a circuit's faults, route results and confirmations count
// only from a router of its path, a link's faults only from one of its
// ends. A request that reaches beyond is refused before anything is
// proposed to Raft, answered with the protocol's own error (the edge error
// codes, the terminator result codes, a failed channel result; a fault or a
// result, which has no answer, is dropped), counted in
// edgectl_router_requests_refused_total{request, reason}, and logged
// sampled. One that acts on another router's terminators, circuits or links
// is a security event: it is also recorded in the event log (a router
// "refused" event whose detail names the request), at most once a minute
// per router, request and reason.

// Requests (the request label).
const (
	reqCreateTerminator  = "create_terminator"
	reqUpdateTerminator  = "update_terminator"
	reqRemoveTerminator  = "remove_terminator"
	reqHealthEvent       = "health_event"
	reqRemoveTerminators = "remove_terminators"
	reqDial              = "dial"
	reqFault             = "fault"
	reqRouteResult       = "route_result"
	reqConfirmation      = "circuit_confirmation"
	reqLinkState         = "link_state"
)

// Reasons (the reason label).
const (
	// whyMayNotBind: no service policy gives the host Bind on the service.
	whyMayNotBind = "may_not_bind"
	// whyRouterNotAllowed: the client may not use this router for the
	// service (edge router policies).
	whyRouterNotAllowed = "router_not_allowed"
	// whyAnotherHost: a terminator of this router, but of another host or
	// service, or an address taken by one.
	whyAnotherHost = "another_host"
	// whyAnotherRouter: a terminator, circuit or link of other routers.
	whyAnotherRouter = "another_router"
	// whyBusy: the node has as many terminator creates under way as it
	// takes; the router retries (terminators.go).
	whyBusy = "busy"
)

// refusedRequests lists the label pairs exported from the start.
var refusedRequests = [][2]string{
	{reqCreateTerminator, whyMayNotBind}, {reqCreateTerminator, whyRouterNotAllowed},
	{reqCreateTerminator, whyAnotherHost}, {reqCreateTerminator, whyAnotherRouter}, {reqCreateTerminator, whyBusy},
	{reqUpdateTerminator, whyAnotherHost}, {reqUpdateTerminator, whyAnotherRouter},
	{reqRemoveTerminator, whyAnotherHost}, {reqRemoveTerminator, whyAnotherRouter},
	{reqHealthEvent, whyAnotherHost}, {reqHealthEvent, whyAnotherRouter},
	{reqRemoveTerminators, whyAnotherRouter},
	{reqDial, whyRouterNotAllowed},
	{reqFault, whyAnotherRouter}, {reqRouteResult, whyAnotherRouter}, {reqConfirmation, whyAnotherRouter},
	{reqLinkState, whyAnotherRouter},
}

// refuseRequest counts and logs (sampled) router r's refused request;
// security marks an attempt on another router's terminators, circuits or
// links, which is also recorded in the event log.
func (m *Manager) refuseRequest(r *Router, request, reason, detail string, security bool) {
	m.metrics.requestsRefused.WithLabelValues(request, reason).Inc()
	m.sampler.warn(request+"/"+reason, r.ID, "router request refused", "router", r.ID, "request", request, "reason", reason, "detail", detail)
	if !security {
		return
	}
	if !m.refusalNew("request/" + r.ID + "/" + request + "/" + reason) {
		return
	}
	m.event(fsm.RouterEvent{Action: fsm.RouterRefused, RouterID: r.ID, Kind: r.Kind.Table,
		Detail: map[string]any{"request": request, "reason": reason, "detail": detail}})
}

// mayBind says whether a service policy gives identity Bind on service
// now (posture is judged when the session is made, and again by the
// sweeps that end sessions).
func mayBind(tx *store.Tx, identityID, serviceID string) bool {
	for _, g := range policy.PairGrants(tx, identityID, serviceID) {
		if g.Type == policy.Bind {
			return true
		}
	}
	return false
}
