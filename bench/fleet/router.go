package fleet

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"

	"google.golang.org/protobuf/encoding/protowire"
)

// Router is one simulated edge router: its enrolled identity, and a
// control channel to each controller node, opened again whenever it closes
// (as `ziti router` does in a cluster), until the context given to Run
// ends.
//
// On each channel it does what a `ziti router` does there: the hello with
// its certificate, version and metadata; heartbeats answered (ctrlchan);
// the edge hello answered; its links reported; routes answered at once with
// success; its terminators validated. On its preferred node's channel it
// subscribes to the router data model and applies it (services kept, other
// events counted). What its SDK clients would ask is asked through
// CreateTerminator and Dial, on the preferred node's channel (another
// node's while that one is down).
type Router struct {
	ID, Name string
	cert     tls.Certificate
	ctrls    []*ctrlConn // one per node; ctrls[pref] is the preferred
	pref     int

	mu          sync.Mutex
	index       uint64 // the data model index reached
	timeline    string // the data model's timeline
	services    map[string]string
	terminators map[string]bool      // made through this router, still held
	links       []wire.RouterLink    // the links it dialed, as it reports them
	accepted    map[string]bool      // the links other routers dialed to it
	routed      map[string]time.Time // circuit id → when its last Route came
	watch       string               // a name prefix whose data model events are timed
	seen        map[string]time.Time // names starting with watch → when first in the model

	// Counters of what the controller sent; FullBytes and ChangeBytes are
	// the bytes of the data model's full states and change sets.
	Routes, Unroutes, Validations, DataStates, ChangeSets, Events atomic.Int64
	FullBytes, ChangeBytes                                        atomic.Int64
}

// ctrlConn is the router's channel to one node.
type ctrlConn struct {
	addr string // HOST:PORT of the node's control channel listener

	mu        sync.Mutex
	ch        *ctrlchan.Channel
	conns     int // channels opened so far
	dataConns int // the channel number that last got a full state or a change set
	lastErr   error
	circuits  int // circuits this node made for the router
}

// newRouter is router id with cert, connecting to the nodes at ctrls and
// preferring ctrls[pref].
func newRouter(id, name string, cert tls.Certificate, ctrls []string, pref int) *Router {
	r := &Router{ID: id, Name: name, cert: cert, pref: pref % len(ctrls)}
	for _, a := range ctrls {
		r.ctrls = append(r.ctrls, &ctrlConn{addr: a})
	}
	return r
}

// open is c's open channel (nil when it has none).
func (c *ctrlConn) open() *ctrlchan.Channel {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		return nil
	}
	select {
	case <-c.ch.Done():
		return nil
	default:
		return c.ch
	}
}

// version is the router's hello version (VersionInfo: version|revision|
// buildDate|os|arch): the OpenZiti release whose protocol it speaks.
const version = "v1.7.2|fleet|2025-01-01 00:00:00|linux|amd64"

// subscribeFor is the length of a data model subscription; the router
// renews it at half.
const subscribeFor = 360 * time.Second

// Run keeps the router's control channels open until ctx ends.
func (r *Router) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i, c := range r.ctrls {
		wg.Add(1)
		go func() { defer wg.Done(); r.keep(ctx, c, i == r.pref) }()
	}
	wg.Wait()
}

// keep keeps c's channel open until ctx ends: it dials again (backing off
// up to a second) each time the channel closes. On the preferred node's
// channel the router subscribes to the data model (and renews at half).
func (r *Router) keep(ctx context.Context, c *ctrlConn, preferred bool) {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		ch, err := r.open(ctx, c, preferred)
		if err != nil {
			c.mu.Lock()
			c.lastErr = err
			c.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		renew := time.NewTicker(subscribeFor / 2)
	serve:
		for {
			select {
			case <-ctx.Done():
				ch.Close()
			case <-ch.Done():
				break serve
			case <-renew.C:
				if preferred {
					r.subscribe(ch, true)
				}
			}
		}
		renew.Stop()
	}
}

// open dials node c and opens a control channel.
func (r *Router) open(ctx context.Context, c *ctrlConn, preferred bool) (*ctrlchan.Channel, error) {
	d := tls.Dialer{Config: &tls.Config{Certificates: []tls.Certificate{r.cert}, NextProtos: []string{"ziti-ctrl"},
		// A fresh CA per run on loopback: the controller's certificate is
		// not what is measured.
		InsecureSkipVerify: true}}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", c.addr)
	if err != nil {
		return nil, err
	}
	h := ctrlchan.Headers{ctrlchan.HeaderHelloVersion: []byte(version), wire.RouterMetadataHeader: wire.RouterMetadata(wire.CapLinkManagement)}
	handlers := map[int32]ctrlchan.Handler{
		wire.ServerHelloType:                  r.serverHello,
		wire.DataStateType:                    func(_ *ctrlchan.Channel, m *ctrlchan.Message) { r.dataState(c, m, true) },
		wire.DataStateChangeSetType:           func(_ *ctrlchan.Channel, m *ctrlchan.Message) { r.dataState(c, m, false) },
		wire.RouteType:                        r.route,
		wire.UnrouteType:                      func(*ctrlchan.Channel, *ctrlchan.Message) { r.Unroutes.Add(1) },
		wire.ValidateTerminatorsV2RequestType: r.validate,
		wire.InspectRequestType:               r.inspect,
	}
	ch, _, err := ctrlchan.Open(conn, r.ID, h, time.Now().Add(10*time.Second), ctrlchan.Options{QueueSize: 1024, MaxBodySize: 1 << 30}, handlers, nil) // a `ziti router` reads any size: a full data model of a million identities is ~40 MB
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.ch = ch
	c.conns++
	c.mu.Unlock()
	r.mu.Lock()
	links := r.links
	r.mu.Unlock()
	if preferred {
		r.subscribe(ch, false)
	}
	if len(links) > 0 {
		_ = ch.Send(ctrlchan.NewMessage(wire.RouterLinksType, wire.EncodeRouterLinks(links)))
	}
	return ch, nil
}

// subscribe asks for the router data model from the index the router has.
func (r *Router) subscribe(ch *ctrlchan.Channel, renew bool) {
	r.mu.Lock()
	req := wire.SubscribeRequest{CurrentIndex: r.index, Duration: subscribeFor, Renew: renew, TimelineID: r.timeline}
	r.mu.Unlock()
	_ = ch.Send(ctrlchan.NewMessage(wire.SubscribeToDataModelRequestType, wire.Subscribe(req)))
}

// serverHello answers the edge hello with the router's client hello, which
// says, as a `ziti router` does, that the router keeps the router data
// model and the index it holds: without that OpenZiti's controller sends
// the full state on subscription but never a change set.
func (r *Router) serverHello(ch *ctrlchan.Channel, m *ctrlchan.Message) {
	reply := ctrlchan.NewMessage(wire.ClientHelloType, wire.ClientHelloMsg("v1.7.2", "fleet-"+r.Name, []string{"tls"}))
	r.mu.Lock()
	index := r.index
	r.mu.Unlock()
	reply.Headers.PutBool(wire.RouterDataModelHeader, true)
	reply.Headers.PutUint64(wire.RouterDataModelIndexHeader, index)
	_ = ch.Reply(m, reply)
}

// dataState applies a full state (full) or a change set: the services are
// kept (a full state replaces them), the other events counted.
func (r *Router) dataState(c *ctrlConn, m *ctrlchan.Message, full bool) {
	sum, err := wire.DecodeDataStateSummary(m.Body, full)
	if err != nil {
		return
	}
	eventsField := protowire.Number(3)
	if full {
		eventsField = 1
		r.DataStates.Add(1)
	} else {
		r.ChangeSets.Add(1)
	}
	r.Events.Add(int64(sum.Events))
	if full {
		r.FullBytes.Add(int64(len(m.Body)))
	} else {
		r.ChangeBytes.Add(int64(len(m.Body)))
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if full {
		r.services = map[string]string{}
		r.timeline = sum.Timeline
	}
	if r.services == nil {
		r.services = map[string]string{}
	}
	_ = wire.Fields(m.Body, func(num protowire.Number, _ uint64, ev []byte) error {
		if num == eventsField {
			applyService(r.services, ev)
			if r.watch != "" {
				r.see(ev, now)
			}
		}
		return nil
	})
	if sum.Index > r.index || full {
		r.index = sum.Index
	}
	c.mu.Lock()
	c.dataConns = c.conns
	c.mu.Unlock()
}

// applyService applies one data model event to services when its model is
// a service (DataState.Event: action 1, service 11 with id 1, name 2).
func applyService(services map[string]string, ev []byte) {
	var action uint64
	var svc []byte
	_ = wire.Fields(ev, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			action = v
		case 11:
			svc = raw
		}
		return nil
	})
	if svc == nil {
		return
	}
	var id, name string
	_ = wire.Fields(svc, func(num protowire.Number, _ uint64, raw []byte) error {
		switch num {
		case 1:
			id = string(raw)
		case 2:
			name = string(raw)
		}
		return nil
	})
	if wire.Action(action) == wire.Delete {
		delete(services, id)
	} else {
		services[id] = name
	}
}

// see records when a data model event first named a model (identity,
// service, service policy, posture check, config type or config: name is
// field 2 of each) whose name starts with r.watch. r.mu is held.
func (r *Router) see(ev []byte, now time.Time) {
	_ = wire.Fields(ev, func(num protowire.Number, _ uint64, raw []byte) error {
		switch num {
		case 10, 11, 12, 13, 17, 18:
			_ = wire.Fields(raw, func(f protowire.Number, _ uint64, v []byte) error {
				if name := string(v); f == 2 && strings.HasPrefix(name, r.watch) {
					if _, ok := r.seen[name]; !ok {
						r.seen[name] = now
					}
				}
				return nil
			})
		}
		return nil
	})
}

// Watch starts timing the data model events of models whose names start
// with prefix (Seen reads them).
func (r *Router) Watch(prefix string) {
	r.mu.Lock()
	r.watch, r.seen = prefix, map[string]time.Time{}
	r.mu.Unlock()
}

// Seen is when the router's data model first held a model named name.
func (r *Router) Seen(name string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.seen[name]
	return t, ok
}

// Routed is when the router last got a Route of circuit id.
func (r *Router) Routed(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.routed[id]
	return t, ok
}

// forget drops the data model the router holds, so that its next
// subscription asks for the full state.
func (r *Router) forget() {
	r.mu.Lock()
	r.index, r.timeline, r.services = 0, "", nil
	r.mu.Unlock()
}

// route answers a route at once with success.
func (r *Router) route(ch *ctrlchan.Channel, m *ctrlchan.Message) {
	r.Routes.Add(1)
	id, attempt, _ := wire.DecodeRoute(m.Body)
	now := time.Now()
	r.mu.Lock()
	if r.routed == nil {
		r.routed = map[string]time.Time{}
	}
	r.routed[id] = now
	r.mu.Unlock()
	res := ctrlchan.NewMessage(wire.RouteResultType, []byte(id))
	res.Headers.PutUint32(wire.RouteResultAttemptHeader, attempt)
	res.Headers.PutBool(wire.RouteResultSuccessHeader, true)
	res.Priority = ctrlchan.Urgent
	_ = ch.Reply(m, res)
}

// validate answers the controller's terminator validation: the terminators
// this router made are valid, any other unknown.
func (r *Router) validate(ch *ctrlchan.Channel, m *ctrlchan.Message) {
	r.Validations.Add(1)
	refs, err := wire.DecodeValidateTerminatorsV2(m.Body)
	if err != nil {
		return
	}
	states := make(map[string]wire.RouterTerminatorState, len(refs))
	r.mu.Lock()
	for _, t := range refs {
		if r.terminators[t.ID] {
			states[t.ID] = wire.RouterTerminatorState{Valid: true}
		} else {
			states[t.ID] = wire.RouterTerminatorState{Reason: wire.InvalidUnknownTerminator, Detail: "not made by this router"}
		}
	}
	r.mu.Unlock()
	_ = ch.Reply(m, ctrlchan.NewMessage(wire.ValidateTerminatorsV2ResponseType, wire.ValidateTerminatorsV2Response(states)))
}

// channel is the channel the router's clients' requests go on: the
// preferred node's, else another open one (nil when none is open).
func (r *Router) channel() *ctrlchan.Channel {
	ch, _ := r.channelOf()
	return ch
}

// channelOf is the router's channel and the node it reaches (nil, nil when
// it has none).
func (r *Router) channelOf() (*ctrlchan.Channel, *ctrlConn) {
	for i := range r.ctrls {
		c := r.ctrls[(r.pref+i)%len(r.ctrls)]
		if ch := c.open(); ch != nil {
			return ch, c
		}
	}
	return nil, nil
}

// CircuitsByNode is how many circuits each node (in the order of the
// fleet's Ctrl) made for the router.
func (r *Router) CircuitsByNode() []int {
	out := make([]int, len(r.ctrls))
	for i, c := range r.ctrls {
		c.mu.Lock()
		out[i] = c.circuits
		c.mu.Unlock()
	}
	return out
}

// ErrNotConnected is returned for a request while the router has no channel.
var ErrNotConnected = errors.New("fleet: the router has no control channel")

// request sends m on the router's channel and waits for the answer.
func (r *Router) request(ctx context.Context, m *ctrlchan.Message) (*ctrlchan.Message, error) {
	ch := r.channel()
	if ch == nil {
		return nil, ErrNotConnected
	}
	return ch.Request(ctx, m)
}

// ErrBusy is a terminator create the controller refused as busy (its
// rate limiter): the router retries it.
var ErrBusy = errors.New("fleet: the controller is busy")

// CreateTerminator asks for a terminator of host h's Bind session at
// address (also its id), as the router does when an SDK client binds.
func (r *Router) CreateTerminator(ctx context.Context, h *Host, address string) error {
	// The host's public key in the terminator's peer data, as an SDK binds
	// a service that requires encryption.
	req := &wire.CreateTerminatorV2{Address: address, SessionToken: h.BindSession, APISessionToken: h.APISession,
		PeerData: map[uint32][]byte{publicKeyHeader: h.publicKey()}}
	reply, err := r.request(ctx, ctrlchan.NewMessage(wire.CreateTerminatorV2RequestType, wire.EncodeCreateTerminatorV2(req)))
	if err != nil {
		return err
	}
	if reply.ContentType != wire.CreateTerminatorV2ResponseType {
		return fmt.Errorf("terminator %s: answered content type %d: %s", address, reply.ContentType, reply.Body)
	}
	_, result, msg, err := wire.DecodeCreateTerminatorV2Response(reply.Body)
	switch {
	case err != nil:
		return err
	case result == wire.TerminatorBusy:
		return fmt.Errorf("%w: %s", ErrBusy, msg)
	case result != wire.TerminatorCreated:
		return fmt.Errorf("terminator %s: result %d: %s", address, result, msg)
	}
	r.mu.Lock()
	if r.terminators == nil {
		r.terminators = map[string]bool{}
	}
	r.terminators[address] = true
	r.mu.Unlock()
	return nil
}

// Dial asks for a circuit to service number svc for dialer d (its Dial
// session of that service), as the router does when an SDK client dials;
// it returns the circuit's id.
func (r *Router) Dial(ctx context.Context, d *Host, svc int) (string, error) {
	m := ctrlchan.NewMessage(wire.CreateCircuitV2RequestType, nil)
	m.Headers.PutString(wire.CreateCircuitReqSessionTokenHeader, d.DialSessions[svc])
	m.Headers.PutString(wire.CreateCircuitReqAPISessionTokenHeader, d.APISession)
	// The client's public key, as an SDK sends it for end-to-end
	// encryption (edge_client_pb.HeaderId_PublicKey): a service that
	// requires encryption is refused without it.
	m.Headers[wire.CreateCircuitPeerDataHeader] = wire.EncodeU32Map(map[uint32][]byte{publicKeyHeader: d.publicKey()})
	ch, node := r.channelOf()
	if ch == nil {
		return "", ErrNotConnected
	}
	reply, err := ch.Request(ctx, m)
	if err != nil {
		return "", err
	}
	if reply.ContentType != wire.CreateCircuitV2ResponseType {
		return "", fmt.Errorf("dial refused (%d): %s", reply.ContentType, strings.TrimSpace(string(reply.Body)))
	}
	node.mu.Lock()
	node.circuits++
	node.mu.Unlock()
	id, _ := reply.Headers.String(wire.CreateCircuitRespCircuitIDHeader)
	return id, nil
}

// publicKeyHeader is the peer data key of the dialing client's public key.
const publicKeyHeader = 1003

// Fault reports circuit id as failed at its ingress (the client went), so
// that the controller ends it.
func (r *Router) Fault(id string) error {
	ch := r.channel()
	if ch == nil {
		return ErrNotConnected
	}
	m := ctrlchan.NewMessage(wire.FaultType, wire.EncodeFault(wire.Fault{Subject: 0, ID: id}))
	return ch.Send(m)
}

// setLinks sets the links the router reports, and reports them now to
// every node it is connected to.
func (r *Router) setLinks(links []wire.RouterLink) {
	r.mu.Lock()
	r.links = links
	r.mu.Unlock()
	for _, c := range r.ctrls {
		if ch := c.open(); ch != nil {
			_ = ch.Send(ctrlchan.NewMessage(wire.RouterLinksType, wire.EncodeRouterLinks(links)))
		}
	}
}

// accept notes link id, which another router dialed to this one.
func (r *Router) accept(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.accepted == nil {
		r.accepted = map[string]bool{}
	}
	r.accepted[id] = true
}

// linkLost is the router's end of link id gone, as when the router at the
// other end dies: OpenZiti's router reports a link fault to every node
// when a link it dialed fails (its link registry), and nothing for a link
// it accepted (the node asks it, with a links inspection, once the router
// that dialed it is away). It returns what restores the link.
func (r *Router) linkLost(id string) (restore func()) {
	r.mu.Lock()
	var dialed *wire.RouterLink
	for i, l := range r.links {
		if l.ID == id {
			dialed = &l
			r.links = append(r.links[:i:i], r.links[i+1:]...)
			break
		}
	}
	accepted := r.accepted[id]
	delete(r.accepted, id)
	r.mu.Unlock()
	if dialed != nil {
		fault := ctrlchan.NewMessage(wire.FaultType, wire.EncodeFault(wire.Fault{Subject: wire.LinkFault, ID: id, Iteration: dialed.Iteration}))
		for _, c := range r.ctrls {
			if ch := c.open(); ch != nil {
				_ = ch.Send(fault)
			}
		}
	}
	return func() {
		switch {
		case dialed != nil:
			r.mu.Lock()
			links := append(slices.Clone(r.links), *dialed)
			r.mu.Unlock()
			r.setLinks(links)
		case accepted:
			r.accept(id)
		}
	}
}

// inspect answers an inspection as a `ziti router` does, for the value
// "links" (the links it holds, dialed and accepted); other values are
// named in its errors.
func (r *Router) inspect(ch *ctrlchan.Channel, m *ctrlchan.Message) {
	values, err := wire.DecodeInspectRequest(m.Body)
	if err != nil {
		return
	}
	resp := wire.InspectResponse{Success: true, Values: map[string]string{}}
	for _, v := range values {
		if v != "links" {
			resp.Errors = append(resp.Errors, "fleet router: no inspection value "+v)
			continue
		}
		type link struct {
			ID     string `json:"id"`
			Dest   string `json:"dest"`
			Dialed bool   `json:"dialed"`
		}
		out := struct {
			Links []link `json:"links"`
		}{Links: []link{}}
		r.mu.Lock()
		for _, l := range r.links {
			out.Links = append(out.Links, link{ID: l.ID, Dest: l.DestRouterID, Dialed: true})
		}
		for id := range r.accepted {
			out.Links = append(out.Links, link{ID: id})
		}
		r.mu.Unlock()
		b, _ := json.Marshal(out)
		resp.Values[v] = string(b)
	}
	_ = ch.Reply(m, ctrlchan.NewMessage(wire.InspectResponseType, wire.EncodeInspectResponse(resp)))
}

// State is what the router knows of itself at one moment.
type State struct {
	// Connected is true when a channel to every node is open.
	Connected bool
	// Conns is the number of channels opened, to all nodes; Synced is
	// true when the current channel to the preferred node got a full
	// state or a change set.
	Conns       int
	Synced      bool
	Index       uint64
	Services    map[string]string
	Terminators int
	LastErr     error
}

// State reads the router's state.
func (r *Router) State() State {
	st := State{Connected: true}
	for i, c := range r.ctrls {
		open := c.open() != nil
		c.mu.Lock()
		st.Connected = st.Connected && open
		st.Conns += c.conns
		if i == r.pref {
			st.Synced = c.conns > 0 && c.dataConns == c.conns
		}
		if c.lastErr != nil && !open {
			st.LastErr = c.lastErr
		}
		c.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st.Services = make(map[string]string, len(r.services))
	for k, v := range r.services {
		st.Services[k] = v
	}
	st.Index, st.Terminators = r.index, len(r.terminators)
	return st
}

// TerminatorIDs are the terminators this router made.
func (r *Router) TerminatorIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.terminators))
	for id := range r.terminators {
		out = append(out, id)
	}
	return out
}
