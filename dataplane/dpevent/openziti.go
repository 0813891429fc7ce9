package dpevent

import (
	"maps"
	"slices"
	"time"
)

// OpenZiti's event formats (its controller/event package, v1.7.2): the
// same events as OpenZiti's controller writes them to its event files and
// streams them on the management channel, for the tools that read those.
// What differs is in docs/api-events.md.

// OpenZiti's circuit failure causes for edgectl's.
var zitiCauses = map[string]string{
	CauseNoTerminator:  "NO_TERMINATORS",
	CauseNoPath:        "NO_PATH",
	CauseRouterError:   "ROUTER_ERR_GENERIC",
	CauseAccessRefused: "ACCESS_REFUSED", // OpenZiti refuses these before a circuit: it has no cause for them
}

// OpenZitiNamespace is the OpenZiti namespace e is written in ("" for an
// event OpenZiti has no format for: usage by identity or service).
func OpenZitiNamespace(e *Event) string {
	if e.Namespace == Usage && e.Action != UsageCircuit {
		return ""
	}
	return e.Namespace
}

// OpenZiti returns e in OpenZiti's format (usage in version usageVersion, 2
// or 3: version 2 is one event per counter), or nil when OpenZiti has no
// format for it.
func OpenZiti(e *Event, usageVersion int) []any {
	ts := e.At
	switch e.Namespace {
	case Circuit:
		types := map[string]string{Created: "created", Failed: "failed", Ended: "deleted", Rerouted: "pathUpdated"}
		v := map[string]any{
			"namespace": "circuit", "event_src_id": e.NodeID, "timestamp": ts, "version": 2,
			"event_type": types[e.Action], "circuit_id": e.CircuitID, "client_id": e.IdentityID,
			"service_id": e.ServiceID, "terminator_id": e.TerminatorID, "instance_id": e.InstanceID,
			"path":       map[string]any{"nodes": nonNil(e.Path), "links": nonNil(e.Links), "ingress_id": "", "egress_id": ""},
			"link_count": len(e.Links), "tags": map[string]string{"clientId": e.IdentityID, "serviceId": e.ServiceID},
		}
		if e.SetupMillis != nil {
			v["creation_timespan"] = time.Duration(*e.SetupMillis) * time.Millisecond
		}
		if e.DurationMillis != nil {
			v["duration"] = time.Duration(*e.DurationMillis) * time.Millisecond
		}
		if e.Action == Failed {
			v["failure_cause"] = zitiCauses[e.Cause]
		}
		return []any{v}
	case Terminator:
		types := map[string]string{Created: "created", Removed: "deleted"}
		return []any{map[string]any{
			"namespace": "terminator", "event_src_id": e.NodeID, "timestamp": ts, "event_type": types[e.Action],
			"service_id": e.ServiceID, "terminator_id": e.TerminatorID, "router_id": e.RouterID, "host_id": e.HostID,
			"instance_id": e.InstanceID, "router_online": false, "precedence": "", "static_cost": 0, "dynamic_cost": 0,
			"total_terminators": 0, "usable_default_terminators": 0, "usable_required_terminators": 0,
		}}
	case Router:
		types := map[string]string{Connected: "router-online", Disconnected: "router-offline"}
		return []any{map[string]any{
			"namespace": "router", "timestamp": ts, "event_src_id": e.NodeID, "event_type": types[e.Action],
			"router_id": e.RouterID, "router_online": e.Action == Connected,
		}}
	case Link:
		types := map[string]string{Up: "routerLinkNew", Down: "fault"}
		v := map[string]any{
			"namespace": "link", "event_src_id": e.NodeID, "timestamp": ts, "event_type": types[e.Action], "link_id": e.LinkID,
		}
		for k, s := range map[string]string{"src_router_id": e.SrcRouterID, "dst_router_id": e.DstRouterID, "protocol": e.Protocol} {
			if s != "" {
				v[k] = s
			}
		}
		return []any{v}
	case Usage:
		if e.Action != UsageCircuit {
			return nil
		}
		start := int64(0)
		if e.IntervalStart != nil {
			start = e.IntervalStart.Unix()
		}
		tags := map[string]string{"clientId": e.IdentityID, "serviceId": e.ServiceID, "hostId": e.HostID}
		if usageVersion == 2 {
			var out []any
			for _, k := range slices.Sorted(maps.Keys(e.Usage)) {
				out = append(out, map[string]any{
					"namespace": "usage", "event_src_id": e.NodeID, "timestamp": ts, "version": 2, "event_type": "usage." + k,
					"source_id": e.RouterID, "circuit_id": e.CircuitID, "usage": e.Usage[k], "interval_start_utc": start,
					"interval_length": e.IntervalSeconds, "tags": tags,
				})
			}
			return out
		}
		return []any{map[string]any{
			"namespace": "usage", "event_src_id": e.NodeID, "timestamp": ts, "version": 3, "source_id": e.RouterID,
			"circuit_id": e.CircuitID, "usage": e.Usage, "interval_start_utc": start, "interval_length": e.IntervalSeconds,
			"tags": tags,
		}}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
