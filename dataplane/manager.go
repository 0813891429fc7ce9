// Package dataplane is the controller's side of the routers: it admits
// OpenZiti routers on their control channel (ALPN "ziti-ctrl" on the API
// port), keeps the node-local table of connected routers that the APIs show
// (isOnline, hostname, supportedProtocols, syncStatus), and closes the
// channel of a router that is disabled, deleted or enrolled again.
//
// What a router may do is decided from the replicated model only; which
// routers are connected is node-local: a router holds a channel to every
// node, and each node reports its own.
package dataplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/auth"
	"edgectl/ctrlchan"
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
	// Applied returns the FSM's applied index and a channel closed when it
	// next moves: the Manager re-checks its routers' records on every move.
	Applied func() (uint64, <-chan struct{})
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
	// cheaper (routing.go); 0: never.
	SmartRerouteInterval time.Duration
	// RouteTimeout bounds the wait for a router's answer to a route; 10 s.
	RouteTimeout time.Duration
}

// Manager holds this node's router channels.
type Manager struct {
	cfg     Config
	log     hclog.Logger
	metrics *metrics

	mu      sync.Mutex
	routers map[string]*Router // by router id
	closed  bool

	// pending are the model's changes not yet turned into messages
	// (changes.go); restored notes a snapshot restore.
	pendingMu sync.Mutex
	pending   []fsm.Changes
	// pendingFrom is the index of the oldest pending change (0: none).
	pendingFrom atomic.Uint64
	restored    bool
	changed     chan struct{}
	events      eventReporter
	// rdm holds the router data model's recent change sets (rdmsync.go).
	rdm rdmLog
	// verifier checks service session tokens (terminators.go).
	verifier sessionVerifier
	// circuits are the circuits this node routed (circuits.go).
	circuits circuits
	// links are the router links reported to this node (links.go).
	links links

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

// New returns a Manager; Run starts its watch of the model.
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
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, log: cfg.Log, metrics: newMetrics(), routers: map[string]*Router{},
		changed: make(chan struct{}, 1), stop: make(chan struct{}), ctx: ctx, cancel: cancel,
		events: eventReporter{queue: make(chan fsm.RouterEvent, eventQueue), refused: map[string]time.Time{}}}
}

// Start watches the model and closes the channels of routers that may no
// longer connect.
func (m *Manager) Start() {
	applied, _ := m.cfg.Applied()
	m.rdm.reset(applied + 1)
	m.wg.Add(3)
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

// Close closes every router channel and refuses new ones.
func (m *Manager) Close() {
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
	for _, r := range rs {
		if ch := r.channel(); ch != nil { // nil: still in its hello, refused below
			ch.CloseWith(errors.New("the controller node is shutting down"))
		}
	}
	m.wg.Wait()
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

// ServeTLS serves one control-channel connection whose TLS handshake is
// done (it negotiated ALPN "ziti-ctrl"); it returns when the channel
// closes. It is the API server's TLSNextProto handler.
func (m *Manager) ServeTLS(conn *tls.Conn) {
	_ = conn.SetDeadline(time.Time{})
	r, err := m.admit(conn)
	if err != nil {
		var ref *refusal
		if errors.As(err, &ref) {
			m.metrics.refused.WithLabelValues(ref.reason).Inc()
			m.log.Warn("router refused", "remote", conn.RemoteAddr().String(), "reason", ref.reason, "detail", ref.detail)
			m.refusedEvent(ref, conn.RemoteAddr().String())
		} else {
			m.metrics.refused.WithLabelValues(reasonProtocol).Inc()
			m.log.Warn("control channel failed before it was open", "remote", conn.RemoteAddr().String(), "error", err)
			_ = conn.Close()
		}
		return
	}
	m.serve(r)
}

// serve waits for router r's channel to close, then forgets the router.
func (m *Manager) serve(r *Router) {
	<-r.channel().Done()
	m.drop(r)
	m.event(fsm.RouterEvent{Action: fsm.RouterDisconnected, RouterID: r.ID, Kind: r.Kind.Table,
		Detail: map[string]any{"reason": fmt.Sprint(r.channel().Err()), "connectedAt": r.ConnectedAt}})
}

// Refusal reasons, the label of the refused-routers metric.
const (
	reasonProtocol      = "protocol"
	reasonCertificate   = "certificate"
	reasonUnknown       = "not_enrolled"
	reasonDisabled      = "disabled"
	reasonIDMismatch    = "id_mismatch"
	reasonDuplicate     = "already_connected"
	reasonShuttingDown  = "shutting_down"
	reasonModelNotReady = "not_ready"
)

type refusal struct {
	reason, detail string
	// what is known of the router: its certificate, and its record
	fingerprint, routerID, kind string
}

func (r *refusal) Error() string { return r.reason + ": " + r.detail }

// admit reads the router's hello and decides: a certificate that chains to
// the cluster's CA, the current certificate of an enrolled router that is
// not disabled, the hello's id that router's, and no other channel of it
// to this node. A refused router gets a failed hello result that says only
// that it was refused.
func (m *Manager) admit(conn *tls.Conn) (*Router, error) {
	hello, err := ctrlchan.ReadHello(conn, time.Now().Add(m.cfg.HelloTimeout))
	if err != nil {
		return nil, err
	}
	ref := &refusal{}
	refuse := func(reason, detail string) (*Router, error) {
		// The reason stays in the node's log, metric and events: a peer
		// that is refused learns nothing of why.
		ctrlchan.Refuse(conn, hello, "refused by the controller")
		ref.reason, ref.detail = reason, detail
		return nil, ref
	}
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return refuse(reasonCertificate, "no client certificate")
	}
	tx := m.cfg.Store.Read()
	a, err := m.cfg.Authority(tx)
	if err != nil {
		return refuse(reasonModelNotReady, "the cluster's CA is not loaded: "+err.Error())
	}
	chain := append(append([]*x509.Certificate{}, certs...), a.Intermediates()...)
	if err := pki.VerifyClientChain(chain, a.Pool(), m.cfg.Now(), false); err != nil {
		return refuse(reasonCertificate, "the client certificate does not chain to the cluster's CA: "+err.Error())
	}
	fp := pki.Fingerprint(certs[0])
	ref.fingerprint = fp
	rec, kind := enrolledRouter(tx, fp)
	if rec == nil {
		return refuse(reasonUnknown, "no enrolled router has the certificate "+fp)
	}
	ref.routerID, ref.kind = rec.GetID(), kind.Table
	if routerDisabled(rec) {
		return refuse(reasonDisabled, "router "+rec.GetID()+" is disabled")
	}
	if id := string(hello.Body); id != rec.GetID() {
		return refuse(reasonIDMismatch, fmt.Sprintf("the hello names router %q, the certificate is router %s's", id, rec.GetID()))
	}
	listeners, err := wire.DecodeListeners(hello.Headers[wire.ListenersHeader])
	if err != nil {
		return refuse(reasonProtocol, "the hello's link listeners could not be read: "+err.Error())
	}
	r := &Router{ID: rec.GetID(), Kind: kind, fingerprint: fp, ConnectedAt: m.cfg.Now().UTC(), sync: SyncNew,
		Version: decodeVersionInfo(hello.Headers[ctrlchan.HeaderHelloVersion]), listeners: listeners}
	if err := m.join(conn, hello, r); err != nil {
		if jr, ok := err.(*refusal); ok {
			ref.reason, ref.detail = jr.reason, jr.detail
			return nil, ref
		}
		return nil, err
	}
	m.event(fsm.RouterEvent{Action: fsm.RouterConnected, RouterID: r.ID, Kind: kind.Table,
		Detail: map[string]any{"remoteAddress": conn.RemoteAddr().String(), "version": r.Version.Version, "fingerprint": fp}})
	m.onConnect(r)
	return r, nil
}

// join takes admitted router r on conn, whose hello it answers: it
// refuses (a *refusal) a second channel of the router, and any while the
// node shuts down.
func (m *Manager) join(conn net.Conn, hello *ctrlchan.Message, r *Router) error {
	r.edge.wake = make(chan struct{}, 1)
	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		ctrlchan.Refuse(conn, hello, "refused by the controller")
		return &refusal{reason: reasonShuttingDown, detail: "the controller node is shutting down"}
	case m.routers[r.ID] != nil:
		m.mu.Unlock()
		ctrlchan.Refuse(conn, hello, "refused by the controller")
		return &refusal{reason: reasonDuplicate, detail: "router " + r.ID + " already has a control channel to this node"}
	}
	m.routers[r.ID] = r // held before the answer, so a second hello racing this one is refused
	m.mu.Unlock()
	_, err := ctrlchan.AcceptThen(conn, hello, m.helloHeaders(), m.cfg.Channel, m.handlers(r), m.unhandled, func(ch *ctrlchan.Channel) { r.ch.Store(ch) })
	m.mu.Lock()
	closed := m.closed
	if err != nil || closed {
		delete(m.routers, r.ID)
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	if closed { // Stop ran during the hello: it could not close this channel
		r.channel().CloseWith(errors.New("the controller node is shutting down"))
		return &refusal{reason: reasonShuttingDown, detail: "the controller node is shutting down"}
	}
	m.metrics.connected.Inc()
	m.log.Info("router connected", "router", r.ID, "kind", r.Kind.Entity, "remote", conn.RemoteAddr().String(), "version", r.Version.Version)
	return nil
}

// drop forgets a router whose channel closed.
func (m *Manager) drop(r *Router) {
	m.mu.Lock()
	if m.routers[r.ID] == r {
		delete(m.routers, r.ID)
	}
	m.mu.Unlock()
	m.metrics.connected.Dec()
	m.retire(r)
	m.links.removeFrom(r.ID)
	m.dropRouterCircuits(r.ID)
	m.log.Info("router disconnected", "router", r.ID, "reason", fmt.Sprint(r.channel().Err()))
}

// enrolledRouter is the verified edge router or router whose current
// certificate has fingerprint fp.
func enrolledRouter(tx *store.Tx, fp string) (store.Record, *store.Kind) {
	for _, k := range []*store.Kind{store.KindEdgeRouter, store.KindRouter} {
		if rec := tx.First(k, "fingerprint", fp); rec != nil && enrollmentOf(rec).IsVerified {
			return rec, k
		}
	}
	return nil, nil
}

func enrollmentOf(rec store.Record) *store.RouterEnrollment {
	switch v := rec.(type) {
	case *store.EdgeRouter:
		return &v.RouterEnrollment
	case *store.Router:
		return &v.RouterEnrollment
	}
	return &store.RouterEnrollment{}
}

func routerDisabled(rec store.Record) bool {
	switch v := rec.(type) {
	case *store.EdgeRouter:
		return v.Disabled
	case *store.Router:
		return v.Disabled
	}
	return false
}

// stillAdmitted says why a connected router may no longer stay connected
// ("" when it may): deleted, disabled or enrolled again. A certificate
// extension keeps the channel: the router moves to the new certificate on
// its next connection.
func stillAdmitted(tx *store.Tx, r *Router) string {
	rec, err := tx.Get(r.Kind, r.ID)
	if err != nil {
		return "the router was deleted"
	}
	e := enrollmentOf(rec)
	switch {
	case !e.IsVerified || e.Fingerprint == nil:
		return "the router was enrolled again"
	case routerDisabled(rec):
		return "the router was disabled"
	}
	r.mu.Lock()
	r.fingerprint = *e.Fingerprint
	r.mu.Unlock()
	return ""
}

// watch re-checks the connected routers' records each time the model moves.
func (m *Manager) watch() {
	for {
		_, moved := m.cfg.Applied()
		select {
		case <-m.stop:
			return
		case <-moved:
		}
		// The routers first, then the model: a router that connected
		// before the read has its record in it (a router's record is
		// written before it can connect).
		routers := m.connectedWhere(nil)
		tx := m.cfg.Store.Read()
		for _, r := range routers {
			if why := stillAdmitted(tx, r); why != "" {
				m.log.Info("closing a router's control channel", "router", r.ID, "reason", why)
				r.channel().CloseWith(errors.New(why))
			}
		}
	}
}
