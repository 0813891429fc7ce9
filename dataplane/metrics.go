package dataplane

import (
	"strconv"

	"edgectl/ctrlchan"
	"edgectl/dataplane/dpevent"
	"edgectl/dataplane/wire"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Manager's Prometheus metrics (Collectors registers them).
type metrics struct {
	connected prometheus.Gauge
	refused   *prometheus.CounterVec
	received  *prometheus.CounterVec
	sent      *prometheus.CounterVec
	extended  prometheus.Counter
	// eventsDropped counts router events not recorded (a full queue).
	eventsDropped prometheus.Counter
	healthEvents  *prometheus.CounterVec
	dials         *prometheus.CounterVec
	dialSeconds   prometheus.Histogram
	reroutes      *prometheus.CounterVec
	// failures counts dials that made no circuit, by cause; serviceBytes
	// the bytes of this node's circuits the routers reported, by service.
	failures     *prometheus.CounterVec
	serviceBytes *prometheus.CounterVec
	// refusalsUnlogged counts refused connections and requests whose log
	// line the sampler left out (logsample.go).
	refusalsUnlogged prometheus.Counter
	// handshakeFailures counts TLS handshakes on the API port that failed
	// (HTTPErrorLog).
	handshakeFailures prometheus.Counter
	// requestsRefused counts the requests of connected routers refused
	// because they reach beyond the router's own (requestcheck.go).
	requestsRefused *prometheus.CounterVec
	// fullStates counts the router data model's full states sent, by
	// whether this one was encoded for it or shared (rdmstate.go).
	fullStates *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgectl_routers_connected",
			Help: "Routers with an open control channel to this node."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_routers_refused_total",
			Help: "Control-channel connections this node refused, by reason."}, []string{"reason"}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_router_messages_received_total",
			Help: "Control-channel messages received from routers, by content type."}, []string{"type"}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_router_messages_sent_total",
			Help: "Control-channel messages sent to routers, by content type."}, []string{"type"}),
		extended: prometheus.NewCounter(prometheus.CounterOpts{Name: "edgectl_router_certificates_extended_total",
			Help: "Router certificates this node extended over the control channel."}),
		dials: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_circuit_dials_total",
			Help: "Circuits routers asked this node for, by result (routed, refused)."}, []string{"result"}),
		dialSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "edgectl_circuit_dial_seconds",
			Help:    "Time from a router's dial request to this node's answer, for routed circuits.",
			Buckets: []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1}}),
		reroutes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_circuit_reroutes_total",
			Help: "Circuits this node moved to another path after a link or router of theirs failed, by result (moved; ended: no other path; kept: no other path while a router of it is away, its path unbroken)."}, []string{"result"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_circuit_failures_total",
			Help: "Dials this node made no circuit for, by cause: noTerminator, noPath, accessRefused, routerError."}, []string{"cause"}),
		serviceBytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_service_bytes_total",
			Help: "Bytes of this node's circuits the routers reported, by service: in is what the dialing clients sent, out what the hosts sent back."}, []string{"service_id", "service", "direction"}),
		healthEvents: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_terminator_health_checks_total",
			Help: "Health check results routers reported for the terminators of their hosts, by result."}, []string{"passed"}),
		refusalsUnlogged: prometheus.NewCounter(prometheus.CounterOpts{Name: "edgectl_router_refusals_unlogged_total",
			Help: "Refused control-channel connections and router requests not written to the log (sampled: the first 5 per reason and source a minute are, then one summary line)."}),
		handshakeFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "edgectl_tls_handshake_failures_total",
			Help: "TLS handshakes on the API port that failed (routers and clients share it); their log lines are sampled as refusals are."}),
		requestsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_router_requests_refused_total",
			Help: "Requests of connected routers refused because they reach beyond what the router or its client may do, by request and reason."}, []string{"request", "reason"}),
		fullStates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgectl_router_data_model_full_states_total",
			Help: "Full router data models sent to routers, by source: encoded (the model read and encoded for it) or shared (an encoding made for another router, with the change sets since)."}, []string{"source"}),
		eventsDropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "edgectl_router_events_dropped_total",
			Help: "Router events (connected, disconnected, refused, certificate extended) not recorded: the queue to the event log was full."}),
	}
	// Every reason exported from the start, for alert rules and dashboards.
	for _, r := range []string{reasonProtocol, reasonCertificate, reasonUnknown, reasonDisabled, reasonIDMismatch,
		reasonDuplicate, reasonShuttingDown, reasonModelNotReady} {
		m.refused.WithLabelValues(r)
	}
	for _, rr := range refusedRequests {
		m.requestsRefused.WithLabelValues(rr[0], rr[1])
	}
	for _, r := range []string{"routed", "refused"} {
		m.dials.WithLabelValues(r)
	}
	for _, r := range []string{"moved", "ended", "kept"} {
		m.reroutes.WithLabelValues(r)
	}
	for _, s := range []string{"encoded", "shared"} {
		m.fullStates.WithLabelValues(s)
	}
	for _, c := range []string{dpevent.CauseNoTerminator, dpevent.CauseNoPath, dpevent.CauseAccessRefused, dpevent.CauseRouterError} {
		m.failures.WithLabelValues(c)
	}
	return m
}

// Collectors are the Manager's metrics, for the node's /metrics.
func (m *Manager) Collectors() []prometheus.Collector {
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edgectl_router_sync_lag_entries",
		Help: "Raft entries this node applied past the oldest change not yet sent to every connected edge router (0: all sent)."}, m.syncLag)
	return []prometheus.Collector{lag, m.metrics.connected, m.metrics.refused, m.metrics.received, m.metrics.sent, m.metrics.extended, m.metrics.eventsDropped, m.metrics.healthEvents, m.metrics.dials, m.metrics.dialSeconds, m.metrics.reroutes,
		m.metrics.failures, m.metrics.serviceBytes,
		m.metrics.refusalsUnlogged, m.metrics.handshakeFailures, m.metrics.requestsRefused, m.metrics.fullStates,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edgectl_router_links", Help: "Router links reported to this node."},
			func() float64 { return float64(len(m.Links())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edgectl_circuits", Help: "Circuits this node routed that are open."},
			func() float64 { return float64(m.circuits.count()) })}
}

// contentName labels a content type in edgectl_router_messages_*_total.
func contentName(ct int32) string {
	if n, ok := contentNames[ct]; ok {
		return n
	}
	return strconv.Itoa(int(ct))
}

// contentNames names every content type this node handles, sends, replies
// with or gets as an answer (TestContentNames_EveryHandledAndSentTypeHasOne
// walks the handlers table and the messages built here). A name once
// exported stays: dashboards and alerts use it.
var contentNames = map[int32]string{
	// The channel's own.
	ctrlchan.ContentHeartbeat: "heartbeat", ctrlchan.ContentPing: "ping", ctrlchan.ContentResult: "result",
	wire.ErrorType: "error",

	// The edge sync and the data model.
	wire.ServerHelloType: "server_hello", wire.ClientHelloType: "client_hello", wire.APISessionAddedType: "api_session_added",
	wire.APISessionUpdatedType: "api_session_updated", wire.APISessionRemovedType: "api_session_removed",
	wire.SessionRemovedType: "session_removed", wire.APISessionHeartbeatType: "api_session_heartbeat",
	wire.RequestClientReSyncType: "request_client_resync", wire.ConnectEventsType: "connect_events",
	wire.DataStateType: "data_state", wire.DataStateChangeSetType: "data_state_change_set",
	wire.SubscribeToDataModelRequestType: "subscribe_to_data_model", wire.CurrentIndexMessageType: "current_index",
	wire.ValidateDataStateRequestType: "validate_data_state_request", wire.ValidateDataStateResponseType: "validate_data_state_response",

	// Enrollment.
	wire.EnrollmentExtendRouterType: "extend_router_request", wire.EnrollmentExtendRouterVerify: "extend_router_verify",
	wire.EnrollmentCertsResponseType: "enrollment_certs",

	// Terminators.
	wire.CreateTerminatorV2RequestType: "create_terminator_v2_request", wire.CreateTerminatorV2ResponseType: "create_terminator_v2_response",
	wire.UpdateTerminatorRequestType: "update_terminator_request", wire.UpdateTerminatorResponseType: "update_terminator_response",
	wire.RemoveTerminatorRequestType: "remove_terminator_request", wire.RemoveTerminatorResponseType: "remove_terminator_response",
	wire.HealthEventType: "health_event", wire.RemoveTerminatorsRequestType: "remove_terminators_request",
	wire.ValidateTerminatorsV2RequestType:  "validate_terminators_v2_request",
	wire.ValidateTerminatorsV2ResponseType: "validate_terminators_v2_response",

	// Circuits.
	wire.CreateCircuitV2RequestType: "create_circuit_v2_request", wire.CreateCircuitV2ResponseType: "create_circuit_v2_response",
	wire.RouteType: "route", wire.UnrouteType: "unroute", wire.RouteResultType: "route_result", wire.FaultType: "fault",
	wire.CircuitConfirmationType: "circuit_confirmation",

	// A router's own tunneler.
	wire.CreateTunnelTerminatorRequestV2Type:  "create_tunnel_terminator_v2_request",
	wire.CreateTunnelTerminatorResponseV2Type: "create_tunnel_terminator_v2_response",
	wire.UpdateTunnelTerminatorRequestType:    "update_tunnel_terminator_request",
	wire.UpdateTunnelTerminatorResponseType:   "update_tunnel_terminator_response",
	wire.TunnelHealthEventType:                "tunnel_health_event",
	wire.CreateTunnelCircuitV2RequestType:     "create_tunnel_circuit_v2_request",
	wire.CreateTunnelCircuitV2ResponseType:    "create_tunnel_circuit_v2_response",

	// Links, the router's reports, inspections and the controllers' addresses.
	wire.RouterLinksType: "router_links", wire.VerifyRouterType: "verify_router", wire.LinkStateType: "link_state",
	wire.PeerStateChangesType: "peer_state_changes", wire.MetricsType: "metrics", wire.AlertsType: "alerts",
	wire.UpdateRouterInterfacesType: "update_router_interfaces", wire.UpdateCtrlAddressesType: "update_ctrl_addresses",
	wire.InspectRequestType: "inspect_request", wire.InspectResponseType: "inspect_response",
}
