package dataplane

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"edgectl/auth"
	"edgectl/cluster"
	"edgectl/ctrlchan"
	"edgectl/dataplane/dpevent"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/encoding/protowire"
)

// The fake-router harness: a Manager with routers in process, each a
// control channel over net.Pipe whose far end is a fakeRouter speaking the
// frames by hand. Routers answer their routes (a route policy decides how),
// and record every message this node sends them, so that a test can check
// which router holds which circuit's route.

// testNet is a Manager, its model and the session of one dialing client.
type testNet struct {
	t       *testing.T
	m       *Manager
	s       *store.Store
	routers map[string]*fakeRouter
	// session and apiSession are the tokens a dial presents.
	session, apiSession string
	key                 *ecdsa.PrivateKey // signs service sessions
	proposer            *localProposer
	events              *dpevent.Log // the Manager's, if given one (withEvents)
}

// localProposer applies each command to the FSM at once, in order, as a
// one-member cluster would; the Manager watches the FSM.
type localProposer struct {
	fsm   *fsm.FSM
	mu    sync.Mutex
	index uint64
	moved chan struct{}
	// cmds are the commands proposed, in order.
	cmds [][]byte
	// hold, write-locked by a test, stalls every write (a slow Raft).
	hold sync.RWMutex
}

func (l *localProposer) Apply(_ context.Context, cmd []byte) ([]byte, uint64, error) {
	l.hold.RLock()
	defer l.hold.RUnlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cmds = append(l.cmds, slices.Clone(cmd))
	l.index++
	resp, err := cluster.FSMResult(l.fsm.Apply(&raft.Log{Index: l.index, Term: 1, Type: raft.LogCommand, Data: cmd, AppendedAt: time.Now()}))
	close(l.moved)
	l.moved = make(chan struct{})
	return resp, l.index, err
}

// newLocalProposer is a localProposer of f.
func newLocalProposer(f *fsm.FSM) *localProposer {
	return &localProposer{fsm: f, moved: make(chan struct{})}
}

func (l *localProposer) applied() (uint64, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.index, l.moved
}

// netOption changes the Manager's Config before it starts.
type netOption func(*Config)

// withRouterGrace sets how long a router may be away (Config.RouterGrace).
func withRouterGrace(d time.Duration) netOption {
	return func(c *Config) { c.RouterGrace = d }
}

// newTestNet makes a model with an identity allowed to dial service "svc"
// through any edge router, and a started Manager over it.
func newTestNet(t *testing.T, opts ...netOption) *testNet {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := pki.EncodeKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	s := store.New()
	now := time.Now()
	apiToken := auth.NewToken()
	mustWrite(t, s, func(tx *store.Tx) error {
		if err := tx.EnsureDataPlaneKeys(&store.DataPlaneKeys{TokenKey: make([]byte, 32), SigningKeyPEM: string(keyPEM), KeyID: "k1", TimelineID: "tl"}, now); err != nil {
			return err
		}
		for _, ins := range []struct {
			k *store.Kind
			r store.Record
		}{
			{store.KindIdentity, &store.Identity{Base: store.Base{ID: "client"}, Named: store.Named{Name: "client"}}},
			{store.KindService, &store.Service{Base: store.Base{ID: "svc"}, Named: store.Named{Name: "svc"}}},
			{store.KindEdgeRouterPolicy, &store.EdgeRouterPolicy{Base: store.Base{ID: "erp"}, Named: store.Named{Name: "erp"},
				Semantic: "AnyOf", IdentityRoles: []string{"#all"}, EdgeRouterRoles: []string{"#all"}}},
			{store.KindServiceEdgeRouterPolicy, &store.ServiceEdgeRouterPolicy{Base: store.Base{ID: "serp"}, Named: store.Named{Name: "serp"},
				Semantic: "AnyOf", ServiceRoles: []string{"#all"}, EdgeRouterRoles: []string{"#all"}}},
			{store.KindAPISession, &store.APISession{Base: store.Base{ID: "as"}, TokenHash: auth.HashToken(apiToken), IdentityID: "client"}},
			{store.KindSession, &store.Session{Base: store.Base{ID: "sess"}, APISessionID: "as", IdentityID: "client", ServiceID: "svc", Type: "Dial"}},
		} {
			if err := tx.Insert(ins.k, ins.r); err != nil {
				return fmt.Errorf("%s: %w", ins.k.Entity, err)
			}
		}
		return nil
	})
	session, err := pki.SignServiceAccess(key, "k1", pki.ServiceAccess{ServiceID: "svc", SessionID: "sess", APISessionID: "as",
		IdentityID: "client", Type: "Dial", IssuedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	f := fsm.New(s)
	lp := newLocalProposer(f)
	cfg := Config{NodeID: "node-1", Store: s, AppliedIndex: lp.applied, Writer: fsm.NewWriter(lp, nil), Version: "v0.0.0-test"}
	for _, o := range opts {
		o(&cfg)
	}
	n := &testNet{t: t, m: New(cfg), s: s, routers: map[string]*fakeRouter{}, session: session, apiSession: apiToken, key: key, proposer: lp,
		events: cfg.Events}
	f.Watch(n.m)
	n.m.Start()
	t.Cleanup(n.m.Close)
	return n
}

// mustWrite applies fn in one write transaction.
func mustWrite(t *testing.T, s *store.Store, fn func(tx *store.Tx) error) {
	t.Helper()
	tx := s.Write()
	tx.SetTime(time.Now())
	if err := fn(tx); err != nil {
		tx.Abort()
		t.Fatal(err)
	}
	if err := tx.Finish(); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
}

// fakeRouter is a router's end of its control channel.
type fakeRouter struct {
	t    *testing.T
	id   string
	conn net.Conn
	r    *Router // the Manager's

	wmu sync.Mutex // one frame at a time
	seq int32

	mu    sync.Mutex
	got   []*ctrlchan.Message // every message but heartbeats, in order
	taken int                 // how many of got next returned
	// answer decides the result of a route (nil: success); it runs on
	// the router's reader, and may wait (a route held for a while).
	answer  func(circuitID string, attempt uint32) routeReply
	waiters map[int32]chan *ctrlchan.Message
	// replies answer the node's requests, by content type (the reply
	// function may return nil: no answer).
	replies map[int32]func(*ctrlchan.Message) *ctrlchan.Message
	// reading: while false the router reads nothing (a stalled router).
	reading chan struct{}
}

// routeReply is a fake router's result of one route.
type routeReply struct {
	ok     bool
	code   byte // the error code of a refusal
	reason string
	silent bool // no answer at all
}

// addRouter connects a fake edge router with id (its record made first).
func (n *testNet) addRouter(id string) *fakeRouter {
	n.t.Helper()
	return n.addRouterWith(id, nil)
}

// addRouterWith is addRouter with the fake router set up by prepare
// before it connects.
func (n *testNet) addRouterWith(id string, prepare func(*fakeRouter)) *fakeRouter {
	n.t.Helper()
	if _, err := n.s.Read().Get(store.KindEdgeRouter, id); err != nil {
		mustWrite(n.t, n.s, func(tx *store.Tx) error {
			fp := "fp-" + strings.ToLower(id)
			return tx.Insert(store.KindEdgeRouter, &store.EdgeRouter{Base: store.Base{ID: id}, Named: store.Named{Name: id},
				RouterEnrollment: store.RouterEnrollment{IsVerified: true, Fingerprint: &fp}})
		})
	}
	a, b := net.Pipe()
	fr := &fakeRouter{t: n.t, id: id, conn: b, waiters: map[int32]chan *ctrlchan.Message{}, reading: make(chan struct{}),
		replies: map[int32]func(*ctrlchan.Message) *ctrlchan.Message{
			wire.ServerHelloType: func(*ctrlchan.Message) *ctrlchan.Message {
				b := protowire.AppendTag(nil, 1, protowire.BytesType)
				b = protowire.AppendString(b, "v1.7.2")
				b = protowire.AppendTag(b, 2, protowire.BytesType)
				b = protowire.AppendString(b, "host-"+strings.ToLower(id))
				return ctrlchan.NewMessage(wire.ClientHelloType, b)
			},
			wire.ValidateTerminatorsV2RequestType: func(*ctrlchan.Message) *ctrlchan.Message {
				return ctrlchan.NewMessage(wire.ValidateTerminatorsV2ResponseType, nil)
			},
		}}
	close(fr.reading)
	if prepare != nil {
		prepare(fr)
	}
	hello := ctrlchan.NewMessage(ctrlchan.ContentHello, []byte(id))
	hello.Sequence = ctrlchan.HelloSequence
	go func() { _, _ = b.Write(hello.AppendFrame(nil)) }()
	got, err := ctrlchan.ReadHello(a, time.Now().Add(5*time.Second))
	if err != nil {
		n.t.Fatal(err)
	}
	r := &Router{ID: id, Kind: store.KindEdgeRouter, ConnectedAt: time.Now(), sync: SyncNew, fingerprint: "fp-" + strings.ToLower(id)}
	fr.r = r
	joined := make(chan error, 1)
	go func() { joined <- n.m.join(a, got, r) }()
	if res, err := ctrlchan.ReadMessage(b, ctrlchan.MaxHeadersSize, ctrlchan.MaxBodySize); err != nil || res.ContentType != ctrlchan.ContentResult {
		n.t.Fatalf("router %s: hello answered %+v %v", id, res, err)
	}
	if err := <-joined; err != nil {
		n.t.Fatalf("router %s not joined: %v", id, err)
	}
	go fr.read()
	n.m.onConnect(r)
	go n.m.serve(r)
	n.routers[id] = fr
	n.t.Cleanup(func() { _ = b.Close() })
	return fr
}

// bareRouter connects router r to m with m's handlers and lists it among
// m's routers, as the node does once it admitted a router, but with no
// hello checks and no sync: a fake router for a Manager not started.
func bareRouter(t *testing.T, m *Manager, r *Router) *fakeRouter {
	t.Helper()
	a, b := net.Pipe()
	fr := &fakeRouter{t: t, id: r.ID, conn: b, r: r, waiters: map[int32]chan *ctrlchan.Message{}, reading: make(chan struct{}),
		replies: map[int32]func(*ctrlchan.Message) *ctrlchan.Message{}}
	close(fr.reading)
	hello := ctrlchan.NewMessage(ctrlchan.ContentHello, nil)
	hello.Sequence = ctrlchan.HelloSequence
	go func() { _, _ = b.Write(hello.AppendFrame(nil)) }()
	got, err := ctrlchan.ReadHello(a, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	type accepted struct {
		ch  *ctrlchan.Channel
		err error
	}
	done := make(chan accepted, 1)
	go func() {
		ch, err := ctrlchan.AcceptThen(a, got, nil, ctrlchan.Options{}, m.handlers(r), m.unhandled, func(ch *ctrlchan.Channel) { r.ch.Store(ch) })
		done <- accepted{ch, err}
	}()
	if res, err := ctrlchan.ReadMessage(b, ctrlchan.MaxHeadersSize, ctrlchan.MaxBodySize); err != nil || res.ContentType != ctrlchan.ContentResult {
		t.Fatalf("router %s: hello answered %+v %v", r.ID, res, err)
	}
	acc := <-done
	if acc.err != nil {
		t.Fatal(acc.err)
	}
	t.Cleanup(func() { acc.ch.Close(); _ = b.Close() })
	m.mu.Lock()
	m.routers[r.ID] = r
	m.mu.Unlock()
	go fr.read()
	return fr
}

// next is the next message from the node (heartbeats aside) that next has
// not returned yet, within 5 s.
func (fr *fakeRouter) next() *ctrlchan.Message {
	fr.t.Helper()
	var m *ctrlchan.Message
	if !pollUntil(5*time.Second, func() bool {
		fr.mu.Lock()
		defer fr.mu.Unlock()
		if fr.taken < len(fr.got) {
			m = fr.got[fr.taken]
			fr.taken++
			return true
		}
		return false
	}) {
		fr.t.Fatal("no message from the node within 5 s")
	}
	return m
}

// read takes the node's messages until the pipe closes: it answers
// heartbeats, routes (by answer) and server hellos, and hands replies to
// the requests waiting for them.
func (fr *fakeRouter) read() {
	for {
		fr.mu.Lock()
		reading := fr.reading
		fr.mu.Unlock()
		<-reading
		m, err := ctrlchan.ReadMessage(fr.conn, ctrlchan.MaxHeadersSize, ctrlchan.MaxBodySize)
		if err != nil {
			return
		}
		if v, ok := m.Headers.Uint64(ctrlchan.HeaderHeartbeat); ok {
			hb := ctrlchan.NewMessage(ctrlchan.ContentHeartbeat, nil)
			hb.Headers.PutUint64(ctrlchan.HeaderHeartbeatResponse, v)
			go fr.write(hb)
		}
		if m.ContentType == ctrlchan.ContentHeartbeat {
			continue
		}
		fr.mu.Lock()
		fr.got = append(fr.got, m)
		var w chan *ctrlchan.Message
		if rf, ok := m.ReplyFor(); ok {
			w = fr.waiters[rf]
			delete(fr.waiters, rf)
		}
		answer := fr.answer
		reply := fr.replies[m.ContentType]
		fr.mu.Unlock()
		switch {
		case w != nil:
			w <- m
		case reply != nil:
			go func() {
				if r := reply(m); r != nil {
					r.SetReplyTo(m)
					fr.write(r)
				}
			}()
		case m.ContentType == wire.RouteType:
			go fr.answerRoute(m, answer)
		}
	}
}

// answerRoute answers route m as answer says (nil: success).
func (fr *fakeRouter) answerRoute(m *ctrlchan.Message, answer func(string, uint32) routeReply) {
	id, attempt := routeOf(m.Body)
	rep := routeReply{ok: true}
	if answer != nil {
		rep = answer(id, attempt)
	}
	if rep.silent {
		return
	}
	res := ctrlchan.NewMessage(wire.RouteResultType, []byte(id))
	res.Headers.PutUint32(wire.RouteResultAttemptHeader, attempt)
	if rep.ok {
		res.Headers.PutBool(wire.RouteResultSuccessHeader, true)
	} else {
		res.Headers.PutString(wire.RouteResultErrorHeader, rep.reason)
		res.Headers[wire.RouteResultErrorCodeHeader] = []byte{rep.code}
	}
	res.SetReplyTo(m)
	fr.write(res)
}

// routeOf is a Route's circuit id and attempt.
func routeOf(b []byte) (string, uint32) {
	id, attempt, _ := wire.DecodeRoute(b)
	return id, attempt
}

// circuitOf is the circuit a Route or Unroute names ("" for other messages).
func circuitOf(m *ctrlchan.Message) string {
	if m.ContentType != wire.RouteType && m.ContentType != wire.UnrouteType {
		return ""
	}
	id, _ := routeOf(m.Body)
	return id
}

func (fr *fakeRouter) write(m *ctrlchan.Message) {
	fr.wmu.Lock()
	defer fr.wmu.Unlock()
	if m.Sequence == 0 {
		fr.seq++
		m.Sequence = fr.seq
	}
	_, _ = fr.conn.Write(m.AppendFrame(nil))
}

// send sends m to the node.
func (fr *fakeRouter) send(m *ctrlchan.Message) { fr.write(m) }

// ask sends m as a request; the node's reply comes on the channel.
func (fr *fakeRouter) ask(m *ctrlchan.Message) <-chan *ctrlchan.Message {
	fr.wmu.Lock()
	fr.seq++
	m.Sequence = fr.seq
	fr.wmu.Unlock()
	w := make(chan *ctrlchan.Message, 1)
	fr.mu.Lock()
	fr.waiters[m.Sequence] = w
	fr.mu.Unlock()
	fr.write(m)
	return w
}

// request sends m and waits for the node's reply.
func (fr *fakeRouter) request(m *ctrlchan.Message, within time.Duration) *ctrlchan.Message {
	fr.t.Helper()
	w := fr.ask(m)
	select {
	case r := <-w:
		return r
	case <-time.After(within):
		fr.t.Fatalf("router %s: no reply to content type %d within %s", fr.id, m.ContentType, within)
		return nil
	}
}

// setAnswer sets how the router answers routes.
func (fr *fakeRouter) setAnswer(f func(circuitID string, attempt uint32) routeReply) {
	fr.mu.Lock()
	fr.answer = f
	fr.mu.Unlock()
}

// stall stops the router reading (its channel's writer then blocks);
// resume reads again.
func (fr *fakeRouter) stall() {
	fr.mu.Lock()
	fr.reading = make(chan struct{})
	fr.mu.Unlock()
}

func (fr *fakeRouter) resume() {
	fr.mu.Lock()
	select {
	case <-fr.reading:
	default:
		close(fr.reading)
	}
	fr.mu.Unlock()
}

// messages are the messages of content type ct the router got.
func (fr *fakeRouter) messages(ct int32) []*ctrlchan.Message {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	var out []*ctrlchan.Message
	for _, m := range fr.got {
		if m.ContentType == ct {
			out = append(out, m)
		}
	}
	return out
}

// holds says whether the router holds a route of circuit id: its last
// Route or Unroute of it is a Route.
func (fr *fakeRouter) holds(id string) bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for i := len(fr.got) - 1; i >= 0; i-- {
		if circuitOf(fr.got[i]) == id {
			return fr.got[i].ContentType == wire.RouteType
		}
	}
	return false
}

// routed says whether the router ever got a Route of circuit id.
func (fr *fakeRouter) routed(id string) bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for _, m := range fr.got {
		if m.ContentType == wire.RouteType && circuitOf(m) == id {
			return true
		}
	}
	return false
}

// firstRoute waits for the router's first Route and returns its circuit.
func (fr *fakeRouter) firstRoute() string {
	fr.t.Helper()
	var id string
	poll(fr.t, "router "+fr.id+" gets a route", func() bool {
		if ms := fr.messages(wire.RouteType); len(ms) > 0 {
			id = circuitOf(ms[0])
			return true
		}
		return false
	})
	return id
}

// link reports a link from router a to router b (a dialed it).
func (n *testNet) link(id, a, b string) {
	n.t.Helper()
	if !n.m.links.report(a, wire.RouterLink{ID: id, DestRouterID: b, Iteration: 1}, time.Now()) {
		n.t.Fatalf("link %s not taken", id)
	}
}

// setLatency makes link id cost about ms (each end measures half).
func (n *testNet) setLatency(id string, ms int) {
	l := n.linkByID(id)
	n.m.links.latency(l.SrcRouterID, id, time.Duration(ms/2)*time.Millisecond)
	n.m.links.latency(l.DstRouterID, id, time.Duration(ms-ms/2)*time.Millisecond)
}

func (n *testNet) linkByID(id string) Link {
	n.t.Helper()
	for _, l := range n.m.Links() {
		if l.ID == id {
			return l
		}
	}
	n.t.Fatalf("no link %s", id)
	return Link{}
}

// terminator adds a terminator of "svc" on router routerID.
func (n *testNet) terminator(id, routerID string) {
	n.t.Helper()
	mustWrite(n.t, n.s, func(tx *store.Tx) error {
		return tx.Insert(store.KindTerminator, &store.Terminator{Base: store.Base{ID: id}, ServiceID: "svc", RouterID: routerID,
			Binding: "edge", Address: id})
	})
}

// dialRequest is a client's dial through its edge router.
func (n *testNet) dialRequest() *ctrlchan.Message {
	m := ctrlchan.NewMessage(wire.CreateCircuitV2RequestType, nil)
	m.Headers.PutString(wire.CreateCircuitReqSessionTokenHeader, n.session)
	m.Headers.PutString(wire.CreateCircuitReqAPISessionTokenHeader, n.apiSession)
	return m
}

// dial dials "svc" through router ingress and returns the answer.
func (n *testNet) dial(ingress string) *ctrlchan.Message {
	n.t.Helper()
	return n.routers[ingress].request(n.dialRequest(), 20*time.Second)
}

// dialAsync dials in the background; the answer comes on the channel.
func (n *testNet) dialAsync(ingress string) <-chan *ctrlchan.Message {
	out := make(chan *ctrlchan.Message, 1)
	fr, m := n.routers[ingress], n.dialRequest()
	go func() { out <- <-fr.ask(m) }()
	return out
}

// circuitID is the id a dial's answer gives (failing on a refusal).
func circuitID(t *testing.T, reply *ctrlchan.Message) string {
	t.Helper()
	if reply.ContentType != wire.CreateCircuitV2ResponseType {
		t.Fatalf("the dial was refused: %s", reply.Body)
	}
	id, _ := reply.Headers.String(wire.CreateCircuitRespCircuitIDHeader)
	return id
}

// fault sends a fault from router from.
func (n *testNet) fault(from string, subject uint64, id string) {
	n.routers[from].send(ctrlchan.NewMessage(wire.FaultType, wire.EncodeFault(wire.Fault{Subject: subject, ID: id})))
}

// path is circuit id's path on the node (nil when it has none).
func (n *testNet) path(id string) []string {
	for _, c := range n.m.Circuits() {
		if c.ID == id {
			return c.Path
		}
	}
	return nil
}

// settled waits until no router of the net holds a route of circuit id
// but those of its path (all of which hold one), and the node is not
// moving it.
func (n *testNet) settled(id string) {
	n.t.Helper()
	var why string
	ok := pollUntil(5*time.Second, func() bool {
		why = n.leak(id)
		return why == ""
	})
	if !ok {
		n.t.Fatalf("circuit %s: %s", id, why)
	}
}

// leak says what is wrong with the routes of circuit id ("" when nothing).
func (n *testNet) leak(id string) string {
	if n.m.busy(id) {
		return "still being routed"
	}
	path := n.path(id)
	var bad []string
	keys := mapKeys(n.routers)
	slices.Sort(keys)
	for _, rid := range keys {
		fr := n.routers[rid]
		on := slices.Contains(path, rid)
		switch h := fr.holds(id); {
		case h && !on:
			bad = append(bad, rid+" holds a route but is not on the path "+strings.Join(path, ">"))
		case !h && on:
			bad = append(bad, rid+" is on the path but holds no route")
		}
	}
	return strings.Join(bad, "; ")
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// poll waits up to 5 s for cond.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !pollUntil(5*time.Second, cond) {
		t.Fatalf("timed out: %s", what)
	}
}

func pollUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gate holds routes of one router until opened.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// holdRoutes makes router fr wait for g before answering a route whose
// attempt is attempt (any, when all), and returns a channel told of each
// route held.
func (fr *fakeRouter) holdRoutes(g *gate, match func(attempt uint32) bool) <-chan string {
	held := make(chan string, 16)
	fr.setAnswer(func(id string, attempt uint32) routeReply {
		if match(attempt) {
			held <- id
			<-g.ch
		}
		return routeReply{ok: true}
	})
	return held
}

// setRouterCost sets edge router id's cost in the model.
func (n *testNet) setRouterCost(id string, cost int) {
	n.t.Helper()
	mustWrite(n.t, n.s, func(tx *store.Tx) error {
		er, err := store.GetAs[*store.EdgeRouter](tx, store.KindEdgeRouter, id)
		if err != nil {
			return err
		}
		cp := *er
		cp.Cost = cost
		return tx.Upsert(store.KindEdgeRouter, &cp)
	})
}

// barrier waits until the node has handled every message the router sent
// before it (a request its reader answers).
func (fr *fakeRouter) barrier() {
	fr.t.Helper()
	fr.request(ctrlchan.NewMessage(wire.UpdateRouterInterfacesType, nil), 5*time.Second)
}

// confirm sends the router's circuit confirmation of ids.
func (fr *fakeRouter) confirm(ids ...string) {
	var b []byte
	for _, id := range ids {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, id)
	}
	fr.send(ctrlchan.NewMessage(wire.CircuitConfirmationType, b))
}

// leave closes the router's connection (it left).
func (fr *fakeRouter) leave() { _ = fr.conn.Close() }

// refused is the text of a dial's refusal (failing on an answer).
func refused(t *testing.T, reply *ctrlchan.Message) string {
	t.Helper()
	if reply.ContentType != wire.ErrorType {
		t.Fatalf("the dial was answered %d, not refused", reply.ContentType)
	}
	return string(reply.Body)
}

// answerWithin waits for a dial's answer.
func answerWithin(t *testing.T, answer <-chan *ctrlchan.Message, d time.Duration) *ctrlchan.Message {
	t.Helper()
	select {
	case a := <-answer:
		return a
	case <-time.After(d):
		t.Fatalf("no answer to the dial within %s", d)
		return nil
	}
}

// reply sets how the router answers the node's requests of content type ct.
func (fr *fakeRouter) reply(ct int32, f func(*ctrlchan.Message) *ctrlchan.Message) {
	fr.mu.Lock()
	fr.replies[ct] = f
	fr.mu.Unlock()
}

// syncStatus waits for router id's edge sync status on the node to be want.
func (n *testNet) syncStatus(id, want string) {
	n.t.Helper()
	poll(n.t, "router "+id+" is "+want, func() bool { return n.m.Status(id).SyncStatus == want })
}
