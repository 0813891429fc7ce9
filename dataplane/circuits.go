package dataplane

import (
	"errors"
	"strings"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/path"
	"edgectl/dataplane/wire"
	"edgectl/policy"
	"edgectl/store"
)

// Circuits. Circuits live in memory on the node that routed them (dial.go),
// in its table (circuittable.go): building while a dial routes them, live,
// or moving while a reroute moves them (reroute.go). They end when either
// end closes (a fault), when the routers no longer have them (their
// confirmations), when an end router goes, when an admin ends them and when
// access is lost (the session ends: logout, expiry, a policy or posture
// change, a disabled identity), each with an Unroute to every router of
// the path.

// Circuit is a circuit this node routed.
type Circuit struct {
	ID string `json:"id"`
	// IngressRouterID is the router the circuit enters at (the first of
	// Path); IngressID and EgressID are the circuit's addresses on its
	// first and last router (tokens the routers forward between).
	IngressRouterID string `json:"routerId"`
	// Path is the routers it crosses, the ingress first; Links the link
	// between each two.
	Path         []string  `json:"path"`
	Links        []string  `json:"links"`
	IngressID    string    `json:"ingressId"`
	EgressID     string    `json:"egressId"`
	TerminatorID string    `json:"terminatorId"`
	ServiceID    string    `json:"serviceId"`
	IdentityID   string    `json:"identityId"`
	SessionID    string    `json:"sessionId"`
	APISessionID string    `json:"apiSessionId"`
	CreatedAt    time.Time `json:"createdAt"`
}

// ErrNoCircuit: this node routed no circuit of that id.
var ErrNoCircuit = errors.New("no circuit of this id on this node")

// EndCircuit ends circuit id: its routers are told to unroute it now (a
// circuit being moved: once the move has stopped, on its old path and on
// the routers the move reached).
func (m *Manager) EndCircuit(id string) error {
	if !m.endCircuit(id, "deleted by an admin", true, false) {
		return ErrNoCircuit
	}
	return nil
}

// endCircuit ends circuit id for why (as circuits.end): a live one is
// unrouted on its path now, one being built or moved by its owner when
// done. It says whether there was such a circuit.
func (m *Manager) endCircuit(id, why string, now, evenBuilding bool) bool {
	ci, ok := m.circuits.end(id, why, evenBuilding)
	if ci != nil {
		m.unrouteAll(ci.Path, id, now)
		m.log.Info("circuit ended", "circuit", id, "reason", why)
		m.circuitEnded(ci, why)
	}
	return ok
}

// unroute tells router routerID to drop circuit id; a router not
// connected is told when it connects (away.go).
func (m *Manager) unroute(routerID, id string, now bool) {
	r := m.router(routerID)
	if r == nil {
		m.unrouteLater(routerID, id)
		return
	}
	if err := m.send(r, ctrlchan.NewMessage(wire.UnrouteType, wire.Unroute(id, now))); err != nil {
		m.unrouteWhenBack(routerID, r, id)
		return
	}
	r.noteUnroute(id, m.cfg.Now())
}

// unrouteAll tells every router of a path to drop circuit id.
func (m *Manager) unrouteAll(path []string, id string, now bool) {
	for _, r := range path {
		m.unroute(r, id, now)
	}
}

// fault handles a router's fault: an end of a circuit closed (the circuit
// ends and its routers unroute it; every router, for a circuit this node
// does not know), a router could not forward it (it
// moves), or a link failed (links.go). A circuit being built or moved is
// ended or moved by its owner once done.
func (m *Manager) fault(r *Router, msg *ctrlchan.Message) {
	f, err := wire.DecodeFault(msg.Body)
	if err != nil {
		return
	}
	switch f.Subject {
	case wire.IngressFault, wire.EgressFault:
		if !m.foreignCircuit(r, reqFault, f.ID) && !m.endCircuit(f.ID, "an end of it closed", false, true) {
			// An end of a circuit this node does not know closed: the node
			// forgot it (it restarted, or lost its routers' channels), but
			// its routers still hold it and the other end waits. Every router
			// drops it; one that never had it ignores the Unroute. (A router
			// learns only the ids of circuits routed through it: it cannot
			// name another's.)
			for _, id := range m.Connected() {
				m.unroute(id, f.ID, true)
			}
		}
	case wire.ForwardFault, wire.UnknownOwnerForwardFault:
		for _, id := range strings.Fields(f.ID) {
			if m.foreignCircuit(r, reqFault, id) {
				continue
			}
			ci, _ := m.circuits.get(id)
			switch {
			case ci == nil:
				// A circuit this node does not know: left to the router's
				// confirmation once idle. OpenZiti's controller unroutes it
				// at once, but a node that restarted forgot the circuits it
				// routed, and a router queues its faults while its channel
				// is down: faults of a moment during the restart reached
				// the node after it, and it cut streams that went on
				// (issue 46, the data-plane chaos's rolling restart).
			case !m.circuits.keeps(id, r.ID):
				// One the router left (a move): its stale route goes.
				if f.Subject == wire.ForwardFault {
					m.unroute(r.ID, id, true)
				}
			case len(ci.Path) > 1:
				// A router of the path could not forward: its link may be
				// gone; a new path may have none of it.
				m.moveLater(ci.ID, "router "+r.ID+" could not forward it")
			default:
				m.endCircuit(id, "its router could not forward it", true, true)
			}
		}
	case wire.LinkFault, wire.LinkDuplicate:
		m.linkFault(r, f)
	}
}

// confirmCircuits takes a router's list of its circuits and unroutes those
// it should not hold (the router keeps circuits whose controller forgot
// them: this node restarted, or the circuit ended while it was away). A
// router a dial or a move under way has routed keeps the circuit. A
// circuit its ingress router reports idle since before it went live was
// never started by its client: it ends (neverStarted).
func (m *Manager) confirmCircuits(r *Router, msg *ctrlchan.Message) {
	ids, err := wire.DecodeCircuitConfirmation(msg.Body)
	if err != nil {
		return
	}
	idle, _ := wire.DecodeCircuitIdleTimes(msg.Body)
	for _, id := range ids {
		if m.foreignCircuit(r, reqConfirmation, id) {
			continue
		}
		if !m.circuits.keeps(id, r.ID) {
			m.unroute(r.ID, id, true)
			continue
		}
		if d, ok := idle[id]; ok && m.circuits.neverStarted(id, r.ID, d) {
			m.endCircuit(id, neverStartedWhy, true, false)
		}
	}
}

// neverStartedWhy ends a circuit whose client never used it: a dial
// answered after its client gave up (a request a router queued while its
// channel to this node was down, and sent when it came back), routed end
// to end. Left, it would hold the host's SDK, which waits for a circuit's
// start before it accepts the next dial (a `ziti tunnel host` for up to 3
// minutes), and the service would take no new dial meanwhile.
const neverStartedWhy = "its client never started it: its ingress router has forwarded nothing on it since it was answered"

// queuedWindow: a dial that came this soon after its router's channel to
// this node did may have waited in the router's queue while the channel
// was down (OpenZiti's router queues requests on a channel that
// reconnects), and its client may be gone. Its circuit is given
// queuedSlack when judged by its ingress router's idle time (neverStarted):
// its routes were answered at once, as a restarted node answers, and its
// idle time cannot be told from that of a circuit its client started.
//
// A dial that took slowDial or more here (a node or routers under heavy
// load) may have outlived its client's wait: its router gives up the dial,
// drops the answer when it comes, and tells nobody. It is given the same
// slack, and so a probe (probe.go).
const (
	queuedWindow = 5 * time.Second
	queuedSlack  = time.Second
	slowDial     = time.Second
)

// slackOf is the slack of circuit ci, dialed through router r, made live
// at now.
func slackOf(r *Router, ci *Circuit, now time.Time) time.Duration {
	if ci.CreatedAt.Sub(r.ConnectedAt) < queuedWindow || now.Sub(ci.CreatedAt) >= slowDial {
		return queuedSlack
	}
	return 0
}

// foreignCircuit refuses (refuseRequest, a security event) router r's
// message of request about circuit id when the circuit is in the table
// and r never held it: a router acting on another's circuit. A circuit not
// in the table (ended, or routed by another node) and a router that held
// it once (a late message after a move or a failed attempt) pass.
func (m *Manager) foreignCircuit(r *Router, request, id string) bool {
	exists, _, ever := m.circuits.heldBy(id, r.ID)
	if !exists || ever {
		return false
	}
	m.refuseRequest(r, request, whyAnotherRouter, "circuit "+id+" was never routed on router "+r.ID, true)
	return true
}

// endCircuitsOf ends the circuits that lost their access: those of ended
// sessions or API sessions, and those of disabled identities.
func (m *Manager) endCircuitsOf(sessions, apiSessions, identities map[string]bool) {
	if len(sessions)+len(apiSessions)+len(identities) == 0 {
		return
	}
	for _, ci := range m.circuits.endWhere("its access was lost", func(c *Circuit) bool {
		return sessions[c.SessionID] || apiSessions[c.APISessionID] || identities[c.IdentityID]
	}) {
		m.unrouteAll(ci.Path, ci.ID, true)
		m.log.Info("circuit ended: access lost", "circuit", ci.ID, "identity", ci.IdentityID, "service", ci.ServiceID)
		m.circuitEnded(ci, "its access was lost")
	}
}

// endCircuitsOffReach ends the circuits whose edge router access was lost:
// their dialer may no longer use the router the circuit enters at, or the
// host of their terminator the router it hosts through (edge router
// policies and service edge router policies, as a dial and a terminator's
// creation check them). The policies are judged outside the table's lock.
func (m *Manager) endCircuitsOffReach() {
	tx := m.cfg.Store.Read()
	judged := map[[3]string]bool{}
	may := func(identityID, serviceID, routerID string) bool {
		k := [3]string{identityID, serviceID, routerID}
		ok, done := judged[k]
		if !done {
			ok = reaches(tx, identityID, serviceID, routerID)
			judged[k] = ok
		}
		return ok
	}
	lost := map[string]string{}
	for _, c := range m.circuits.where(func(*Circuit) bool { return true }) {
		switch {
		case !may(c.IdentityID, c.ServiceID, c.IngressRouterID):
			lost[c.ID] = "its dialer may no longer use edge router " + c.IngressRouterID
		case !hostMayUse(tx, c.TerminatorID, may):
			lost[c.ID] = "its host may no longer use its terminator's edge router"
		}
	}
	if len(lost) == 0 {
		return
	}
	for _, ci := range m.circuits.endWhere("its edge router access was lost", func(c *Circuit) bool { return lost[c.ID] != "" }) {
		m.unrouteAll(ci.Path, ci.ID, true)
		m.log.Info("circuit ended: edge router access lost", "circuit", ci.ID, "identity", ci.IdentityID, "service", ci.ServiceID, "reason", lost[ci.ID])
	}
}

// hostMayUse tells whether the host of terminator id (one a router made
// for an SDK client or a tunneler) may still use the terminator's router
// for its service; a terminator with no host (an admin's) or gone passes.
func hostMayUse(tx *store.Tx, id string, may func(identityID, serviceID, routerID string) bool) bool {
	t, err := store.GetAs[*store.Terminator](tx, store.KindTerminator, id)
	if err != nil || t.HostID == "" {
		return true
	}
	return may(t.HostID, t.ServiceID, t.RouterID)
}

// hostKeeps says which of service's terminators a dial may take: those
// whose host (if any) may still use the terminator's router. A router
// tunneler's terminator also needs its identity's Bind still: its router
// removes it as soon as its data model says so (tunnel.go); until then no
// dial goes to a host that lost its grant. Pick asks only about the
// terminators it reads; a host's reach is judged once per router.
func hostKeeps(tx *store.Tx, serviceID string) func(*store.Terminator) bool {
	var judged map[[2]string]bool // host, router → reaches; made at the first host
	return func(t *store.Terminator) bool {
		if t.Binding == tunnelBinding && !policy.Allowed(policy.PairGrants(tx, t.HostID, serviceID), policy.Bind, nil) {
			return false
		}
		if t.HostID == "" {
			return true
		}
		if judged == nil {
			judged = map[[2]string]bool{}
		}
		k := [2]string{t.HostID, t.RouterID}
		ok, done := judged[k]
		if !done {
			ok = reaches(tx, t.HostID, serviceID, t.RouterID)
			judged[k] = ok
		}
		return ok
	}
}

// hops is the circuit as its routes name it.
func (ci *Circuit) hops() path.Circuit {
	return path.Circuit{ID: ci.ID, IngressID: ci.IngressID, EgressID: ci.EgressID, Nodes: ci.Path, Links: ci.Links}
}
