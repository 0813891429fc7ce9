package dataplane

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/auth"
	"edgectl/ctrlchan"
	"edgectl/dataplane/dpevent"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"

	"github.com/hashicorp/go-hclog"
)

// ALPN is the TLS application protocol routers ask for on the control channel.
const ALPN = "ziti-ctrl"

// Config is what a Manager needs of its node.
type Config struct {
	NodeID string
	// Version is the node's release, sent to routers in the hello's version header.
	Version string
	Store   *store.Store
	// Authority returns the cluster's CA as the model holds it.
	Authority func(*store.Tx) (*pki.Authority, error)
	// AppliedIndex returns the FSM's applied index and a channel closed when it
	// next moves: the Manager re-checks its routers' records on every move.
	AppliedIndex func() (uint64, <-chan struct{})
	// Writer proposes what routers report of themselves (hostname, listeners).
	Writer *fsm.Writer
	// SignRouterCerts issues a router's client and server certificates from
	// PEM requests (certificate extension over the control channel).
	SignRouterCerts func(tx *store.Tx, routerID, clientCSR, serverCSR string) (clientChain, clientLeaf, fingerprint, serverChain string, err error)
	// IsLeader tells whether this node leads the cluster (routers send
	// terminator changes to the leader).
	IsLeader func() bool
	// Activity takes the API sessions routers report in use.
	Activity *auth.Activity
	Log      hclog.Logger
	Now      func() time.Time
	Channel  ctrlchan.Options
	// HelloTimeout bounds the wait for a router's hello after the TLS handshake; 10 s.
	HelloTimeout time.Duration
	// PostureRequirementsChanged is told when what a service policy requires
	// of posture changed (a posture check, or a policy's checks): the node
	// has the sessions judged again, which ends those a check now refuses.
	PostureRequirementsChanged func()
	// SmartRerouteInterval is how often circuits move to paths that became
	// cheaper (reroute.go); 0: never.
	SmartRerouteInterval time.Duration
	// RouteTimeout bounds the wait for a router's answer to a route; 10 s.
	RouteTimeout time.Duration
	// DialTimeout bounds a dial's routing, all its attempts together
	// (dial.go); 4 s.
	DialTimeout time.Duration
	// RefusalLogInterval is the interval of the refusal log's sampling
	// (logsample.go); a minute.
	RefusalLogInterval time.Duration
	// Events takes the data-plane events (dpevents.go); nil: none.
	Events *dpevent.Log
	// RouterGrace is how long a router whose control channel to this node
	// closed may stay away before its circuits end and its links go
	// (away.go): until then they are kept, and reconciled when it returns;
	// 30 s.
	RouterGrace time.Duration
	// MaxTerminatorCreates bounds the routers' terminator creates queued or
	// in flight on this node at once; over it a router is answered busy and
	// retries (terminators.go); 1,000.
	MaxTerminatorCreates int
}

// Manager holds this node's router channels.
type Manager struct {
	cfg     Config
	log     hclog.Logger
	metrics *metrics
	// sampler logs refused connections and requests sampled (logsample.go).
	sampler *logSampler

	mu      sync.Mutex
	routers map[string]*Router // by router id
	closed  bool
	// aways are the routers whose channel closed, within their grace
	// (away.go), by id.
	aways map[string]*awayRouter

	// unroutes are the Unroutes kept for routers not connected, sent when
	// they connect (away.go): by router, circuit id → when.
	unroutesMu sync.Mutex
	unroutes   map[string]map[string]time.Time

	// paths is the last graph built, reused while its routers and links
	// are the same (paths.go).
	paths graphCache

	// pending are the model's changes not yet turned into messages
	// (modelsync.go); restored notes a snapshot restore.
	pendingMu sync.Mutex
	pending   []fsm.Changes
	// pendingFrom is the index of the oldest pending change (0: none).
	pendingFrom atomic.Uint64
	// creates counts the terminator creates queued or in flight (terminators.go).
	creates atomic.Int64
	// dialing counts the dials being routed and answered (dial,
	// tunnelDial): Close lets them finish before it closes the routers'
	// channels.
	dialing  atomic.Int64
	restored bool
	changed  chan struct{}
	events   eventReporter
	// rdm holds the router data model's recent change sets (rdmsync.go);
	// states the full state's encoding the routers share (rdmstate.go).
	rdm    rdmLog
	states stateCache
	// verifier checks service session tokens (terminators.go).
	verifier sessionVerifier
	// circuits are the circuits this node routed (circuits.go).
	circuits circuits
	// links are the router links reported to this node (links.go).
	links links
	// dps is what the data-plane events keep (dpevents.go).
	dps dpState

	// ctx is for the calls the node makes on its own (Raft writes,
	// requests to routers): Close cancels it. pools bound the background
	// work per router (background.go).
	ctx    context.Context
	cancel context.CancelFunc
	pools  pools

	stop chan struct{}
	wg   sync.WaitGroup
}

// channel is the router's control channel, nil until it is accepted.
func (r *Router) channel() *ctrlchan.Channel { return r.ch.Load() }

// Router is a router connected to this node.
type Router struct {
	ID          string
	Kind        *store.Kind // KindEdgeRouter or KindRouter
	ConnectedAt time.Time
	Version     VersionInfo
	// ch is the router's control channel, set once before any of its
	// handlers runs; read from any goroutine (channel()).
	ch atomic.Pointer[ctrlchan.Channel]

	mu sync.Mutex
	// fingerprint is the router's current certificate in the model: the
	// one it connected with, or the one it extended to since.
	fingerprint string
	hostname    string
	protocols   map[string]string
	sync        string
	// listeners are its link listeners, as its hello announced them.
	listeners []wire.LinkListener
	// returned: it connected within its grace (away.go); goneWhy, set
	// when this node closes its channel for good, is why (deleted,
	// disabled, enrolled again); unrouted are the last Unroutes sent to it.
	returned bool
	goneWhy  string
	unrouted []sentUnroute

	edge routerSync
}

func (r *Router) currentFingerprint() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fingerprint
}

func (r *Router) setSync(s string) {
	r.mu.Lock()
	r.sync = s
	r.mu.Unlock()
}

// Status is what the APIs show of a router on this node.
type Status struct {
	Online             bool
	Hostname           string
	SupportedProtocols map[string]string
	SyncStatus         string
	ConnectedAt        time.Time
	Version            string
	Revision           string
	OS, Arch           string
	Latency            time.Duration
}

// Sync statuses, as OpenZiti names them.
const (
	SyncUnknown    = "SYNC_UNKNOWN"
	SyncNew        = "SYNC_NEW"
	SyncHello      = "SYNC_HELLO"
	SyncInProgress = "SYNC_IN_PROGRESS"
	SyncDone       = "SYNC_DONE"
	SyncDisconnect = "SYNC_DISCONNECTED"
)

// New returns a Manager; Start starts its watch of the model.
func New(cfg Config) *Manager {
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HelloTimeout <= 0 {
		cfg.HelloTimeout = 10 * time.Second
	}
	if cfg.RouteTimeout <= 0 {
		cfg.RouteTimeout = defaultRouteTimeout
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = defaultDialTimeout
	}
	if cfg.RefusalLogInterval <= 0 {
		cfg.RefusalLogInterval = defaultSampleInterval
	}
	if cfg.MaxTerminatorCreates <= 0 {
		cfg.MaxTerminatorCreates = defaultTerminatorCreates
	}
	if cfg.RouterGrace <= 0 {
		cfg.RouterGrace = defaultRouterGrace
	}
	ctx, cancel := context.WithCancel(context.Background())
	mt := newMetrics()
	return &Manager{cfg: cfg, log: cfg.Log, metrics: mt, routers: map[string]*Router{}, aways: map[string]*awayRouter{},
		sampler: newLogSampler(cfg.Log, mt.refusalsUnlogged.Inc),
		changed: make(chan struct{}, 1), stop: make(chan struct{}), ctx: ctx, cancel: cancel,
		events: eventReporter{queue: make(chan fsm.RouterEvent, eventQueue), refused: map[string]time.Time{}}}
}

// Start watches the model and closes the channels of routers that may no
// longer connect.
func (m *Manager) Start() {
	applied, _ := m.cfg.AppliedIndex()
	m.rdm.reset(applied + 1)
	m.wg.Add(4)
	go func() {
		defer m.wg.Done()
		m.runSampler()
	}()
	go func() {
		defer m.wg.Done()
		if m.cfg.Writer != nil {
			m.reportEvents()
		} else {
			<-m.stop
		}
	}()
	go func() {
		defer m.wg.Done()
		m.watch()
	}()
	go func() {
		defer m.wg.Done()
		m.dispatch()
	}()
	if m.cfg.SmartRerouteInterval > 0 {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			t := time.NewTicker(m.cfg.SmartRerouteInterval)
			defer t.Stop()
			for {
				select {
				case <-m.stop:
					return
				case <-t.C:
					m.smartReroute()
				}
			}
		}()
	}
}

// Close closes every router channel and refuses new ones. Dials being
// routed are let finish first, for at most their deadline: a dial cut off
// by the close leaves its routes on the routers and no node to take them
// back, and its egress router's dial of the host with them; the host's
// SDK then holds that connection, waiting for a start that never comes (a
// `ziti tunnel host` accepts no other dial meanwhile, up to 3 minutes:
// seen in the data-plane chaos's rolling restart). A node killed cannot
// do this; one stopped can.
func (m *Manager) Close() {
	m.drainDials()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.stop)
	m.cancel()
	rs := make([]*Router, 0, len(m.routers))
	for _, r := range m.routers {
		rs = append(rs, r)
	}
	m.mu.Unlock()
	m.states.forget(nil)
	for _, r := range rs {
		if ch := r.channel(); ch != nil { // nil: still in its hello, refused below
			ch.CloseWith(errors.New("the controller node is shutting down"))
		}
	}
	m.wg.Wait()
}

// drainDials waits until no dial is being routed, or the dial deadline
// (and a second for the answers) has passed.
func (m *Manager) drainDials() {
	deadline := time.Now().Add(m.cfg.DialTimeout + time.Second)
	for m.dialing.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// Status reports router id as this node sees it.
func (m *Manager) Status(id string) Status {
	m.mu.Lock()
	r := m.routers[id]
	m.mu.Unlock()
	if r == nil || r.channel() == nil { // no channel yet: its hello is being answered
		return Status{SyncStatus: SyncUnknown}
	}
	ch := r.channel()
	r.mu.Lock()
	defer r.mu.Unlock()
	return Status{Online: true, Hostname: r.hostname, SupportedProtocols: r.protocols, SyncStatus: r.sync,
		ConnectedAt: r.ConnectedAt, Version: r.Version.Version, Revision: r.Version.Revision, OS: r.Version.OS, Arch: r.Version.Arch,
		Latency: ch.Latency()}
}

// Connected lists the ids of the routers connected to this node, sorted.
func (m *Manager) Connected() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.routers))
	for id := range m.routers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// router is the connected router id (nil when it is not connected).
func (m *Manager) router(id string) *Router {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.routers[id]; r != nil && r.channel() != nil {
		return r
	}
	return nil
}

// connectedWhere are the connected routers (their channel open) that keep
// says to take (nil: all).
func (m *Manager) connectedWhere(keep func(*Router) bool) []*Router {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Router, 0, len(m.routers))
	for _, r := range m.routers {
		if r.channel() != nil && (keep == nil || keep(r)) {
			out = append(out, r)
		}
	}
	return out
}

// edgeRouters are the connected edge routers.
func (m *Manager) edgeRouters() []*Router {
	return m.connectedWhere(func(r *Router) bool { return r.Kind == store.KindEdgeRouter })
}
