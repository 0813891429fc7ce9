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

// probeAfter: a circuit in doubt is probed this long after it went live.
// A client that has the answer starts its circuit within milliseconds;
// this leaves a loaded machine ample room. Those due within probeBatch
// after are probed with it: one inspection for a burst of dials (a
// router's queue sent at once when its channel comes back).
const (
	probeAfter = 2 * time.Second
	probeBatch = 500 * time.Millisecond
)

// probeItem is a circuit a probe judges, with when it went live.
type probeItem struct {
	id     string
	liveAt time.Time
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
		if w := e.liveAt.Add(probeAfter).Sub(now); soonest < 0 || w < soonest {
			soonest = w
		}
	}
	for _, e := range doubt {
		wait := e.liveAt.Add(probeAfter).Sub(now)
		if soonest > 0 || wait > probeBatch {
			if !more || wait < next {
				next = wait
			}
			more = true
			continue
		}
		e.probed = true
		due = append(due, probeItem{id: e.c.ID, liveAt: e.liveAt})
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
)

// judgeProbe judges circuit id, live since liveAt, that its ingress router
// reports idle for idle in an inspection asked at sent and answered at
// received (see above). A circuit that started is judged (no longer in
// doubt); one no longer live on the path it had is undecided.
func (c *circuits) judgeProbe(id string, liveAt time.Time, idle time.Duration, sent, received time.Time) probeVerdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[id]
	if e == nil || e.state != live || e.moved || !e.liveAt.Equal(liveAt) {
		return probeUndecided
	}
	switch {
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
	idle, err := inspectedIdle(resp.Values[inspectRouterCircuits])
	if err != nil {
		m.log.Debug("circuits in doubt not probed", "router", routerID, "error", err)
		return
	}
	var count [3]int
	for _, it := range due {
		v := probeUndecided
		if d, ok := idle[it.id]; ok {
			v = m.circuits.judgeProbe(it.id, it.liveAt, d, sent, received)
		}
		count[v]++
		if v == probeNeverStarted {
			m.endCircuit(it.id, neverStartedWhy, true, false)
		}
	}
	m.log.Info("circuits in doubt probed", "router", routerID, "probed", len(due), "neverStarted", count[probeNeverStarted],
		"started", count[probeStarted], "undecided", count[probeUndecided], "took", received.Sub(sent))
}

// inspectedIdle are the circuits of a router-circuits inspection with how
// long each has been idle on the router.
func inspectedIdle(value string) (map[string]time.Duration, error) {
	if value == "" {
		return nil, errors.New("no router-circuits value")
	}
	var v struct {
		Circuits map[string]struct {
			TimeSinceActivity string `json:"timeSinceActivity"`
		} `json:"circuits"`
	}
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return nil, err
	}
	out := make(map[string]time.Duration, len(v.Circuits))
	for id, c := range v.Circuits {
		if d, err := time.ParseDuration(c.TimeSinceActivity); err == nil {
			out[id] = d
		}
	}
	return out, nil
}
