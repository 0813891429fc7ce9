// Package dpevent holds a node's data-plane events: circuits created,
// failed, ended and moved, terminators, routers and links coming and
// going, and the traffic routers report (docs/api-events.md, "Data-plane
// events"). They are node-local: the node that saw a thing records it, in
// a ring buffer bounded by count and age (Log), which the outlets read
// (the API's stream, webhooks, the events file, OpenZiti's management
// channel stream).
//
// What it must never do: go through Raft, or block the one who records
// (Append never waits on a reader: readers follow the buffer, and one that
// falls behind its retention loses the oldest events, and is told).
package dpevent

import "time"

// Namespaces, OpenZiti's names for the same kinds of event.
const (
	Circuit    = "circuit"
	Terminator = "terminator"
	Router     = "router"
	Link       = "link"
	Usage      = "usage"
)

// Actions.
const (
	Created      = "created"      // circuit, terminator
	Failed       = "failed"       // circuit: a dial that made no circuit
	Ended        = "ended"        // circuit
	Rerouted     = "rerouted"     // circuit: moved to another path
	Removed      = "removed"      // terminator
	Connected    = "connected"    // router
	Disconnected = "disconnected" // router
	Up           = "up"           // link
	Down         = "down"         // link
	// Usage events: a circuit's bytes in one router's report, and the
	// bytes of an identity and of a service in that report.
	UsageCircuit  = "circuit"
	UsageIdentity = "identity"
	UsageService  = "service"
)

// Causes of a failed circuit.
const (
	CauseNoTerminator  = "noTerminator"
	CauseNoPath        = "noPath"
	CauseAccessRefused = "accessRefused"
	CauseRouterError   = "routerError"
)

// Event is one data-plane event. The fields that do not apply to its
// namespace are left out of its JSON.
type Event struct {
	ID        int64     `json:"id"`
	Namespace string    `json:"namespace"`
	Action    string    `json:"action"`
	At        time.Time `json:"at"`
	// NodeID is the controller node that saw it.
	NodeID string `json:"nodeId"`

	CircuitID    string `json:"circuitId,omitempty"`
	IdentityID   string `json:"identityId,omitempty"`
	IdentityName string `json:"identityName,omitempty"`
	ServiceID    string `json:"serviceId,omitempty"`
	ServiceName  string `json:"serviceName,omitempty"`
	TerminatorID string `json:"terminatorId,omitempty"`
	// RouterID is the router the event is about: the circuit's ingress, the
	// terminator's, the router connecting, the one reporting usage.
	RouterID   string `json:"routerId,omitempty"`
	RouterName string `json:"routerName,omitempty"`
	// Path is a circuit's routers (ids), ingress first; PathNames their
	// names; Links the links between them. A reroute's PreviousPath is
	// the path it left.
	Path         []string `json:"path,omitempty"`
	PathNames    []string `json:"pathNames,omitempty"`
	Links        []string `json:"links,omitempty"`
	PreviousPath []string `json:"previousPath,omitempty"`
	// Cause is why a circuit failed (the Cause* names), Reason the detail
	// (and why a circuit ended, moved, or a router or a link went).
	Cause  string `json:"cause,omitempty"`
	Reason string `json:"reason,omitempty"`
	// SetupMillis is how long a circuit took to route; DurationMillis how
	// long an ended one lived.
	SetupMillis    *int64 `json:"setupMillis,omitempty"`
	DurationMillis *int64 `json:"durationMillis,omitempty"`
	// BytesIn are the bytes the dialing client sent into the network (read
	// at its router: ingress.rx), BytesOut those the host sent back (read at
	// the host's router: egress.rx): of one report for a usage event, in
	// all reported so far for an ended circuit.
	BytesIn  *uint64 `json:"bytesIn,omitempty"`
	BytesOut *uint64 `json:"bytesOut,omitempty"`
	// Usage are a usage report's counters by OpenZiti's names
	// (ingress.rx, egress.tx, fabric.rx, ...); IntervalStart and
	// IntervalSeconds the interval they count.
	Usage           map[string]uint64 `json:"usage,omitempty"`
	IntervalStart   *time.Time        `json:"intervalStart,omitempty"`
	IntervalSeconds int64             `json:"intervalSeconds,omitempty"`
	Circuits        int64             `json:"circuits,omitempty"` // usage by identity or service: how many circuits

	LinkID      string `json:"linkId,omitempty"`
	SrcRouterID string `json:"srcRouterId,omitempty"`
	DstRouterID string `json:"dstRouterId,omitempty"`
	Protocol    string `json:"protocol,omitempty"`

	// Terminators: the host, its binding and address.
	HostID     string `json:"hostId,omitempty"`
	InstanceID string `json:"instanceId,omitempty"`
	Binding    string `json:"binding,omitempty"`
	Address    string `json:"address,omitempty"`

	// Routers: where one connected from, its version.
	RemoteAddress string `json:"remoteAddress,omitempty"`
	Version       string `json:"version,omitempty"`
}

// Uint64 is a pointer to v, for the optional counters.
func Uint64(v uint64) *uint64 { return &v }

// Int64 is a pointer to v.
func Int64(v int64) *int64 { return &v }
