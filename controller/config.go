package controller

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"

	"edgectl"
	"edgectl/api"
)

// Config is the configuration of one node (conventions §1).
type Config struct {
	DataDir     string
	APIAddr     string // HTTPS listener of both APIs
	ClusterAddr string // mTLS listener of Raft and forwarding
	Advertise   string // host other nodes and clients use; "" = host of APIAddr
	// ClusterAdvertise is the HOST:PORT other nodes dial for Raft and forwarding, when it is not the advertise
	// host with the port of ClusterAddr (behind NAT, a port mapping or a TCP proxy); "" = that default.
	ClusterAdvertise string
	NodeID           string // "" = generated once and kept in the data dir
	AdminUsername    string
	AdminPassword    string // "" = generated and printed once at bootstrap
	Join             string // HOST:PORT (or https URL) of a node's API to join through
	JoinToken        string // from `edgectl cluster join-token`

	SessionTimeout time.Duration
	// CORSOrigins may call the APIs from a browser page (--cors-origins).
	CORSOrigins []string
	// SnapshotThreshold, when set, is raft's fixed snapshot threshold; 0
	// means 4096 raised with the model's size (snapshots.go).
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	// RaftSegmentSize is the size in bytes of the Raft log's segment files
	// (0: 64 MiB); the log is freed by whole segments after a snapshot.
	RaftSegmentSize int64
	// MaintenanceInterval is how often activity is flushed and expired sessions removed.
	MaintenanceInterval time.Duration
	// GCPercent is the garbage collector's target (GOGC) for this process;
	// 0 means DefaultGCPercent. The GOGC environment variable, when set, wins.
	GCPercent int
	// GCHeadroom is how much the heap may grow between collections at
	// least (--gc-headroom, gc.go): "0" or "" (off, the default: GCPercent
	// alone), "auto" (the smaller of 512 MiB and a sixteenth of the
	// machine's memory) or a size such as 256MiB. Ignored when GOGC is set
	// in the environment.
	GCHeadroom string
	// MetricsAddr, when set, serves Prometheus metrics over plain HTTP at /metrics (keep it on loopback or a private network).
	MetricsAddr string
	// EnablePprof serves Go's profiles at /debug/pprof/ on MetricsAddr (for profiling under load).
	EnablePprof bool
	// ReadConsistency is the consistency of a GET without ?consistency=:
	// "local" (default) or "linearizable".
	ReadConsistency string
	// NoEventLog leaves the event log of a new cluster off (and does not
	// turn it on in an existing one): for the benchmark that prices the
	// event log, not an operator setting.
	NoEventLog bool
	// EventRetentionCount and EventRetention, when set (non-zero), are the
	// event log's retention this node asks the cluster for when it starts
	// (the retention is replicated: the last node started with them sets
	// it). A new cluster without them keeps 100,000 events for 30 days.
	EventRetentionCount int64
	EventRetention      time.Duration
	// EventsFile, when set, is a JSON-lines file this node appends every
	// event to, rotated at EventsFileMaxSize bytes (EventsFileKeep old
	// files are kept).
	EventsFile        string
	EventsFileMaxSize int64
	EventsFileKeep    int
	// Data-plane events (controller/dpevents.go): off with NoDataPlaneEvents;
	// kept DataPlaneEventsCount and DataPlaneEventsMaxAge (0: 10,000 and an
	// hour); appended to DataPlaneEventsFile, in DataPlaneEventsFormat
	// ("edgectl", the default, or "openziti"), rotated as EventsFile.
	NoDataPlaneEvents     bool
	DataPlaneEventsCount  int
	DataPlaneEventsMaxAge time.Duration
	DataPlaneEventsFile   string
	DataPlaneEventsFormat string
	// PostureSweepInterval is how often the leader re-evaluates time-dependent posture checks.
	PostureSweepInterval time.Duration
	// ReadyTimeout bounds how long a restarting node waits to catch up with the cluster before serving.
	ReadyTimeout time.Duration
	// APIListener, when set, is the API port already open at APIAddr,
	// passed by a service manager that keeps it open across restarts
	// (systemd's socket activation): what arrives while the node restarts
	// waits in its backlog for the next process instead of being refused.
	APIListener net.Listener
	// Raft timing; zero means the cluster package's defaults.
	HeartbeatTimeout, ElectionTimeout time.Duration
	// NoApplyAhead turns the follower's apply-ahead off (--apply-ahead=false):
	// a write this node forwards is answered once raft delivered it here
	// (cluster.Config.NoApplyAhead, docs/design/apply-ahead.md). false = on.
	NoApplyAhead bool
	// SmartRerouteInterval is how often this node moves circuits to paths
	// that became cheaper (--smart-reroute-interval; 0: never).
	SmartRerouteInterval time.Duration
	// RouterGrace is how long a router whose control channel to this node
	// closed may stay away before the circuits it is an end of end
	// (--router-grace; 0: the dataplane package's 30 s).
	RouterGrace time.Duration
	// MaxTerminatorCreates bounds the routers' terminator creates queued or
	// in flight on this node at once; over it a create is answered busy and
	// the router retries (--max-terminator-creates; 0: the dataplane
	// package's 1000).
	MaxTerminatorCreates int

	Version, Revision, BuildDate string

	// Now is the API's clock (lockout, TOTP, certificate and JWT validity); nil = time.Now. For tests.
	Now func() time.Time
	// JWKSRootCAs are the CAs trusted when fetching external JWT signers' key sets; nil = the system pool.
	JWKSRootCAs *x509.CertPool
}

// Bounds of --raft-segment-size: small segments free the log sooner after a
// snapshot but cost a file rotation (and an fsync of the meta store) each;
// the WAL holds a segment's offsets in memory.
const (
	minRaftSegmentSize = 16 << 10
	maxRaftSegmentSize = 1 << 30
)

// minSnapshotInterval is raft's own floor for --snapshot-interval (it
// refuses to start below it).
const minSnapshotInterval = 5 * time.Millisecond

// Defaults fills zero fields with the defaults of conventions §1.
func (c *Config) Defaults() {
	if c.EventsFileMaxSize == 0 {
		c.EventsFileMaxSize = 100 << 20
	}
	if c.DataDir == "" {
		c.DataDir = "./data"
	}
	if c.APIAddr == "" {
		c.APIAddr = "127.0.0.1:1280"
	}
	if c.ClusterAddr == "" {
		c.ClusterAddr = "127.0.0.1:6262"
	}
	if c.AdminUsername == "" {
		c.AdminUsername = "admin"
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = 30 * time.Minute
	}
	if c.MaintenanceInterval == 0 {
		c.MaintenanceInterval = 5 * time.Second
	}
	if c.PostureSweepInterval == 0 {
		c.PostureSweepInterval = 5 * time.Second
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 30 * time.Second
	}
	if c.Version == "" {
		c.Version = edgectl.Version
	}
}

// Validate checks the configuration before anything is started. A zero
// setting is one not set: Defaults, or the package it goes to, fills it in.
func (c *Config) Validate() error { return c.validate(func(string) bool { return false }) }

// ValidateGiven is Validate for settings a person wrote (the flags and
// --config file of `edgectl run` and `edgectl restore`): a setting whose
// flag was given, given(flag) true, is checked as given, zero included. A
// zero given is refused where it would silently become the default
// (--router-grace 0 is not 30s), and kept where zero has a meaning
// (--smart-reroute-interval 0: never; --events-file-keep 0: none kept).
// Call it before Defaults, which would replace the zeros given.
func (c *Config) ValidateGiven(given func(flag string) bool) error { return c.validate(given) }

// validate checks each setting that is set: not zero, or given.
func (c *Config) validate(given func(flag string) bool) error {
	set := func(flag string, zero bool) bool { return !zero || given(flag) }
	if err := c.validateDataPlaneEvents(set); err != nil {
		return err
	}
	if set("data-dir", c.DataDir == "") && c.DataDir == "" {
		return errors.New(`--data-dir "": must name a directory`)
	}
	if set("api-addr", c.APIAddr == "") {
		if _, _, err := net.SplitHostPort(c.APIAddr); err != nil {
			return fmt.Errorf("--api-addr %q: %w", c.APIAddr, err)
		}
	}
	if set("cluster-addr", c.ClusterAddr == "") {
		if _, _, err := net.SplitHostPort(c.ClusterAddr); err != nil {
			return fmt.Errorf("--cluster-addr %q: %w", c.ClusterAddr, err)
		}
	}
	if samePort(c.APIAddr, c.ClusterAddr) {
		_, port, _ := net.SplitHostPort(c.APIAddr)
		return fmt.Errorf("--api-addr %q and --cluster-addr %q both name port %s: each needs its own", c.APIAddr, c.ClusterAddr, port)
	}
	if c.SmartRerouteInterval < 0 {
		return fmt.Errorf("--smart-reroute-interval %s: must be 0 (never) or more", c.SmartRerouteInterval)
	}
	if set("router-grace", c.RouterGrace == 0) && c.RouterGrace < time.Second {
		return fmt.Errorf("--router-grace %s: must be at least 1s", c.RouterGrace)
	}
	if set("max-terminator-creates", c.MaxTerminatorCreates == 0) && c.MaxTerminatorCreates < 1 {
		return fmt.Errorf("--max-terminator-creates %d: must be at least 1", c.MaxTerminatorCreates)
	}
	if set("gc-percent", c.GCPercent == 0) && (c.GCPercent < 10 || c.GCPercent > 10000) {
		return fmt.Errorf("--gc-percent %d: must be between 10 and 10000", c.GCPercent)
	}
	if set("gc-headroom", c.GCHeadroom == "") {
		if c.GCHeadroom == "" {
			return errors.New(`--gc-headroom "": must be auto, 0 (off) or a size`)
		}
		if _, err := ParseGCHeadroom(c.GCHeadroom); err != nil {
			return fmt.Errorf("--gc-headroom %q: %w", c.GCHeadroom, err)
		}
	}
	if n := len(c.AdminUsername); set("admin-username", n == 0) && (n < 4 || n > 100) {
		return fmt.Errorf("--admin-username %q: must be 4 to 100 characters", c.AdminUsername)
	}
	if c.AdminPassword != "" {
		if n := len(c.AdminPassword); n < 5 || n > 100 {
			return errors.New("--admin-password must be 5 to 100 characters")
		}
	}
	if c.ClusterAdvertise != "" {
		if _, port, err := net.SplitHostPort(c.ClusterAdvertise); err != nil || port == "0" || port == "" {
			return fmt.Errorf("--cluster-advertise %q: must be HOST:PORT with a fixed port", c.ClusterAdvertise)
		}
	}
	for _, o := range c.CORSOrigins {
		if err := api.ValidCORSOrigin(o); err != nil {
			return fmt.Errorf("--cors-origins %q: %w", o, err)
		}
	}
	if (c.Join == "") != (c.JoinToken == "") {
		return errors.New("--join and --join-token go together")
	}
	if set("read-consistency", c.ReadConsistency == "") && !api.ValidConsistency(c.ReadConsistency) {
		return fmt.Errorf("--read-consistency %q: must be local or linearizable", c.ReadConsistency)
	}
	if set("event-retention-count", c.EventRetentionCount == 0) && c.EventRetentionCount < 1 {
		return fmt.Errorf("--event-retention-count %d: must be at least 1", c.EventRetentionCount)
	}
	if set("event-retention", c.EventRetention == 0) && c.EventRetention < time.Minute {
		return fmt.Errorf("--event-retention %s: must be at least 1m", c.EventRetention)
	}
	if set("snapshot-threshold", c.SnapshotThreshold == 0) && c.SnapshotThreshold < 1 {
		return fmt.Errorf("--snapshot-threshold %d: must be at least 1 (left out, it grows with the model)", c.SnapshotThreshold)
	}
	if set("snapshot-interval", c.SnapshotInterval == 0) && c.SnapshotInterval < minSnapshotInterval {
		return fmt.Errorf("--snapshot-interval %s: must be at least %s", c.SnapshotInterval, minSnapshotInterval)
	}
	if set("trailing-logs", c.TrailingLogs == 0) && c.TrailingLogs < 1 {
		return fmt.Errorf("--trailing-logs %d: must be at least 1", c.TrailingLogs)
	}
	if set("raft-segment-size", c.RaftSegmentSize == 0) && (c.RaftSegmentSize < minRaftSegmentSize || c.RaftSegmentSize > maxRaftSegmentSize) {
		return fmt.Errorf("--raft-segment-size %d: must be between %d and %d bytes", c.RaftSegmentSize, minRaftSegmentSize, maxRaftSegmentSize)
	}
	if set("events-file-max-size", c.EventsFileMaxSize == 0) && c.EventsFileMaxSize < 4096 {
		return fmt.Errorf("--events-file-max-size %d: must be at least 4096 bytes", c.EventsFileMaxSize)
	}
	if c.EnablePprof && c.MetricsAddr == "" {
		return errors.New("--enable-pprof: needs --metrics-addr (the profiles are served on the metrics listener)")
	}
	if c.EventsFileKeep < 0 {
		return fmt.Errorf("--events-file-keep %d: must be 0 (none kept) or more", c.EventsFileKeep)
	}
	if set("session-timeout", c.SessionTimeout == 0) && c.SessionTimeout < time.Second {
		return fmt.Errorf("--session-timeout %s: must be at least 1s", c.SessionTimeout)
	}
	return nil
}

// advertiseHost is the host others use to reach this node.
func (c *Config) advertiseHost() string {
	if c.Advertise != "" {
		return c.Advertise
	}
	host, _, _ := net.SplitHostPort(c.APIAddr)
	if host == "" || host == "0.0.0.0" || host == "::" {
		return "127.0.0.1"
	}
	return host
}

// clusterAdvertiseAddr is the Raft address other nodes dial: --cluster-advertise if set, else the advertise host
// with the port of --cluster-addr; "" when that port is 0 (the cluster package then advertises the port it bound).
func (c *Config) clusterAdvertiseAddr() string {
	if c.ClusterAdvertise != "" {
		return c.ClusterAdvertise
	}
	_, port, _ := net.SplitHostPort(c.ClusterAddr)
	if port == "0" {
		return ""
	}
	return net.JoinHostPort(c.advertiseHost(), port)
}

// samePort reports whether two listen addresses would claim the same port:
// the same fixed port on the same host, or on a host that is every address.
func samePort(a, b string) bool {
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil || pa != pb || pa == "0" || pa == "" {
		return false
	}
	wildcard := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ha == hb || wildcard(ha) || wildcard(hb)
}

// checkListenable binds addr and lets it go: a node about to join checks
// that its API port is free before it spends its single-use join token.
func checkListenable(addr string) error {
	if _, port, _ := net.SplitHostPort(addr); port == "0" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ln.Close()
}
