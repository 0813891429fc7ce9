// Package cluster replicates edgectl's state between controller nodes.
//
// It owns everything below the state machine: the hashicorp/raft instance
// and its storage (the raft-wal log and stable store, and file snapshots,
// under DataDir/raft), the cluster port (one mutual-TLS listener that multiplexes
// raft and a small framed RPC protocol), forwarding of writes from followers
// to the leader, membership changes and snapshots.
//
// It never decodes commands or touches the model: commands are opaque bytes
// handed to the FSM supplied by the caller, and the FSM's encoded results are
// passed back unchanged.
//
// Write path: Node.Apply proposes locally when this node leads, otherwise it
// forwards the command to the leader over the cluster port; either way it
// returns only once this node's FSM has applied the entry, so a client that
// wrote through a follower reads its own write from that follower.
package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// FSM is what the node replicates into. Apply must return nil or a []byte
// (an encoded result; an error is also accepted and returned wrapped).
type FSM interface {
	raft.FSM
	// AppliedIndex is the last index the FSM has applied (not raft's
	// AppliedIndex, which runs ahead of the FSM).
	AppliedIndex() uint64
	// WaitApplied blocks until AppliedIndex() >= index or ctx ends.
	WaitApplied(ctx context.Context, index uint64) error
	// ResultNoter: a follower takes a forwarded write's result from its
	// own apply of the entry (atcommit.go).
	ResultNoter
}

// Config configures a Node. Zero durations mean the defaults listed below,
// chosen for a LAN or loopback cluster on a possibly loaded 2-core machine:
// a crashed leader is typically replaced within 0.6-1.5 s (worst case about
// 2 s, when the first pre-vote is refused by a follower that has not yet
// noticed the crash); a graceful Shutdown hands over in tens of ms.
type Config struct {
	NodeID        string
	DataDir       string // raft files go under DataDir/raft
	BindAddr      string // host:port to listen on; ":0" picks a free port
	AdvertiseAddr string // host:port other nodes use; "" = the bound address
	TLS           *tls.Config
	FSM           FSM
	Logger        hclog.Logger // nil = hclog.NewNullLogger()

	SnapshotThreshold uint64        // 0 = raft default (8192 entries)
	SnapshotInterval  time.Duration // 0 = DefaultSnapshotInterval
	TrailingLogs      uint64        // 0 = raft default (10240 entries)
	// LogSegmentSize is the size of the Raft log's segment files; the log
	// is freed by whole segments after a snapshot. 0 = 64 MiB.
	LogSegmentSize int

	HeartbeatTimeout   time.Duration // 0 = 500 ms
	ElectionTimeout    time.Duration // 0 = 500 ms
	LeaderLeaseTimeout time.Duration // 0 = 300 ms
	CommitTimeout      time.Duration // 0 = 5 ms (bounds how late followers learn a commit)
	LeaderWait         time.Duration // how long a write waits for a leader; 0 = 5 s
	// ForwardStallTimeout: a follower abandons the writes it forwarded to a
	// leader it has not heard from (no heartbeat) for this long; 0 = 2 s.
	ForwardStallTimeout time.Duration
	// NoApplyAhead turns the follower's apply-ahead off: a write this node
	// forwarded is then answered once raft has delivered its entry here,
	// not as soon as the entry is in this node's log with the leader's term
	// (applyahead.go, docs/design/apply-ahead.md). false = on.
	NoApplyAhead bool

	// VerifyPeer, if set, is called with the leaf certificate of every peer
	// (inbound and outbound) after the TLS handshake; an error drops the
	// connection. Use it when the CA also signs certificates that are not
	// controller nodes. nil = every certificate the CA pool accepts.
	VerifyPeer func(*x509.Certificate) error
}

// Defaults for zero Config fields.
const (
	DefaultHeartbeatTimeout   = 500 * time.Millisecond
	DefaultElectionTimeout    = 500 * time.Millisecond
	DefaultLeaderLeaseTimeout = 300 * time.Millisecond
	DefaultCommitTimeout      = 5 * time.Millisecond
	DefaultLeaderWait         = 5 * time.Second
	DefaultForwardStall       = 2 * time.Second
	// DefaultSnapshotInterval is how often raft checks whether the log
	// has passed the snapshot threshold (at a random moment between one
	// and two intervals). The check only compares two indexes; what it
	// bounds is the log a restarting node replays: the entries since the
	// last snapshot, at most the threshold plus two intervals of writes.
	// raft's own default, 120 s, let a node under a steady load go two to
	// four minutes without a snapshot whatever the threshold, so a node
	// restarted three minutes into `make chaos` replayed the whole run's
	// 44,000 entries and was ready after 7 s, growing with every minute
	// (issue 46).
	DefaultSnapshotInterval = 5 * time.Second

	maxAppendEntries = 256 // entries per AppendEntries RPC and per group commit
	snapshotsRetain  = 3
	logCacheSize     = 1024
)

// Node is one controller's membership in the raft cluster.
type Node struct {
	cfg       Config
	id        string
	advertise string
	logger    hclog.Logger
	fsm       FSM

	raft      *raft.Raft
	trans     *gatedTransport
	store     *logStore // the Raft log, term and vote (logstore.go, walfiles.go)
	snaps     *pacedSnapshots
	mux       *mux
	pool      *rpcPool
	hasState  bool
	observer  *raft.Observer
	leaderSig signal // fires on every leader change seen by raft

	fwdMu sync.Mutex
	fwd   *epoch // forwards to the current leader (forward.go); nil until the first

	handlersMu sync.RWMutex
	handlers   map[string]RPCHandler

	ctx    context.Context // cancelled at shutdown; parent of RPC handler contexts
	cancel context.CancelFunc
	// rpcGate orders "start a handler" against "stop starting handlers":
	// serveRPC adds to inflight under the read lock only while !draining, so
	// Shutdown can flip draining under the write lock and then Wait safely.
	rpcGate  sync.RWMutex
	draining bool           // guarded by rpcGate; refuse new RPCs
	inflight sync.WaitGroup // running RPC handlers
	closed   atomic.Bool    // Shutdown called

	logs raft.LogStore // the log cache in front of store, for logIndexForFSM and awaitForwarded
	// waits are the forwarded writes answered at commit (atcommit.go).
	waits forwardWaits
	// forwarded counts this node's writes forwarded to the leader, by how
	// this node came to have applied them (forward.go).
	forwarded [forwardKinds]atomic.Uint64
	// This node's forwarded writes by the leader's answer: at commit, with
	// this node's result (cluster.apply_commit), or after the leader's own
	// apply, with its result.
	answeredAtCommit, answeredAfterApply atomic.Uint64
	readTerm                             atomic.Uint64 // the term whose leader barrier read indexes rely on (readindex.go)
	confirmer                            termConfirmer // the rounds proving leadership for read indexes (confirmterm.go)

	snapshotting atomic.Bool
	shutdownOnce sync.Once
	shutdownErr  error
	bgDone       chan struct{}
}

// New opens the stores, starts the cluster listener and raft. It does not
// bootstrap: call BootstrapSelf on a brand-new first node, or have the leader
// add this node with AddVoter.
func New(cfg Config) (_ *Node, err error) {
	switch {
	case cfg.NodeID == "":
		return nil, errors.New("cluster: NodeID is required")
	case cfg.DataDir == "":
		return nil, errors.New("cluster: DataDir is required")
	case cfg.TLS == nil:
		return nil, errors.New("cluster: TLS config is required")
	case cfg.FSM == nil:
		return nil, errors.New("cluster: FSM is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.BindAddr == "" {
		cfg.BindAddr = "127.0.0.1:6262"
	}
	setDefault(&cfg.HeartbeatTimeout, DefaultHeartbeatTimeout)
	setDefault(&cfg.ElectionTimeout, DefaultElectionTimeout)
	setDefault(&cfg.LeaderLeaseTimeout, DefaultLeaderLeaseTimeout)
	setDefault(&cfg.CommitTimeout, DefaultCommitTimeout)
	setDefault(&cfg.LeaderWait, DefaultLeaderWait)
	setDefault(&cfg.ForwardStallTimeout, DefaultForwardStall)
	setDefault(&cfg.SnapshotInterval, DefaultSnapshotInterval)

	n := &Node{
		cfg:      cfg,
		id:       cfg.NodeID,
		logger:   cfg.Logger.Named("cluster"),
		fsm:      cfg.FSM,
		handlers: make(map[string]RPCHandler),
		bgDone:   make(chan struct{}),
	}
	n.leaderSig.init()
	n.ctx, n.cancel = context.WithCancel(context.Background())
	var cleanup []func()
	defer func() {
		if err != nil {
			n.cancel()
			for i := len(cleanup) - 1; i >= 0; i-- {
				cleanup[i]()
			}
		}
	}()

	dir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	n.store, err = openLogStore(dir, cfg.Logger, cfg.LogSegmentSize)
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, func() { n.store.Close() })
	fileSnaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetain, cfg.Logger.Named("snapshots"))
	if err != nil {
		return nil, fmt.Errorf("cluster: snapshot store: %w", err)
	}
	n.snaps = &pacedSnapshots{FileSnapshotStore: fileSnaps, dir: filepath.Join(dir, "snapshots")}
	n.hasState, err = raft.HasExistingState(n.store, n.store, n.snaps)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}

	ln, err := net.Listen("tcp", cfg.BindAddr)
	if err != nil {
		return nil, fmt.Errorf("cluster: listen: %w", err)
	}
	n.advertise, err = advertiseAddr(cfg.AdvertiseAddr, ln.Addr())
	if err != nil {
		ln.Close()
		return nil, err
	}
	n.mux = newMux(ln, cfg.TLS, cfg.VerifyPeer, n.logger)
	n.mux.rpc = n.serveRPC
	n.pool = &rpcPool{n: n, slots: make(map[string]*poolSlot)}
	n.registerInternalRPCs()
	n.mux.start()
	cleanup = append(cleanup, n.mux.close, n.pool.close)

	layer := newRaftLayer(n.mux, n.advertise)
	n.trans = &gatedTransport{NetworkTransport: raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  layer,
		MaxPool: 3,
		Timeout: 10 * time.Second,
		Logger:  cfg.Logger.Named("raft-net"),
	})}
	cleanup = append(cleanup, func() { n.trans.Close() })

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.Logger = raftLogger{cfg.Logger.Named("raft")}
	rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.LeaderLeaseTimeout
	rc.CommitTimeout = cfg.CommitTimeout
	// Group commit: the leader takes up to maxAppendEntries queued writes
	// per log write (one fsync), and BatchApplyCh buffers the apply channel
	// so that writers queue instead of blocking on the leader loop.
	rc.MaxAppendEntries = maxAppendEntries
	rc.BatchApplyCh = true
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
	}
	rc.SnapshotInterval = cfg.SnapshotInterval
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	n.logs, err = raft.NewLogCache(logCacheSize, n.store)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	cfg.FSM.OnApplied(n.waits.applied)
	n.raft, err = raft.NewRaft(rc, resultFSM{FSM: cfg.FSM, waits: &n.waits}, n.logs, n.store, n.snaps, n.trans)
	if err != nil {
		return nil, fmt.Errorf("cluster: start raft: %w", err)
	}

	obsCh := make(chan raft.Observation, 16)
	n.observer = raft.NewObserver(obsCh, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.LeaderObservation, raft.RaftState:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(n.observer)
	go n.watchLeader(obsCh)
	n.logger.Debug("cluster node started", "id", n.id, "addr", n.advertise, "existing_state", n.hasState)
	return n, nil
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// advertiseAddr picks the address peers dial. An unspecified bind host
// (":0", "0.0.0.0") cannot be dialed, so it becomes 127.0.0.1: fine for
// tests and single hosts; real clusters must set AdvertiseAddr.
func advertiseAddr(adv string, bound net.Addr) (string, error) {
	if adv != "" {
		if _, _, err := net.SplitHostPort(adv); err != nil {
			return "", fmt.Errorf("cluster: bad AdvertiseAddr %q: %w", adv, err)
		}
		return adv, nil
	}
	ta, ok := bound.(*net.TCPAddr)
	if !ok {
		return bound.String(), nil
	}
	if ta.IP == nil || ta.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(ta.Port)), nil
	}
	return ta.String(), nil
}

// watchLeader turns raft observations into leaderSig broadcasts, which wake
// writes that wait for a leader, and ends the forward epoch of a leader that
// was replaced or fell silent.
func (n *Node) watchLeader(ch <-chan raft.Observation) {
	defer close(n.bgDone)
	tick := time.NewTicker(max(n.cfg.ForwardStallTimeout/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ch:
			n.leaderSig.fire()
			id, _ := n.Leader()
			n.endEpoch(func(ep *epoch) bool { return ep.leader != id }, errLeaderChanged)
		case <-tick.C:
			if n.raft.State() == raft.Follower && time.Since(n.raft.LastContact()) > n.cfg.ForwardStallTimeout {
				n.endEpoch(func(*epoch) bool { return true }, errLeaderSilent)
			}
		case <-n.ctx.Done():
			return
		}
	}
}

// epoch is the life of the forwards to one leader: its context ends when
// this node learns of another leader or the leader falls silent.
type epoch struct {
	leader string
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// Causes of an ended forward epoch.
var (
	errLeaderChanged = errors.New("the leader changed")
	errLeaderSilent  = errors.New("the leader stopped answering")
)

// forwardEpoch returns the current epoch of leader, starting one if needed.
func (n *Node) forwardEpoch(leader string) *epoch {
	n.fwdMu.Lock()
	defer n.fwdMu.Unlock()
	if n.fwd == nil || n.fwd.leader != leader {
		if n.fwd != nil {
			n.fwd.cancel(errLeaderChanged)
		}
		ctx, cancel := context.WithCancelCause(n.ctx)
		n.fwd = &epoch{leader: leader, ctx: ctx, cancel: cancel}
	}
	return n.fwd
}

// endEpoch ends the current epoch if end says so.
func (n *Node) endEpoch(end func(*epoch) bool, cause error) {
	n.fwdMu.Lock()
	defer n.fwdMu.Unlock()
	if n.fwd != nil && end(n.fwd) {
		n.fwd.cancel(cause)
		n.fwd = nil
	}
}

// HasState reports whether the data dir already held raft state when New
// opened it (then the node must not be bootstrapped again).
func (n *Node) HasState() bool { return n.hasState }

// BootstrapSelf bootstraps a one-voter cluster made of this node. It fails
// (wrapping raft.ErrCantBootstrap) if the node already has state.
func (n *Node) BootstrapSelf() error {
	f := n.raft.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{
		Suffrage: raft.Voter, ID: raft.ServerID(n.id), Address: raft.ServerAddress(n.advertise),
	}}})
	if err := f.Error(); err != nil {
		return mapRaftErr("bootstrap", err)
	}
	n.hasState = true
	return nil
}

// Shutdown leaves the cluster gracefully: a leader with other voters first
// hands leadership over (so the cluster does not wait an election timeout),
// then raft stops, in-flight RPCs get their answers (until ctx ends) and the
// listener, connections and stores are closed. Later calls return the first
// call's result.
func (n *Node) Shutdown(ctx context.Context) error {
	n.shutdownOnce.Do(func() { n.shutdownErr = n.shutdown(ctx) })
	return n.shutdownErr
}

func (n *Node) shutdown(ctx context.Context) error {
	if n.IsLeader() && n.hasOtherVoters() {
		if err := n.raft.LeadershipTransfer().Error(); err != nil {
			n.logger.Warn("leadership transfer before shutdown failed", "error", err)
		}
	}
	// Refuse new RPCs from here on (callers retry elsewhere), but let the
	// running ones answer: raft.Shutdown fails the futures they wait on and
	// cancelling n.ctx ends handlers waiting on their context.
	n.rpcGate.Lock()
	n.draining = true
	n.rpcGate.Unlock()
	n.closed.Store(true)
	n.mux.stopAccepting()
	err := n.raft.Shutdown().Error()
	n.trans.stopHeartbeats()
	n.raft.DeregisterObserver(n.observer)
	n.cancel()

	waited := make(chan struct{})
	go func() { n.inflight.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		n.logger.Warn("shutdown: not waiting for in-flight RPCs any longer", "error", ctx.Err())
	}
	n.pool.close()
	n.mux.close()
	n.trans.Close()
	<-n.bgDone
	if cerr := n.store.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cluster: shutdown: %w", err)
	}
	n.logger.Debug("cluster node stopped", "id", n.id)
	return nil
}

func (n *Node) hasOtherVoters() bool {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter && string(s.ID) != n.id {
			return true
		}
	}
	return false
}
