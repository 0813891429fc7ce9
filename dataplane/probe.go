package dataplane

import (
	"encoding/json"
	"errors"
	"time"
)

// Probing circuits in doubt. A dial that came in the first seconds of its
// router's channel to this node may have waited in the router's queue
// while the channel was down (issue 46: a rolling restart of the nodes),
// and its client may have given up just before the answer: nobody starts
// its circuit, and the host's SDK (`ziti tunnel host`) waits for that
// start, up to 3 minutes, before it accepts the next dial. The ingress
// router names such a circuit idle only past its idle threshold (a minute
// by default, then at its next scan) and the service takes no new dial
// meanwhile. So probeAfter after such a circuit went live the node asks
// its ingress router for its router-circuits inspection, and judges each
// circuit in doubt by how long it has been idle there:
//
//   - idle for longer than it has been live, counted up to the answer's
//     arrival: nothing went through the router since before the dial was
//     answered, and a client starts its circuit as soon as it has the
//     answer: it never will. It ends.
//   - idle since after it went live, counted from when the request was
//     sent: it started. It is in doubt no more.
//   - in between (the router's clock counts milliseconds, the inspection
//     takes its time): undecided, left to the router's confirmations
//     (neverStarted).
//
// Both bounds are exact about the router's traffic whatever the load (a
// slow inspection only widens the undecided band); the one assumption is
// that a client that has its answer starts its circuit within probeAfter.
//
// A circuit moved before it was judged (a fault moved it in its first
// seconds) is in doubt too, and its ingress router's idle time says
// nothing (the move routed that router again). The same inspection names
// each destination of the circuit's routes there, "missing" for an
// address nothing is bound to: the ingress address the dial's answer gave
// is bound by the router as soon as it hands the answer to its client
// (OpenZiti's edge listener, FinishConnect), and a client that ends its
// circuit has it unbound and ends the circuit with a fault. Found there,
// the client has its circuit: judged. Missing in two probes in a row,
// probeAfter apart (an answer the router had not handled yet by the first
// is handled by the second), the client never had the answer: it ends.
// Its first seconds are the only time a circuit is judged: one judged
// started stays judged, moves and quiet times alike.

// probeAfter: a circuit in doubt is probed this long after it went live.
// A client that has the answer starts its circuit within milliseconds;
// this leaves a loaded machine ample room. Those due within probeBatch
// after are probed with it: one inspection for a burst of dials (a
// router's queue sent at once when its channel comes back).
const (
	probeAfter = 2 * time.Second
	probeBatch = 500 * time.Millisecond
)

// probeItem is a circuit a probe judges, with when it went live, when
// the wait for the probe began, and its address on its ingress router.
type probeItem struct {
	id        string
	liveAt    time.Time
	probeFrom time.Time
	ingress   string
}

// startProbe notes a probe of the circuits in doubt entering at router; it
// says whether one must start (none is under way).
func (c *circuits) startProbe(router string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probing[router] {
		return false
	}
	if c.probing == nil {
		c.probing = map[string]bool{}
	}
	c.probing[router] = true
	return true
}

// dueForProbe takes the circuits in doubt entering at router that went
// live at least probeAfter before now (probeBatch less, when one is due)
// and were not probed yet (each is probed once). next is how long until
// the next such circuit is due; when
// none is left to probe, the probe of router is over (a circuit made live
// later starts another).
func (c *circuits) dueForProbe(router string, now time.Time) (due []probeItem, next time.Duration, more bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var doubt []*circuitEntry
	for _, e := range c.byID {
		if !e.probed && e.inDoubt(now) && len(e.c.Path) > 0 && e.c.Path[0] == router {
			doubt = append(doubt, e)
		}
	}
	soonest := time.Duration(-1)
	for _, e := range doubt {
		if w := e.probeFrom.Add(probeAfter).Sub(now); soonest < 0 || w < soonest {
			soonest = w
		}
	}
	for _, e := range doubt {
		wait := e.probeFrom.Add(probeAfter).Sub(now)
		if soonest > 0 || wait > probeBatch {
			if !more || wait < next {
				next = wait
			}
			more = true
			continue
		}
		e.probed = true
		due = append(due, probeItem{id: e.c.ID, liveAt: e.liveAt, probeFrom: e.probeFrom, ingress: e.c.IngressID})
	}
	if !more {
		delete(c.probing, router)
	}
	return due, next, more
}

// probeVerdict is what a probe tells of a circuit.
type probeVerdict uint8

const (
	probeUndecided probeVerdict = iota
	probeNeverStarted
	probeStarted
	probeAgain      // its ingress address missing once: probed again
	probeClientGone // its ingress address missing probeMissingLimit times
)

// clientGoneWhy ends a circuit whose ingress address its router had not
// bound in probeMissingLimit probes.
const clientGoneWhy = "its client never had it: nothing is bound to its address on its ingress router"

// probeMissingLimit is how many probes in a row must find a moved
// circuit's ingress address missing for it to end.
const probeMissingLimit = 2

// judgeProbe judges circuit it as its ingress router showed it in an
// inspection asked at sent and answered at received (see above). A
// circuit that started is judged (no longer in doubt); one no longer live,
// or moved since the probe was due, is undecided.
func (c *circuits) judgeProbe(it probeItem, seen inspectedCircuit, sent, received time.Time) probeVerdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[it.id]
	if e == nil || e.state != live || !e.liveAt.Equal(it.liveAt) || !e.probeFrom.Equal(it.probeFrom) {
		return probeUndecided
	}
	if e.moved {
		switch seen.destinations[it.ingress] {
		case "":
			return probeUndecided // not among its routes there
		case destinationMissing:
			e.missing++
			if e.missing >= probeMissingLimit {
				return probeClientGone
			}
			e.probed, e.probeFrom = false, received
			return probeAgain
		}
		e.judged = true
		return probeStarted
	}
	if !seen.idleKnown {
		return probeUndecided
	}
	switch idle, liveAt := seen.idle, it.liveAt; {
	case idle > received.Sub(liveAt):
		return probeNeverStarted
	case idle+time.Millisecond < sent.Sub(liveAt):
		e.judged = true
		return probeStarted
	}
	return probeUndecided
}

// probeLater probes the circuits in doubt entering at router routerID
// once they are due, unless a probe of them is under way.
func (m *Manager) probeLater(routerID string) {
	if !m.circuits.startProbe(routerID) {
		return
	}
	if !m.goAttach(func() { m.probe(routerID) }) {
		m.circuits.stopProbe(routerID) // closing
	}
}

// stopProbe forgets the probe of router's circuits.
func (c *circuits) stopProbe(router string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.probing, router)
}

// probe waits for each circuit in doubt entering at router routerID to be
// due, asks the router how long its circuits have been idle, and ends
// those never started.
func (m *Manager) probe(routerID string) {
	wait := probeAfter
	for {
		t := time.NewTimer(wait)
		select {
		case <-m.stop:
			t.Stop()
			m.circuits.stopProbe(routerID)
			return
		case <-t.C:
		}
		due, next, more := m.circuits.dueForProbe(routerID, time.Now())
		if len(due) > 0 {
			m.probeCircuits(routerID, due)
		}
		if !more {
			return
		}
		wait = next
	}
}

// probeCircuits asks router routerID how long circuits due have been idle
// there and ends those never started.
func (m *Manager) probeCircuits(routerID string, due []probeItem) {
	r := m.router(routerID)
	if r == nil {
		return // away: left to its confirmations
	}
	sent := time.Now()
	resp, err := m.inspect(r, inspectRouterCircuits)
	received := time.Now()
	if err != nil {
		m.log.Debug("circuits in doubt not probed", "router", routerID, "error", err)
		return
	}
	seen, err := inspectedCircuits(resp.Values[inspectRouterCircuits])
	if err != nil {
		m.log.Debug("circuits in doubt not probed", "router", routerID, "error", err)
		return
	}
	var count [5]int
	for _, it := range due {
		v := probeUndecided
		if c, ok := seen[it.id]; ok {
			v = m.circuits.judgeProbe(it, c, sent, received)
		}
		count[v]++
		switch v {
		case probeNeverStarted:
			m.endCircuit(it.id, neverStartedWhy, true, false)
		case probeClientGone:
			m.endCircuit(it.id, clientGoneWhy, true, false)
		}
	}
	if count[probeAgain] > 0 {
		m.probeLater(routerID)
	}
	m.log.Info("circuits in doubt probed", "router", routerID, "probed", len(due), "neverStarted", count[probeNeverStarted],
		"clientGone", count[probeClientGone], "started", count[probeStarted], "undecided", count[probeUndecided], "again", count[probeAgain],
		"took", received.Sub(sent))
}

// destinationMissing is how a router-circuits inspection names an address
// of a circuit's routes that nothing is bound to on the router.
const destinationMissing = "missing"

// inspectedCircuit is what a router-circuits inspection tells of one
// circuit: how long it has been idle on the router (when the router said
// so readably) and the destinations of its routes there, by address.
type inspectedCircuit struct {
	idle         time.Duration
	idleKnown    bool
	destinations map[string]string
}

// inspectedCircuits are the circuits of a router-circuits inspection, by
// id.
func inspectedCircuits(value string) (map[string]inspectedCircuit, error) {
	if value == "" {
		return nil, errors.New("no router-circuits value")
	}
	var v struct {
		Circuits map[string]struct {
			TimeSinceActivity string            `json:"timeSinceActivity"`
			Destinations      map[string]string `json:"destinations"`
		} `json:"circuits"`
	}
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return nil, err
	}
	out := make(map[string]inspectedCircuit, len(v.Circuits))
	for id, c := range v.Circuits {
		ic := inspectedCircuit{destinations: c.Destinations}
		if d, err := time.ParseDuration(c.TimeSinceActivity); err == nil {
			ic.idle, ic.idleKnown = d, true
		}
		out[id] = ic
	}
	return out, nil
}
