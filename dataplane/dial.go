package dataplane

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"edgectl/auth"
	"edgectl/ctrlchan"
	"edgectl/dataplane/path"
	"edgectl/dataplane/wire"
	"edgectl/policy"
	"edgectl/store"

	"github.com/hashicorp/go-hclog"
)

// The dial (CreateCircuitV2Request): an SDK client (or a tunneler) dials a
// service through an edge router, and the router asks this node for a
// circuit with the client's Dial session. The steps, as OpenZiti's
// network.CreateCircuit numbers them, are those of dial below; routeOn
// sends one attempt's routes and waits for their results, which arrive on
// each router's reader (routeResult).

// defaultRouteTimeout bounds a route's answer (Config.RouteTimeout).
const defaultRouteTimeout = 10 * time.Second

// defaultDialTimeout bounds a dial's routing, every attempt together
// (Config.DialTimeout), as OpenZiti's controller bounds it with one
// deadline whose time left each route carries. It is shorter than
// OpenZiti's (its route timeout, 10 s): an answer must reach the client
// while it still waits (sdk-golang's Dial waits 5 s, its router 30 s). A
// circuit answered after the client gave up is routed end to end and
// never used, and the host's SDK waits for that circuit's start before it
// accepts another dial (a `ziti tunnel host` up to 3 minutes): the service
// takes no new dial meanwhile. Past the deadline the dial is refused and
// unrouted, and its egress router, told the time left, gives up its dial
// of the host by then too.
const defaultDialTimeout = 4 * time.Second

// dial handles CreateCircuitV2Request.
func (m *Manager) dial(r *Router, msg *ctrlchan.Message) {
	m.dialing.Add(1) // until answered (Close waits for it)
	defer m.dialing.Add(-1)
	start := time.Now()
	events := m.dialEvents(r, start)
	// A refusal is recorded (event, metric, log) before the router hears it.
	fail := func(err error, circuitID string) {
		events.failed(err, circuitID)
		m.metrics.dials.WithLabelValues("refused").Inc()
		m.sampler.at(hclog.Info, "dial", r.ID, "dial refused", "router", r.ID, "reason", err.Error())
		reply := edgeError(err)
		if circuitID != "" {
			reply.Headers.PutString(wire.CircuitIDHeader, circuitID)
		}
		_ = m.reply(r, msg, reply)
	}

	// 1: Decode the request.
	req, err := wire.DecodeCreateCircuitV2Request(msg.Headers)
	if err != nil {
		fail(err, "")
		return
	}

	// 2: Authorize: a Dial session of a live API session, whose identity
	// may reach the service through this router (session.go).
	tx := m.cfg.Store.Read()
	s, as, err := m.sessionOf(tx, req.SessionToken, req.APISessionToken)
	events.session(s)
	if err == nil && s.Type != policy.Dial {
		err = refusedSession(wire.ErrWrongSessionType, "the session is a %s session, not Dial", s.Type)
	}
	if err == nil {
		if err = mayUseRouter(tx, s, r.ID); err != nil {
			m.refuseRequest(r, reqDial, whyRouterNotAllowed, "identity "+s.IdentityID+" may not use this router for service "+s.ServiceID, false)
		}
	}
	if err == nil {
		err = encryptionKeySent(tx, s.ServiceID, req.PeerData, "the client")
	}
	if err != nil {
		fail(err, "")
		return
	}

	// 3 to 6: Route the circuit (routeCircuit).
	ci := &Circuit{ID: auth.NewID(), IngressRouterID: r.ID, ServiceID: s.ServiceID, IdentityID: s.IdentityID, SessionID: s.ID,
		APISessionID: as.ID, CreatedAt: m.cfg.Now().UTC()}
	result, again, err := m.routeCircuit(r, ci, req.TerminatorInstanceID, req.PeerData, events)
	if err != nil {
		fail(err, ci.ID)
		return
	}
	if again != "" {
		defer m.moveLater(ci.ID, again)
	}

	// 7: Answer with the circuit's id, its ingress and the host's peer
	// data.
	resp := ctrlchan.NewMessage(wire.CreateCircuitV2ResponseType, nil)
	resp.Headers = wire.CreateCircuitV2Response(ci.ID, ci.IngressID, m.peerData(ci.TerminatorID, result))
	m.answerDial(r, msg, resp, ci, events, start)
}

// answerDial sends the answer of the dial that made circuit ci (an SDK's or
// a router tunneler's) and counts the circuit routed; when the ingress
// router does not take the answer the circuit ends.
func (m *Manager) answerDial(r *Router, msg, resp *ctrlchan.Message, ci *Circuit, events *dialEvents, start time.Time) {
	if err := m.reply(r, msg, resp); err != nil {
		m.endCircuit(ci.ID, "the ingress router did not take the answer", true, false)
		return
	}
	m.metrics.dials.WithLabelValues("routed").Inc()
	events.created(ci)
	m.metrics.dialSeconds.Observe(time.Since(start).Seconds())
	m.log.Debug("circuit routed", "circuit", ci.ID, "path", strings.Join(ci.Path, ">"), "service", ci.ServiceID, "terminator", ci.TerminatorID, "took", time.Since(start))
}

// routeCircuit routes circuit ci (its id, ingress router r, service and
// identity set) for a dial from router r: steps 3 to 6 of dial, shared with
// the dial of a router's own tunneler (tunnel.go). It returns the egress
// router's result, and a move asked for while it routed (again), for the
// caller to start once it has answered (moveLater); on an error the circuit
// is gone and the caller answers the error with ci.ID. events learns of
// each failed attempt (a failure after one is the routers').
func (m *Manager) routeCircuit(r *Router, ci *Circuit, instanceID string, peerData map[uint32][]byte, events *dialEvents) (result *ctrlchan.Message, again string, err error) {
	// 3: Reserve the circuit, building, before any route goes out: a
	// fault, a confirmation or an end may come before the results.
	m.circuits.reserve(ci)

	// 4: Pick a terminator and a path to its router, and route the circuit
	// on it. Two attempts, as OpenZiti's: a terminator that fails is left
	// out of the second, and one its router no longer has is removed.
	failed, shun := map[string]bool{}, map[string]bool{}
	deadline := time.Now().Add(m.cfg.DialTimeout)
	var routeErr error
	var held *heldEgress // the egress router of a failed attempt, not yet unrouted
	giveUp := func(err error) (*ctrlchan.Message, string, error) {
		if held != nil {
			m.unroute(held.router, ci.ID, true)
		}
		m.circuits.abandon(ci.ID)
		return nil, "", err
	}
	for attempt := uint32(0); ; attempt++ {
		left := min(time.Until(deadline), m.cfg.RouteTimeout)
		if left <= 0 {
			return giveUp(fmt.Errorf("the dial was not routed within %s: %s", m.cfg.DialTimeout, routeErr))
		}

		// 4.a: Pick (package path).
		tx := m.cfg.Store.Read()
		t, p, err := path.Pick(m.graph(tx, shun), tx, ci.ServiceID, r.ID, instanceID, failed, hostKeeps(tx, ci.ServiceID))
		if err != nil {
			if attempt > 0 {
				err = fmt.Errorf("%w (after %d failed attempts)", err, attempt)
			}
			return giveUp(err)
		}
		ci.TerminatorID, ci.IngressID, ci.EgressID = t.ID, auth.NewToken()[:22], auth.NewToken()[:22]
		ci.Path, ci.Links = p.Nodes, p.Links
		if held != nil {
			if held.router == p.Nodes[len(p.Nodes)-1] && held.terminator == t.ID {
				ci.EgressID = held.address // the router finds its dial of the host there
			} else {
				m.unroute(held.router, ci.ID, true)
			}
			held = nil
		}

		// 4.b: Route on every router of the path and wait for the results,
		// within the dial's time left.
		answers := m.circuits.attempt(ci)
		result, routeErr = m.routeOn(ci, attempt, &wire.Egress{Binding: t.Binding, Address: ci.EgressID, Destination: t.Address, PeerData: peerData}, answers, left)
		if routeErr == nil {
			break
		}

		// 4.c: Unroute the failed attempt, and learn from it: remove a
		// terminator its router no longer has, leave out the terminator if
		// it failed (a single router's path: always) and the links of a
		// route a router refused (one may be gone before its fault came).
		// An egress router that answered, with its terminator still in the
		// running, is held (heldEgress): unrouted only if the next attempt
		// does not end there.
		var re *routeError
		isRouteErr := errors.As(routeErr, &re)
		if !isRouteErr || re.egress || len(ci.Path) == 1 {
			failed[t.ID] = true
		}
		egress := ci.Path[len(ci.Path)-1]
		if isRouteErr && !re.egressSilent && !failed[t.ID] {
			held = &heldEgress{router: egress, terminator: t.ID, address: ci.EgressID}
		}
		for _, id := range ci.Path {
			if held == nil || id != egress {
				m.unroute(id, ci.ID, true)
			}
		}
		m.circuits.retract(ci.ID)
		events.attemptFailed()
		if result != nil {
			if code, ok := result.Headers[wire.RouteResultErrorCodeHeader]; ok && len(code) == 1 && code[0] == wire.RouteErrInvalidTerminator && t.IsSystem {
				m.removeTerminator(t, "its router no longer has it")
			}
		}
		avoid(shun, routeErr)
		if why := m.circuits.endedWhy(ci.ID); why != "" {
			return giveUp(fmt.Errorf("the circuit ended while it was routed: %s", why))
		}
		if attempt+1 >= 2 || r.channel().Err() != nil {
			return giveUp(fmt.Errorf("the host could not be reached: %s", routeErr))
		}
	}

	// 5: The host's peer data must carry its public key when the service
	// requires encryption, as the client's must (the host's SDK sends it
	// with its terminator, or its router with the route's answer).
	if err := encryptionKeySent(m.cfg.Store.Read(), ci.ServiceID, m.peerData(ci.TerminatorID, result), "the host"); err != nil {
		m.unrouteAll(ci.Path, ci.ID, true)
		m.circuits.abandon(ci.ID)
		return nil, "", err
	}

	// 6: Make the circuit live, unless it was ended meanwhile; a move
	// asked for meanwhile follows.
	slack := slackOf(r, ci, m.cfg.Now())
	ended, again := m.circuits.promote(ci.ID, slack)
	if ended != "" {
		m.unrouteAll(ci.Path, ci.ID, true)
		return nil, "", fmt.Errorf("the circuit ended while it was routed: %s", ended)
	}
	if slack > 0 {
		m.probeLater(r.ID) // in doubt (probe.go)
	}
	return result, again, nil
}

// peerData is the host's peer data a dial answers with: what its SDK told
// its router when it bound terminator terminatorID (its public key, for
// end-to-end encryption), then what the egress router answered (result),
// as OpenZiti's controller gives it.
func (m *Manager) peerData(terminatorID string, result *ctrlchan.Message) map[uint32][]byte {
	peer := map[uint32][]byte{}
	if t, err := store.GetAs[*store.Terminator](m.cfg.Store.Read(), store.KindTerminator, terminatorID); err == nil {
		for k, v := range t.PeerData {
			peer[k] = v
		}
	}
	for k, v := range result.Headers {
		if k >= 1000 && (k < wire.RouteResultAttemptHeader || k > wire.RouteResultErrorCodeHeader) &&
			(k < wire.TerminatorLocalAddressHeader || k > wire.InitiatorRemoteAddressHeader) {
			peer[uint32(k)] = v
		}
	}
	return peer
}

// routeError is a route a router of the path refused or did not answer:
// suspect are the links its route named (one may be gone before its fault
// reached this node), for the next attempt to avoid.
type routeError struct {
	err     error
	suspect []string
	result  *ctrlchan.Message // the refusal, if there was one
	// egress: the refusal is the egress router's with a terminator's
	// error code, or the egress router did not answer: the terminator
	// failed, not (only) the path.
	egress bool
	// egressSilent: the egress router had not answered (or left): its
	// dial of the host may still be under way.
	egressSilent bool
}

// heldEgress is the egress router of a failed attempt that answered, its
// terminator not failed (a route refused for a link of the path: the
// router had already dialed the host). OpenZiti's routers know a circuit
// by its id alone: an Unroute of the failed attempt there, and the host's
// end of that attempt closing, could unregister the next attempt's dial
// of the same circuit on the same router, leaving the circuit with no way
// back from the host (seen in the data-plane chaos: a link cut during a
// dial, the dial answered and the circuit idle for good). So, as OpenZiti's
// controller does, the router is not unrouted between attempts when the
// next one ends there too, and that attempt gives the same egress address:
// the router finds its earlier dial of the host there and routes to it,
// rather than dialing the host twice for one circuit.
type heldEgress struct {
	router, terminator, address string
}

func (e *routeError) Error() string { return e.err.Error() }

// avoid adds the suspect links of a failed route to links to avoid.
func avoid(links map[string]bool, err error) {
	var re *routeError
	if errors.As(err, &re) {
		for _, l := range re.suspect {
			links[l] = true
		}
	}
}

// routeOn sends a circuit's routes to every router of its path and waits
// for each one's result (answers collects them) for up to wait, which the
// routes carry (the egress router's dial of the host gives up by then): it
// returns the egress router's result, or why the route failed (a
// *routeError when a router refused or did not answer), the latter once
// the egress router has answered too (failure), so that the attempt's
// Unroute reaches it after its dial of the host.
func (m *Manager) routeOn(ci *Circuit, attempt uint32, egress *wire.Egress, answers chan routeAnswer, wait time.Duration) (*ctrlchan.Message, error) {
	msgs := ci.hops().Routes(attempt, egress, wait)
	waiting := map[string]bool{}
	for i, id := range ci.Path {
		r := m.router(id)
		if r == nil {
			return nil, fmt.Errorf("router %s of the path is not connected to this node", id)
		}
		if err := m.send(r, ctrlchan.NewMessage(wire.RouteType, msgs[i])); err != nil {
			return nil, fmt.Errorf("the route could not be sent to router %s: %w", id, err)
		}
		waiting[id] = true
	}
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	egressID := ci.Path[len(ci.Path)-1]
	var last, failedMsg *ctrlchan.Message
	var failed *routeError
	// failure takes router id's failure: it is answered at once when the
	// egress router has answered (or is the one that failed); else once it
	// has. The egress dials the host before it sets its route: an Unroute
	// that reaches it during that dial is lost, and a host that accepted
	// is left with a connection no circuit will start (a `ziti tunnel
	// host` then takes no other dial for minutes).
	failure := func(id string, msg *ctrlchan.Message, err *routeError) bool {
		if failed == nil {
			failedMsg, failed = msg, err
		}
		if id == egressID || !waiting[egressID] {
			return true
		}
		clear(waiting)
		waiting[egressID] = true
		return false
	}
	for len(waiting) > 0 {
		select {
		case a := <-answers:
			if !waiting[a.router] {
				continue
			}
			if a.msg == nil {
				if failure(a.router, nil, &routeError{err: fmt.Errorf("router %s of the path left", a.router),
					suspect: ci.hops().LinksAt(slices.Index(ci.Path, a.router)), egress: a.router == egressID,
					egressSilent: a.router == egressID}) {
					return failedMsg, failed
				}
				continue
			}
			if n, ok := a.msg.Headers.Uint32(wire.RouteResultAttemptHeader); ok && n != attempt {
				continue
			}
			delete(waiting, a.router)
			if _, ok := a.msg.Headers[wire.RouteResultSuccessHeader]; !ok {
				reason, _ := a.msg.Headers.String(wire.RouteResultErrorHeader)
				code, _ := a.msg.Headers[wire.RouteResultErrorCodeHeader]
				if failure(a.router, a.msg, &routeError{err: fmt.Errorf("router %s: %s", a.router, reason),
					suspect: ci.hops().LinksAt(slices.Index(ci.Path, a.router)), result: a.msg,
					egress: a.router == egressID && len(code) == 1 && code[0] != 0}) {
					return failedMsg, failed
				}
				continue
			}
			if a.router == egressID {
				last = a.msg
			}
		case <-timeout.C:
			if failed != nil {
				failed.egressSilent = waiting[egressID]
				return failedMsg, failed
			}
			var suspect, silent []string
			for _, id := range ci.Path {
				if waiting[id] {
					silent = append(silent, id)
					suspect = append(suspect, ci.hops().LinksAt(slices.Index(ci.Path, id))...)
				}
			}
			return nil, &routeError{err: fmt.Errorf("router %s of the path (%s) did not answer within %s",
				strings.Join(silent, ", "), strings.Join(ci.Path, " > "), wait.Round(time.Millisecond)), suspect: suspect,
				egress: waiting[egressID], egressSilent: waiting[egressID]}
		}
	}
	if failed != nil {
		return failedMsg, failed
	}
	return last, nil
}

// routeResult hands a router's route result to the dial waiting for it.
func (m *Manager) routeResult(r *Router, msg *ctrlchan.Message) {
	id := string(msg.Body)
	if m.foreignCircuit(r, reqRouteResult, id) {
		return
	}
	if !m.circuits.deliver(id, routeAnswer{router: r.ID, msg: msg}) {
		// A result nobody waits for: a late one, after the dial gave up
		// (a move's late results are of circuits that go on, or that the
		// move unrouted when it gave up).
		if !m.circuits.keeps(id, r.ID) {
			if n, _ := msg.Headers.Uint32(wire.RouteResultAttemptHeader); n != wire.SmartRerouteAttempt {
				m.unroute(r.ID, id, true)
			}
		}
	}
}

// encryptionKeySent refuses a dial of a service that requires end-to-end
// encryption when who (the client, in its dial; the host, with its
// terminator or its router's answer) sent no public key in its peer data,
// as OpenZiti's controller does: the circuit could never be encrypted.
func encryptionKeySent(tx *store.Tx, serviceID string, peerData map[uint32][]byte, who string) error {
	svc, err := store.GetAs[*store.Service](tx, store.KindService, serviceID)
	if err != nil || !svc.EncryptionRequired || len(peerData[wire.PublicKeyPeerData]) > 0 {
		return nil
	}
	return refusedSession(wire.ErrEncryptionDataMissing, "encryption required on service %s, %s sent no public key", serviceID, who)
}
