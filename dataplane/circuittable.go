package dataplane

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"edgectl/ctrlchan"
)

// The circuit table. A circuit is in one of three states, as OpenZiti's
// controller keeps a circuit reserved with no path until its routes are
// answered:
//
//   - building: a dial is routing it. It is no circuit yet (nobody lists
//     it, an admin cannot end it); the dial owns it. A fault, a move or an
//     end asked for meanwhile is noted, and the dial acts on it when its
//     routes are answered.
//   - live: routed and answered.
//   - moving: a move to another path is under way (reroute.go); the move
//     owns it. It is listed with its old path until the move is done.
//
// Whoever owns a building or moving circuit is the only one to change its
// path or end it, so no Route of theirs can follow its Unroute. Every
// router that leaves a path (a move done, a dial or a move given up, an
// end) is sent an Unroute: the table hands back who to tell.

type circuitState uint8

const (
	building circuitState = iota
	live
	moving
)

// circuitEntry is a circuit and what the node is doing with it.
type circuitEntry struct {
	c     *Circuit // replaced, never changed in place
	state circuitState
	// routing are the routers sent a Route by the dial attempt or the move
	// under way: they hold the circuit until told otherwise.
	routing []string
	// ever are the routers that held the circuit at any time (its paths,
	// its dial's attempts, its moves): a late message of one of them is
	// stale, one from any other router is an attempt on the circuit.
	ever []string
	// ended, when set, is why the circuit is to end once the dial or the
	// move owning it is done; again why it is to move (again) then.
	ended, again string
	// liveAt is when the dial made it live, just before its answer; moved
	// tells that it moved since (its routers were routed again); slack is
	// how much sooner than liveAt its ingress may have gone idle for the
	// circuit to count as never started (neverStarted); judged, that its
	// ingress router's confirmation showed it started.
	liveAt time.Time
	moved  bool
	slack  time.Duration
	judged bool
	// probed: its ingress router was asked how long it has been idle
	// there (probe.go); probeFrom is when the wait for that probe began
	// (when it went live, moved, or was last found without its client);
	// missing counts the probes in a row that found its ingress address
	// missing there (its client has no end of it).
	probed    bool
	probeFrom time.Time
	missing   int
}

// doubtLimit bounds how long a circuit given slack stays in doubt
// (inDoubt). OpenZiti's router names a circuit in its confirmation at its
// first scan (idleTxInterval) once the circuit is idle past its threshold
// (idleCircuitTimeout), a minute each by default: a circuit never started
// is judged within about two minutes of its route. One not judged by then
// was used.
const doubtLimit = 3 * time.Minute

// inDoubt says whether e is a live circuit that may never have been
// started and is not judged yet: given slack (its dial may have waited in
// its router's queue, or took long enough for its client to give up), or
// moved before it was judged (a move routes its ingress router again,
// which starts its idle time anew: only the probe's look at its ingress
// address can judge it). An optional move (a cheaper path) waits until
// the doubt is gone.
func (e *circuitEntry) inDoubt(now time.Time) bool {
	if e.state != live || e.judged || now.Sub(e.probeFrom) >= doubtLimit {
		return false
	}
	return e.moved || e.slack > 0
}

// circuits is the node's circuit table, with the dials waiting for their
// route results.
type circuits struct {
	mu      sync.Mutex
	byID    map[string]*circuitEntry
	waiting map[string]chan routeAnswer
	// probing are the routers a probe of circuits in doubt is under way
	// for (probe.go).
	probing map[string]bool
}

// routeAnswer is a router's route result; a nil msg says the router left.
type routeAnswer struct {
	router string
	msg    *ctrlchan.Message
}

// reserve enters a dial's circuit, building, with no path yet.
func (c *circuits) reserve(ci *Circuit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]*circuitEntry{}
	}
	cp := *ci
	c.byID[ci.ID] = &circuitEntry{c: &cp, state: building, ever: []string{ci.IngressRouterID}}
}

// note adds routers to those that ever held e's circuit.
func (e *circuitEntry) note(routers ...string) {
	for _, r := range routers {
		if !slices.Contains(e.ever, r) {
			e.ever = append(e.ever, r)
		}
	}
}

// heldBy tells whether circuit id is in the table, whether router holds it
// now (keeps), and whether it ever did.
func (c *circuits) heldBy(id, router string) (exists, now, ever bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[id]
	if e == nil {
		return false, false, false
	}
	now = slices.Contains(e.c.Path, router) || slices.Contains(e.routing, router)
	return true, now, now || slices.Contains(e.ever, router)
}

// attempt records the path a dial's attempt routes (its routers hold the
// circuit from now on) and returns the channel its results come on.
func (c *circuits) attempt(ci *Circuit) chan routeAnswer {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := *ci
	if e := c.byID[ci.ID]; e != nil {
		e.c, e.routing = &cp, slices.Clone(ci.Path)
		e.note(ci.Path...)
	}
	if c.waiting == nil {
		c.waiting = map[string]chan routeAnswer{}
	}
	// Room for every answer of this attempt and of the one before (a late
	// answer of that one is read and dropped): deliver never waits.
	ch := make(chan routeAnswer, 2*len(ci.Path)+16)
	c.waiting[ci.ID] = ch
	return ch
}

// retract notes that a failed attempt's routers were told to unroute.
func (c *circuits) retract(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.byID[id]; e != nil {
		e.routing = nil
	}
}

// endedWhy is why circuit id is to end ("": it is not).
func (c *circuits) endedWhy(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.byID[id]; e != nil {
		return e.ended
	}
	return ""
}

// abandon forgets a dial that gave up.
func (c *circuits) abandon(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, id)
	delete(c.waiting, id)
}

// promote makes a dial's circuit live once its routes are answered. It
// returns why the circuit is to end instead (the entry is gone then), or
// why it is to move.
func (c *circuits) promote(id string, slack time.Duration) (ended, again string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.waiting, id)
	e := c.byID[id]
	if e == nil {
		return "it was forgotten", ""
	}
	if e.ended != "" {
		delete(c.byID, id)
		return e.ended, ""
	}
	e.state, e.routing, again, e.again, e.liveAt, e.slack = live, nil, e.again, "", time.Now(), slack
	e.probeFrom = e.liveAt
	return "", again
}

// end ends circuit id for why. A live circuit leaves the table and is
// returned, for its routers to be told; one being built or moved is marked,
// and its owner ends it when done (nil, true). ok is false when there is no
// such circuit, or only a building one and building is false.
func (c *circuits) end(id, why string, evenBuilding bool) (gone *Circuit, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[id]
	switch {
	case e == nil, e.state == building && !evenBuilding:
		return nil, false
	case e.state == live:
		delete(c.byID, id)
		return e.c, true
	}
	if e.ended == "" {
		e.ended = why
	}
	return nil, true
}

// endWhere ends the circuits match says to (as end does) and returns the
// live ones it removed.
func (c *circuits) endWhere(why string, match func(*Circuit) bool) []*Circuit {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Circuit
	for id, e := range c.byID {
		if !match(e.c) {
			continue
		}
		if e.state == live {
			out = append(out, e.c)
			delete(c.byID, id)
		} else if e.ended == "" {
			e.ended = why
		}
	}
	return out
}

// startMove takes a live circuit for a move, returning it. A circuit being
// built or moved is marked to move once done (nil); nil too when there is
// no such circuit. An optional move (a cheaper path: nothing failed) takes
// only a live circuit not in doubt, and marks none: the next cycle looks
// again.
func (c *circuits) startMove(id, why string, optional bool) *Circuit {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[id]
	switch {
	case e == nil:
		return nil
	case optional && (e.state != live || e.inDoubt(time.Now())):
		return nil
	case e.state != live:
		if e.again == "" {
			e.again = why
		}
		return nil
	}
	e.state, e.routing = moving, nil
	return e.c
}

// moveHop notes that a move is about to route router on circuit id; false
// when the circuit is to end (the move stops: no Route after an end).
func (c *circuits) moveHop(id, router string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[id]
	if e == nil || e.ended != "" {
		return false
	}
	if !slices.Contains(e.routing, router) {
		e.routing = append(e.routing, router)
	}
	e.note(router)
	return true
}

// finishMove ends a move of circuit id from old: to next when it was
// routed (nil: it failed). It returns the routers to tell to unroute (those
// of the old path and those the move routed that are not on the path the
// circuit keeps), why it ended ("" when it goes on), why it is to move
// again, and whether it is in doubt (moved before it was judged: its
// ingress router is to be probed).
func (c *circuits) finishMove(old, next *Circuit, failed string) (unroute []string, ended, again string, doubt bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[old.ID]
	if e == nil {
		return nil, "it was forgotten", "", false
	}
	held := append(slices.Clone(old.Path), e.routing...)
	slices.Sort(held)
	held = slices.Compact(held)
	switch {
	case e.ended != "":
		ended = e.ended
	case next == nil:
		ended = failed
	}
	if ended != "" {
		delete(c.byID, old.ID)
		return held, ended, "", false
	}
	for _, r := range held {
		if !slices.Contains(next.Path, r) {
			unroute = append(unroute, r)
		}
	}
	cp := *next
	e.c, e.state, e.routing, again, e.again, e.moved = &cp, live, nil, e.again, "", true
	if !e.judged {
		e.probeFrom, e.probed, e.missing = time.Now(), false, 0
	}
	return unroute, "", again, e.inDoubt(time.Now())
}

// neverStarted says whether live circuit id, which its ingress router
// reports idle for idle (a confirmation), has carried nothing through that
// router since the dial made it live: its client never had the answer.
// A router's idle time runs from the last payload it forwarded, or from
// the circuit's last route there; a client's first payload (the circuit's
// start) follows the answer, so a circuit in use is idle for less than it
// has been live, and one never started for longer (by the time its other
// routers took to answer). The router counts in milliseconds: the doubt
// goes to the circuit. When those routers answered at once, the two are
// too close to tell apart: a circuit given slack (a dial that may have
// waited in its router's queue) counts as never started when idle since
// up to slack after it went live (a router reports only circuits idle
// past its threshold, seconds). A moved circuit was routed again since
// (its idle time starts then): it is not judged; an optional move waits
// for the judgement of a circuit in doubt (inDoubt). One judged started
// (here, or by its probe) is never judged again: its client used it after
// it went live, and an idle time since then is a quiet stream's.
func (c *circuits) neverStarted(id, router string, idle time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[id]
	if e == nil || e.state != live || e.moved || e.judged || e.liveAt.IsZero() || len(e.c.Path) == 0 || e.c.Path[0] != router {
		return false
	}
	if idle+e.slack > time.Since(e.liveAt)+2*time.Millisecond {
		return true
	}
	e.judged = true
	return false
}

// movable returns the live circuits an optional move may take, by id:
// those not in doubt (inDoubt).
func (c *circuits) movable() []*Circuit {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	var out []*Circuit
	for _, e := range c.byID {
		if e.state == live && !e.inDoubt(now) {
			out = append(out, e.c)
		}
	}
	slices.SortFunc(out, func(a, b *Circuit) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// keeps says whether router holds circuit id rightly: on its path, or
// routed by the dial or move under way.
func (c *circuits) keeps(id, router string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[id]
	return e != nil && (slices.Contains(e.c.Path, router) || slices.Contains(e.routing, router))
}

// liveOn returns the live circuits whose path crosses router, by id.
func (c *circuits) liveOn(router string) map[string]*Circuit {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]*Circuit{}
	for id, e := range c.byID {
		if e.state == live && slices.Contains(e.c.Path, router) {
			out[id] = e.c
		}
	}
	return out
}

// endSame ends circuit ci if it is live and still on the same path (the
// table holds ci itself: a moved circuit holds another); it says whether
// it did.
func (c *circuits) endSame(ci *Circuit) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[ci.ID]
	if e == nil || e.state != live || e.c != ci {
		return false
	}
	delete(c.byID, ci.ID)
	return true
}

// get returns circuit id and its state (nil: none).
func (c *circuits) get(id string) (*Circuit, circuitState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byID[id]
	if e == nil {
		return nil, 0
	}
	return e.c, e.state
}

// where returns the circuits, building ones included, match takes.
func (c *circuits) where(match func(*Circuit) bool) []*Circuit {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Circuit
	for _, e := range c.byID {
		if match(e.c) {
			out = append(out, e.c)
		}
	}
	return out
}

// count is the number of circuits, live or moving.
func (c *circuits) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.byID {
		if e.state != building {
			n++
		}
	}
	return n
}

// deliver hands a route result to the dial waiting for it, if one is.
func (c *circuits) deliver(id string, a routeAnswer) bool {
	c.mu.Lock()
	ch := c.waiting[id]
	c.mu.Unlock()
	if ch == nil {
		return false
	}
	select {
	case ch <- a:
	default: // more answers than routes: none is waited for
	}
	return true
}

// Circuits lists this node's circuits (live, or being moved: with their
// path until the move is done), by id.
func (m *Manager) Circuits() []*Circuit {
	m.circuits.mu.Lock()
	out := make([]*Circuit, 0, len(m.circuits.byID))
	for _, e := range m.circuits.byID {
		if e.state != building {
			cp := *e.c
			out = append(out, &cp)
		}
	}
	m.circuits.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// busy says whether circuit id is being routed: dialed or moved.
func (m *Manager) busy(id string) bool {
	c, st := m.circuits.get(id)
	return c != nil && st != live
}
