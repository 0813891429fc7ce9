package controller

import (
	"context"
	"edgectl/dataplane/dpevent"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"edgectl/api"
	"edgectl/auth"
	"edgectl/cluster"
	"edgectl/dataplane"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
	"edgectl/webhook"

	"github.com/hashicorp/go-hclog"
)

// Node is one running controller node.
type Node struct {
	cfg    Config
	log    hclog.Logger
	Store  *store.Store
	FSM    *fsm.FSM
	Raft   *cluster.Node
	Writer *fsm.Writer
	API    *api.Server
	http   *http.Server
	// gate holds what reaches the API port until the node serves;
	// metricsGate what reaches the metrics port (nil without one).
	gate        *startGate
	metricsGate *startGate
	httpErrors  *lateWriter
	adminSrv    *http.Server
	// metricsSrv serves /metrics when Config.MetricsAddr is set.
	metricsSrv *http.Server
	apiLn      net.Listener
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	activity   *auth.Activity
	// postureKick asks the leader for a posture sweep now: what some
	// service policy requires of posture changed (runPostureSweep).
	postureKick chan struct{}
	maint       *auth.Maintainer
	stopOnce    sync.Once
	stopping    chan struct{}
	peers       *peers
	lock        *dirLock
	deliverer   *webhook.Deliverer
	// dpEvents are this node's data-plane events (controller/dpevents.go).
	dpEvents *dpevent.Log
	// Routers holds the control channels of the routers connected to this node.
	Routers *dataplane.Manager
	// snapReported is the index of the last snapshot reported as a
	// cluster event (reportSnapshot).
	snapReport   sync.Mutex
	snapReported uint64
}

// Start brings a node up: on an empty data dir it creates the PKI and
// bootstraps a one-node cluster; otherwise it resumes. out receives the
// generated admin password, once.
func Start(ctx context.Context, cfg Config, log hclog.Logger, out io.Writer) (_ *Node, err error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	headroom, _ := ParseGCHeadroom(cfg.GCHeadroom) // validated
	log.Info("garbage collector", "target", tuneGC(cfg.GCPercent, headroom, log))
	startup := newStartupLog(log)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	// Two processes on one data dir would corrupt it; the second one stops
	// here, before it opens anything else.
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.release()
		}
	}()
	nodeID, err := loadNodeID(cfg.DataDir, cfg.NodeID)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: log, Store: store.New(), activity: auth.NewActivity(), postureKick: make(chan struct{}, 1), peers: &peers{status: map[string]peerStatus{}}, stopping: make(chan struct{}), lock: lock}
	n.FSM = fsm.New(n.Store)

	fresh := !cluster.HasLogStore(cfg.DataDir)
	clusterAdvertise := cfg.clusterAdvertiseAddr()
	switch {
	case !fresh || fileExists(filepath.Join(cfg.DataDir, pkiDir, nodeCertFile)):
		if cfg.Join != "" && !fileExists(filepath.Join(cfg.DataDir, joinPendingFile)) {
			log.Info("this data dir already belongs to a cluster member: --join is ignored")
		}
	case cfg.Join != "":
		if clusterAdvertise == "" {
			return nil, errors.New("a joining node needs a fixed --cluster-addr port")
		}
		// The token works once: a port that cannot be bound must stop the
		// start before the join spends it.
		for _, l := range [...]struct{ flag, addr string }{{"--api-addr", cfg.APIAddr}, {"--cluster-addr", cfg.ClusterAddr}} {
			if l.flag == "--api-addr" && cfg.APIListener != nil {
				continue // open already
			}
			if err := checkListenable(l.addr); err != nil {
				return nil, fmt.Errorf("%s %s cannot be bound (the join token is still unused): %w", l.flag, l.addr, err)
			}
		}
		if err := n.requestJoin(ctx, nodeID, clusterAdvertise); err != nil {
			return nil, err
		}
	default:
		if err := n.createPKI(nodeID); err != nil {
			return nil, fmt.Errorf("create PKI: %w", err)
		}
	}
	certs, err := loadCertMaterial(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if err := n.listenAPI(certs); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			n.stopOnce.Do(func() { close(n.stopping) })
			_ = n.http.Close()
			if n.metricsSrv != nil {
				_ = n.metricsSrv.Close()
			}
		}
	}()
	if err = n.listenMetrics(); err != nil {
		return nil, err
	}
	n.Raft, err = cluster.New(cluster.Config{
		NodeID: nodeID, DataDir: cfg.DataDir, BindAddr: cfg.ClusterAddr,
		AdvertiseAddr: clusterAdvertise,
		TLS:           certs.clusterTLS(), FSM: n.FSM, Logger: log.Named("raft"),
		SnapshotThreshold: cfg.SnapshotThreshold, SnapshotInterval: cfg.SnapshotInterval, TrailingLogs: cfg.TrailingLogs,
		LogSegmentSize:   int(cfg.RaftSegmentSize),
		HeartbeatTimeout: cfg.HeartbeatTimeout, ElectionTimeout: cfg.ElectionTimeout,
		NoApplyAhead: cfg.NoApplyAhead,
		VerifyPeer:   verifyNodePeer,
	})
	if err != nil {
		return nil, err
	}
	startup.phase("raft open", n.Raft)
	n.Writer = fsm.NewWriter(n.Raft, cfg.Now)
	n.Writer.SetGate(n.commandGate)
	n.Writer.ResolveUnknownOutcomes(n.FSM, n.Raft.Barrier)
	// Only the node that created the cluster bootstraps Raft; a joining node waits to be added.
	if !n.Raft.HasState() && fileExists(filepath.Join(cfg.DataDir, pkiDir, bootstrapFile)) {
		if err := n.Raft.BootstrapSelf(); err != nil {
			_ = n.Raft.Shutdown(ctx)
			return nil, fmt.Errorf("bootstrap raft: %w", err)
		}
	}
	if err := n.applyBootstrap(ctx, out); err != nil {
		_ = n.Raft.Shutdown(ctx)
		return nil, err
	}
	if n.Raft.HasState() {
		n.waitCaughtUp(ctx)
		startup.phase("caught up", n.Raft)
	}
	if err := n.startAPI(certs); err != nil {
		_ = n.Raft.Shutdown(ctx)
		return nil, err
	}
	startup.phase("serving", n.Raft)
	n.startMetrics()
	if err := n.startAdminSocket(); err != nil {
		// The socket is a convenience for operators on this machine; the node serves without it.
		log.Warn("the local admin socket could not be opened: `edgectl cluster` will not reach this node", "error", err)
	}
	if err := n.completeJoin(ctx, certs); err != nil {
		_ = n.Shutdown(ctx)
		return nil, err
	}
	n.startMaintenance()
	n.runUpgradeSteps()
	n.applyEventRetention()
	n.reportClusterEvents()
	if err := n.startEventsFile(); err != nil {
		_ = n.Shutdown(ctx)
		return nil, err
	}
	if err := n.startDataPlaneEventsFile(); err != nil {
		_ = n.Shutdown(ctx)
		return nil, err
	}
	n.startPeerProbe(peerProbeInterval)
	n.registerController()
	log.Info("node started", "id", nodeID, "api", n.APIURL(), "cluster", n.Raft.Addr())
	return n, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// createPKI makes the cluster's CA chain and this node's certificates, and
// keeps the chain in a file until the bootstrap command has put it in the model.
func (n *Node) createPKI(nodeID string) error {
	now := time.Now().UTC()
	st, err := pki.NewState(now, "edgectl")
	if err != nil {
		return err
	}
	a, err := pki.Load(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(n.cfg.DataDir, pkiDir), 0o700); err != nil {
		return err
	}
	raw, _ := json.Marshal(st)
	if err := writeFileAtomic(filepath.Join(n.cfg.DataDir, pkiDir, bootstrapFile), raw, 0o600); err != nil {
		return err
	}
	return issueNodeCerts(n.cfg.DataDir, nodeID, n.certHosts(), a, now)
}

// certHosts are the names in this node's certificates (conventions §1).
func (n *Node) certHosts() []string {
	hosts := []string{n.cfg.advertiseHost()}
	for _, h := range []string{"localhost", "127.0.0.1"} {
		if h != hosts[0] {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// applyBootstrap proposes the bootstrap records when this node created the
// cluster and the model does not have them yet (also after a crash between
// the Raft bootstrap and the command).
func (n *Node) applyBootstrap(ctx context.Context, out io.Writer) error {
	p := filepath.Join(n.cfg.DataDir, pkiDir, bootstrapFile)
	raw, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := n.Raft.WaitForLeader(wctx); err != nil {
		return fmt.Errorf("waiting for the new cluster's leader: %w", err)
	}
	if err := n.Raft.Barrier(wctx); err != nil {
		return err
	}
	if !n.Store.Read().Bootstrapped() {
		b, password, err := BootstrapRecords(wctx, n.cfg.AdminUsername, n.cfg.AdminPassword, raw, time.Now().UTC())
		if err != nil {
			return err
		}
		if _, err := n.Writer.Do(wctx, fsm.CmdBootstrap, b); err != nil {
			return fmt.Errorf("apply bootstrap records: %w", err)
		}
		// A new cluster serves with its built-in records from the start
		// (an upgraded one gets them from ensureBuiltins).
		if _, err := n.Writer.Do(wctx, fsm.CmdBuiltinsEnsure, BuiltinRecords(b.At)); err != nil {
			return fmt.Errorf("apply the built-in records: %w", err)
		}
		keys, err := NewDataPlaneKeys(b.At)
		if err != nil {
			return err
		}
		if _, err := n.Writer.Do(wctx, fsm.CmdDataPlaneKeysEnsure, keys); err != nil {
			return fmt.Errorf("apply the data-plane keys: %w", err)
		}
		if !n.cfg.NoEventLog {
			if _, err := n.Writer.Do(wctx, fsm.CmdEventsEnable, n.wantedRetention(DefaultEventRetention())); err != nil {
				return fmt.Errorf("turn the event log on: %w", err)
			}
			if _, err := n.Writer.Do(wctx, fsm.CmdEventsCluster, struct{}{}); err != nil {
				return fmt.Errorf("turn the cluster events on: %w", err)
			}
		}
		if password != "" {
			fmt.Fprintf(out, "\nThe default admin %q was created with the password:\n\n    %s\n\nIt is shown only this once.\n\n",
				n.cfg.AdminUsername, password)
		}
	}
	return os.Remove(p)
}

// waitCaughtUp holds a resuming node back until it has applied what the
// cluster committed, so its first answers are not from an empty model. A node
// that cannot reach a quorum in time starts anyway and serves what it has,
// as a partitioned node does.
func (n *Node) waitCaughtUp(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, n.cfg.ReadyTimeout)
	defer cancel()
	err := n.Raft.WaitForLeader(wctx)
	if err == nil {
		err = n.Raft.Barrier(wctx)
	}
	if err != nil {
		n.log.Warn("started without reaching the cluster's leader: reads may be stale until it is back", "error", err)
	}
}

// startAPI builds both APIs and the routers' control channels, and opens
// the API port's gate to them.
func (n *Node) startAPI(certs *certMaterial) error {
	_, port, _ := net.SplitHostPort(n.apiLn.Addr().String())
	advertiseURL := "https://" + net.JoinHostPort(n.cfg.advertiseHost(), port)
	n.dpEvents = n.newDataPlaneEvents()
	n.Routers = dataplane.New(dataplane.Config{NodeID: n.Raft.ID(), Version: n.cfg.Version, Store: n.Store, Events: n.dpEvents,
		Authority: func(tx *store.Tx) (*pki.Authority, error) { return n.API.Authority(tx) },
		SignRouterCerts: func(tx *store.Tx, id, clientCSR, serverCSR string) (string, string, string, string, error) {
			return n.API.RouterCertsFromCSRs(tx, id, clientCSR, serverCSR)
		},
		AppliedIndex: n.FSM.AppliedSignal, Writer: n.Writer, Activity: n.activity, IsLeader: n.Raft.IsLeader, Log: n.log.Named("routers"), Now: n.cfg.Now,
		PostureRequirementsChanged: n.kickPostureSweep, SmartRerouteInterval: n.cfg.SmartRerouteInterval,
		RouterGrace: n.cfg.RouterGrace, MaxTerminatorCreates: n.cfg.MaxTerminatorCreates})
	n.FSM.Watch(n.Routers)
	n.registerLinkUpdate(n.Routers)
	n.API = api.New(api.Deps{
		Store: n.Store, Writer: n.Writer, Cluster: snapshotReporter{n.Raft, n}, Hasher: auth.NewHasher(auth.DefaultParams),
		Log: n.log.Named("api"), Activity: n.activity, Peers: n, Now: n.cfg.Now, DataPlane: clusterDataPlane{n.Routers, n}, DataPlaneEvents: n.dpEvents,
	}, api.Config{AdvertiseURL: advertiseURL, SessionTimeout: n.cfg.SessionTimeout, BackupDir: filepath.Join(n.cfg.DataDir, "backups"),
		Version: n.cfg.Version, Revision: n.cfg.Revision, BuildDate: n.cfg.BuildDate, JWKSRootCAs: n.cfg.JWKSRootCAs,
		ReadConsistency: n.cfg.ReadConsistency, JWTKey: signerOf(certs.api), ListenAddrs: n.listenAddrs(), CORSOrigins: n.cfg.CORSOrigins})
	n.registerInspect() // after n.API: the handler reads it
	n.deliverer = n.newDeliverer()
	n.API.RegisterCollector(&eventCollector{n: n})
	n.API.RegisterCollector(&healthCollector{n: n, expiry: certs.expiry})
	for _, c := range n.Routers.Collectors() {
		n.API.RegisterCollector(c)
	}
	n.Routers.Start()
	// Management channels are hijacked connections: Shutdown closes them.
	n.http.RegisterOnShutdown(n.API.CloseManagementChannels)
	n.httpErrors.set(n.Routers.HTTPErrorLog(n.log.Named("http")).Writer())
	n.gate.open(n.API.Handler(), n.Routers.ServeTLS)
	return nil
}

// startMaintenance runs the activity flush and session expiry loop.
func (n *Node) startMaintenance() {
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.maint = &auth.Maintainer{
		Activity: n.activity, Store: n.Store, Timeout: n.cfg.SessionTimeout, Interval: n.cfg.MaintenanceInterval,
		Now: func() time.Time { return time.Now().UTC() }, IsLeader: n.Raft.IsLeader,
		Flush: func(ctx context.Context, batch []store.Activity) error {
			_, err := n.Writer.Do(ctx, fsm.CmdAPISessionsTouch, fsm.Touch{Batch: batch})
			return err
		},
		Expire: func(ctx context.Context, ids []string) error {
			_, err := n.Writer.Do(ctx, fsm.CmdAPISessionsDelete, fsm.DeleteMany{IDs: ids})
			return err
		},
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.maint.Run(ctx)
	}()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.runPostureSweep(ctx)
	}()
	n.startEventDelivery(ctx)
	n.startDataPlaneDelivery(ctx)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.API.SampleHealth(ctx)
	}()
	if n.cfg.SnapshotThreshold == 0 {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.adaptSnapshotThreshold(ctx, defaultSnapshotThreshold, snapshotThresholdEvery)
		}()
	}
}

// runPostureSweep has the leader re-evaluate posture periodically, and
// at once when what a service policy requires of posture changed (a check's
// data, a policy's checks): time alone (an MFA timeout, the end of a wake
// grace) or an administrator can make a check fail, and the sweep goes
// through Raft so every node removes the same sessions.
func (n *Node) runPostureSweep(ctx context.Context) {
	t := time.NewTicker(n.cfg.PostureSweepInterval)
	defer t.Stop()
	for {
		kicked := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-n.postureKick:
			kicked = true
		}
		if !n.Raft.IsLeader() {
			continue
		}
		tx := n.Store.Read()
		if (!kicked && !tx.HasTimedPostureChecks()) || tx.Count(store.KindSession)+tx.Count(store.KindPostureData) == 0 {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := n.Writer.Do(sctx, fsm.CmdPostureSweep, fsm.PostureSweep{}); err != nil {
			n.log.Warn("posture sweep failed", "error", err)
		}
		cancel()
	}
}

// kickPostureSweep asks runPostureSweep for a sweep now; kicks that come
// while one waits are one sweep.
func (n *Node) kickPostureSweep() {
	select {
	case n.postureKick <- struct{}{}:
	default:
	}
}

// APIURL is the https URL of this node's APIs.
func (n *Node) APIURL() string {
	_, port, _ := net.SplitHostPort(n.apiLn.Addr().String())
	return "https://" + net.JoinHostPort(n.cfg.advertiseHost(), port)
}

// DataDir is the node's data directory.
func (n *Node) DataDir() string { return n.cfg.DataDir }

// Shutdown stops taking requests, finishes those in flight, flushes session
// activity, hands leadership over if leader and closes Raft.
func (n *Node) Shutdown(ctx context.Context) error {
	var err error
	n.stopOnce.Do(func() {
		close(n.stopping)
		// The API port stops taking connections before the routers' channels
		// close: a router dials again at once, and must not reach this node
		// (which would refuse it, and the router wait 5 s to dial again) but
		// the next one, in the backlog of a socket a service manager keeps
		// open (Config.APIListener), or be refused at once.
		_ = n.apiLn.Close()
		// Router channels are connections the HTTP server would wait for.
		if n.Routers != nil {
			n.Routers.Close()
		}
		for _, srv := range []*http.Server{n.http, n.adminSrv, n.metricsSrv} {
			if srv == nil {
				continue
			}
			if e := srv.Shutdown(ctx); e != nil {
				err = errors.Join(err, e)
			}
		}
		if n.cancel != nil {
			n.cancel()
		}
		n.wg.Wait()
		if n.maint != nil {
			fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			n.maint.Tick(fctx)
			cancel()
		}
		if e := n.Raft.Shutdown(ctx); e != nil {
			err = errors.Join(err, e)
		}
		n.lock.release()
	})
	return err
}

// startMetrics serves Prometheus metrics when an address is configured.
// listenMetrics opens the metrics port (--metrics-addr), with the API
// port, before the node restores its model and catches up: the probes
// answer from the start (alive, not ready), the profiles are served at
// once, and the metrics wait for startMetrics, as the API port's requests
// wait for the node (startGate). A port that cannot be bound stops the
// start before Raft opens.
func (n *Node) listenMetrics() error {
	if n.cfg.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", n.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	n.metricsGate = newStartGate(n.stopping)
	mux := http.NewServeMux()
	mux.Handle("/", n.metricsGate)
	if n.cfg.EnablePprof {
		// Sampled, so the profiles cost little: a blocking event per 10µs
		// blocked, one mutex contention in 100.
		runtime.SetBlockProfileRate(10_000)
		runtime.SetMutexProfileFraction(100)
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	n.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := n.metricsSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.log.Error("metrics listener stopped", "error", err)
		}
	}()
	return nil
}

// startMetrics serves the metrics and the probes of the API on the metrics
// port (opened by listenMetrics) once the node serves.
func (n *Node) startMetrics() {
	if n.metricsGate == nil {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", n.API.MetricsHandler())
	probes := n.API.ProbeHandler()
	mux.Handle("/livez", probes)
	mux.Handle("/readyz", probes)
	n.metricsGate.open(mux, nil)
}
