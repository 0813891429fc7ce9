package dataplane

import (
	"errors"
	"sync"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/dpevent"
	"edgectl/dataplane/path"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"
)

// Data-plane events (package dpevent, docs/api-events.md): what this node
// saw of circuits, terminators, routers and links, and the traffic of its
// circuits, appended to Config.Events (nil: none are kept). Each event
// site in the other files is one call to a function here.

// Bounds on what is kept to put usage reports to circuits: a circuit's
// last report comes after its end (routers report each interval), so an
// ended circuit is remembered for a while.
const (
	endedKept    = 4096
	endedKeptFor = 5 * time.Minute
)

// dpState is what the events need beyond the circuit table.
type dpState struct {
	mu    sync.Mutex
	bytes map[string]*[2]uint64 // by circuit: in, out reported so far
	ended map[string]endedCircuit
	order []string // ended, oldest first
}

type endedCircuit struct {
	c  *Circuit
	at time.Time
}

// dp appends e, naming this node.
func (m *Manager) dp(e *dpevent.Event) {
	if m.cfg.Events != nil {
		m.cfg.Events.Append(e)
	}
}

// nameOf is the name of the record of id in the first of kinds that has it.
func nameOf(tx *store.Tx, id string, kinds ...*store.Kind) string {
	if id == "" {
		return ""
	}
	for _, k := range kinds {
		if r, err := tx.Get(k, id); err == nil {
			return r.RecordName()
		}
	}
	return ""
}

func routerName(tx *store.Tx, id string) string {
	return nameOf(tx, id, store.KindEdgeRouter, store.KindRouter)
}

// circuitEvent is an event of circuit ci, with the names of its identity,
// service and routers.
func (m *Manager) circuitEvent(action string, ci *Circuit) *dpevent.Event {
	tx := m.cfg.Store.Read()
	e := &dpevent.Event{Namespace: dpevent.Circuit, Action: action, CircuitID: ci.ID,
		IdentityID: ci.IdentityID, IdentityName: nameOf(tx, ci.IdentityID, store.KindIdentity),
		ServiceID: ci.ServiceID, ServiceName: nameOf(tx, ci.ServiceID, store.KindService),
		TerminatorID: ci.TerminatorID, RouterID: ci.IngressRouterID, RouterName: routerName(tx, ci.IngressRouterID),
		Path: ci.Path, Links: ci.Links}
	for _, id := range ci.Path {
		e.PathNames = append(e.PathNames, routerName(tx, id))
	}
	return e
}

// dialEvents reports a dial's outcome: the circuit it made, or why it
// made none.
type dialEvents struct {
	m          *Manager
	routerID   string
	start      time.Time
	identityID string
	serviceID  string
	// routed: an attempt was routed and failed (a router's error): what
	// fails the dial after it is that error, whatever the next pick says.
	routed bool
}

// attemptFailed notes that a routed attempt failed.
func (d *dialEvents) attemptFailed() { d.routed = true }

func (m *Manager) dialEvents(r *Router, start time.Time) *dialEvents {
	return &dialEvents{m: m, routerID: r.ID, start: start}
}

// session notes whose dial it is, once known.
func (d *dialEvents) session(s *store.Session) {
	if s != nil {
		d.identityID, d.serviceID = s.IdentityID, s.ServiceID
	}
}

// failed reports a dial that made no circuit, with its cause.
// The cause is counted in edgectl_circuit_failures_total, events or not.
func (d *dialEvents) failed(err error, circuitID string) {
	cause := failureCause(err)
	if d.routed {
		cause = dpevent.CauseRouterError
	}
	d.m.metrics.failures.WithLabelValues(cause).Inc()
	if d.m.cfg.Events == nil {
		return
	}
	ci := &Circuit{ID: circuitID, IngressRouterID: d.routerID, IdentityID: d.identityID, ServiceID: d.serviceID}
	e := d.m.circuitEvent(dpevent.Failed, ci)
	e.Cause, e.Reason, e.SetupMillis = cause, err.Error(), dpevent.Int64(time.Since(d.start).Milliseconds())
	d.m.dp(e)
}

// created reports the circuit a dial made.
func (d *dialEvents) created(ci *Circuit) {
	if d.m.cfg.Events == nil {
		return
	}
	e := d.m.circuitEvent(dpevent.Created, ci)
	e.SetupMillis = dpevent.Int64(time.Since(d.start).Milliseconds())
	d.m.dp(e)
}

// failureCause is the cause of a dial's error: refused access (its
// session), no terminator, no path, else an error of the routers.
func failureCause(err error) string {
	var se *sessionError
	switch {
	case errors.As(err, &se):
		return dpevent.CauseAccessRefused
	case errors.Is(err, path.ErrNoTerminator):
		return dpevent.CauseNoTerminator
	case errors.Is(err, path.ErrNoPath):
		return dpevent.CauseNoPath
	}
	return dpevent.CauseRouterError
}

// circuitEnded reports the end of ci, with how long it lived and the bytes
// its routers reported so far; ci is remembered a while for the reports
// still to come.
func (m *Manager) circuitEnded(ci *Circuit, why string) {
	now := m.cfg.Now().UTC()
	m.dps.mu.Lock()
	b := m.dps.bytes[ci.ID]
	delete(m.dps.bytes, ci.ID)
	if m.dps.ended == nil {
		m.dps.ended = map[string]endedCircuit{}
	}
	for len(m.dps.order) > 0 && (len(m.dps.order) >= endedKept || now.Sub(m.dps.ended[m.dps.order[0]].at) > endedKeptFor) {
		delete(m.dps.ended, m.dps.order[0])
		m.dps.order = m.dps.order[1:]
	}
	m.dps.ended[ci.ID] = endedCircuit{c: ci, at: now}
	m.dps.order = append(m.dps.order, ci.ID)
	m.dps.mu.Unlock()
	if m.cfg.Events == nil {
		return
	}
	e := m.circuitEvent(dpevent.Ended, ci)
	e.Reason, e.DurationMillis = why, dpevent.Int64(now.Sub(ci.CreatedAt).Milliseconds())
	var in, out uint64
	if b != nil {
		in, out = b[0], b[1]
	}
	e.BytesIn, e.BytesOut = &in, &out
	m.dp(e)
}

// circuitRerouted reports a circuit moved from old's path to next's.
func (m *Manager) circuitRerouted(old, next *Circuit, why string) {
	if m.cfg.Events == nil || next == nil {
		return
	}
	e := m.circuitEvent(dpevent.Rerouted, next)
	e.Reason, e.PreviousPath = why, old.Path
	m.dp(e)
}

// routerEvent reports a router connected or disconnected (the events the
// log records too, events.go).
func (m *Manager) routerEvent(ev fsm.RouterEvent) {
	if m.cfg.Events == nil || (ev.Action != fsm.RouterConnected && ev.Action != fsm.RouterDisconnected) {
		return
	}
	e := &dpevent.Event{Namespace: dpevent.Router, Action: ev.Action, RouterID: ev.RouterID,
		RouterName: routerName(m.cfg.Store.Read(), ev.RouterID)}
	e.RemoteAddress, _ = ev.Detail["remoteAddress"].(string)
	e.Version, _ = ev.Detail["version"].(string)
	e.Reason, _ = ev.Detail["reason"].(string)
	m.dp(e)
}

// linkUp reports a link router src reported.
func (m *Manager) linkUp(src string, l wire.RouterLink) {
	m.dp(&dpevent.Event{Namespace: dpevent.Link, Action: dpevent.Up, LinkID: l.ID, SrcRouterID: src,
		DstRouterID: l.DestRouterID, Protocol: l.Protocol})
}

// linksDown reports links gone, for why.
func (m *Manager) linksDown(why string, ls ...*Link) {
	for _, l := range ls {
		if l != nil {
			m.dp(&dpevent.Event{Namespace: dpevent.Link, Action: dpevent.Down, LinkID: l.ID, SrcRouterID: l.SrcRouterID,
				DstRouterID: l.DstRouterID, Protocol: l.Protocol, Reason: why})
		}
	}
}

// terminatorEvents reports the terminators created and removed in sets
// (every node sees them: each reports them to its own outlets).
func (m *Manager) terminatorEvents(sets []fsm.Changes) {
	if m.cfg.Events == nil {
		return
	}
	var tx *store.Tx
	for _, set := range sets {
		for _, c := range set.Changes {
			if c.Kind != store.KindTerminator || (c.Old != nil && c.New != nil) {
				continue
			}
			action, rec := dpevent.Created, c.New
			if c.New == nil {
				action, rec = dpevent.Removed, c.Old
			}
			t, ok := rec.(*store.Terminator)
			if !ok {
				continue
			}
			if tx == nil {
				tx = m.cfg.Store.Read()
			}
			m.dp(&dpevent.Event{Namespace: dpevent.Terminator, Action: action, TerminatorID: t.ID,
				ServiceID: t.ServiceID, ServiceName: nameOf(tx, t.ServiceID, store.KindService),
				RouterID: t.RouterID, RouterName: routerName(tx, t.RouterID), HostID: t.HostID,
				InstanceID: t.Identity, Binding: t.Binding, Address: t.Address})
		}
	}
}

// metricsReport takes a router's metrics: its links' latencies, and the
// usage of this node's circuits.
func (m *Manager) metricsReport(r *Router, msg *ctrlchan.Message) {
	m.linkMetrics(r, msg)
	m.usageReport(r, msg.Body)
}

// usageReport reports the usage of this node's circuits in a router's
// metrics (other nodes report theirs: every router reports to every node):
// an event per circuit, and per identity and service the sums of the
// bytes in and out of their circuits in the report. The bytes are kept by
// circuit (CircuitBytes) and counted by service
// (edgectl_service_bytes_total), events or not.
func (m *Manager) usageReport(r *Router, body []byte) {
	_, counters, err := wire.DecodeUsage(body)
	if err != nil {
		m.log.Debug("a router's usage could not be read", "router", r.ID, "error", err)
		return
	}
	type sum struct {
		in, out  uint64
		circuits int64
	}
	for _, c := range counters {
		start := time.Unix(c.IntervalStartUTC, 0).UTC()
		byIdentity, byService := map[string]*sum{}, map[string]*sum{}
		for id, b := range c.Buckets {
			ci := m.circuitOf(id)
			if ci == nil {
				continue
			}
			e := m.circuitEvent(dpevent.UsageCircuit, ci)
			e.Namespace, e.RouterID, e.RouterName, e.Path, e.PathNames, e.Links = dpevent.Usage, r.ID, routerName(m.cfg.Store.Read(), r.ID), nil, nil, nil
			e.Usage, e.IntervalStart, e.IntervalSeconds, e.HostID = b.Values, &start, int64(c.IntervalLength), b.Tags["hostId"]
			// What the client sent is read at its router (ingress.rx), what the
			// host sent back at the host's (egress.rx): reads, each counted on
			// one router of the path only.
			in, hasIn := b.Values["ingress.rx"]
			out, hasOut := b.Values["egress.rx"]
			if hasIn || hasOut {
				e.BytesIn, e.BytesOut = dpevent.Uint64(in), dpevent.Uint64(out)
				m.addBytes(id, in, out)
				for key, by := range map[string]map[string]*sum{ci.IdentityID: byIdentity, ci.ServiceID: byService} {
					s := by[key]
					if s == nil {
						s = &sum{}
						by[key] = s
					}
					s.in, s.out, s.circuits = s.in+in, s.out+out, s.circuits+1
				}
			}
			m.dp(e)
		}
		tx := m.cfg.Store.Read()
		for id, s := range byService {
			name := nameOf(tx, id, store.KindService)
			m.metrics.serviceBytes.WithLabelValues(id, name, "in").Add(float64(s.in))
			m.metrics.serviceBytes.WithLabelValues(id, name, "out").Add(float64(s.out))
		}
		if m.cfg.Events == nil {
			continue
		}
		for id, s := range byIdentity {
			m.dp(&dpevent.Event{Namespace: dpevent.Usage, Action: dpevent.UsageIdentity, IdentityID: id,
				IdentityName: nameOf(tx, id, store.KindIdentity), RouterID: r.ID, RouterName: routerName(tx, r.ID),
				BytesIn: dpevent.Uint64(s.in), BytesOut: dpevent.Uint64(s.out), Circuits: s.circuits,
				IntervalStart: &start, IntervalSeconds: int64(c.IntervalLength)})
		}
		for id, s := range byService {
			m.dp(&dpevent.Event{Namespace: dpevent.Usage, Action: dpevent.UsageService, ServiceID: id,
				ServiceName: nameOf(tx, id, store.KindService), RouterID: r.ID, RouterName: routerName(tx, r.ID),
				BytesIn: dpevent.Uint64(s.in), BytesOut: dpevent.Uint64(s.out), Circuits: s.circuits,
				IntervalStart: &start, IntervalSeconds: int64(c.IntervalLength)})
		}
	}
}

// circuitOf is circuit id if this node routed it: live, or ended a
// little while ago.
func (m *Manager) circuitOf(id string) *Circuit {
	if ci, _ := m.circuits.get(id); ci != nil {
		return ci
	}
	m.dps.mu.Lock()
	defer m.dps.mu.Unlock()
	if e, ok := m.dps.ended[id]; ok {
		return e.c
	}
	return nil
}

// addBytes adds a report's bytes to a live circuit's totals.
func (m *Manager) addBytes(id string, in, out uint64) {
	if ci, _ := m.circuits.get(id); ci == nil {
		return
	}
	m.dps.mu.Lock()
	defer m.dps.mu.Unlock()
	if m.dps.bytes == nil {
		m.dps.bytes = map[string]*[2]uint64{}
	}
	b := m.dps.bytes[id]
	if b == nil {
		b = &[2]uint64{}
		m.dps.bytes[id] = b
	}
	b[0], b[1] = b[0]+in, b[1]+out
}

// CircuitBytes are the bytes in and out reported so far of live circuit id.
func (m *Manager) CircuitBytes(id string) (in, out uint64) {
	m.dps.mu.Lock()
	defer m.dps.mu.Unlock()
	if b := m.dps.bytes[id]; b != nil {
		return b[0], b[1]
	}
	return 0, 0
}
