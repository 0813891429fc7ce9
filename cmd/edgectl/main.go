// Command edgectl runs and operates the controller. Flags and wiring only:
// the node itself lives in package controller.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"edgectl/controller"

	"github.com/hashicorp/go-hclog"
)

// Set at build time with -ldflags "-X main.version=...".
var (
	version   = "v0.1.0"
	revision  = "unknown"
	buildDate = "unknown"
)

const usage = `edgectl: the controller of a zero-trust overlay network

Usage:
  edgectl run [flags]                  run a node (a one-node cluster with no flags)
  edgectl cluster list|join-token|add|remove|transfer-leadership   membership, via the node on --data-dir
  edgectl restore --data-dir DIR FILE  a new one-node cluster from a snapshot file (GET /database/snapshots/{id})
  edgectl version                      print the version

Run 'edgectl run -h' for the flags of run.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = run(os.Args[2:])
	case "cluster":
		err = clusterCmd(os.Args[2:])
	case "restore":
		err = restoreCmd(os.Args[2:])
	case "version", "--version", "-v":
		fmt.Printf("edgectl %s (revision %s, built %s, %s)\n", version, revision, buildDate, runtime.Version())
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "edgectl: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "edgectl: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var cfg controller.Config
	var configFile, join, joinToken, logLevel string
	fs.StringVar(&cfg.DataDir, "data-dir", "./data", "data directory")
	fs.StringVar(&cfg.APIAddr, "api-addr", "127.0.0.1:1280", "HTTPS address of both APIs")
	fs.StringVar(&cfg.ClusterAddr, "cluster-addr", "127.0.0.1:6262", "mTLS address of Raft and forwarding")
	fs.StringVar(&cfg.Advertise, "advertise", "", "name or address other nodes and clients use (default: host of --api-addr)")
	fs.StringVar(&cfg.ClusterAdvertise, "cluster-advertise", "", "HOST:PORT other nodes dial for Raft, if not --advertise with the port of --cluster-addr (NAT, proxies)")
	fs.StringVar(&cfg.NodeID, "node-id", "", "node id (default: generated once, kept in the data dir)")
	fs.StringVar(&cfg.AdminUsername, "admin-username", "admin", "username of the default admin")
	fs.StringVar(&cfg.AdminPassword, "admin-password", "", "password of the default admin (or env EDGECTL_ADMIN_PASSWORD; default: generated, printed once)")
	fs.StringVar(&join, "join", "", "HOST:PORT of a node of the cluster to join")
	fs.StringVar(&joinToken, "join-token", "", "one-use token from 'edgectl cluster join-token'")
	fs.StringVar(&configFile, "config", "", "a JSON file with the same settings, keyed by flag name (flags win)")
	fs.DurationVar(&cfg.SessionTimeout, "session-timeout", 30*time.Minute, "API sessions end after this long without activity")
	fs.Uint64Var(&cfg.SnapshotThreshold, "snapshot-threshold", 8192, "log entries between automatic snapshots")
	fs.DurationVar(&cfg.SnapshotInterval, "snapshot-interval", 2*time.Minute, "how often to check whether to snapshot")
	fs.StringVar(&logLevel, "log-level", "info", "trace, debug, info, warn or error")
	fs.IntVar(&cfg.GCPercent, "gc-percent", controller.DefaultGCPercent, "the Go garbage collector's GOGC for this process (the GOGC environment variable wins)")
	fs.StringVar(&cfg.ReadConsistency, "read-consistency", "local", "consistency of reads without ?consistency=: local (this node's state, read-your-writes) or linearizable (caught up with the leader first; costs a quorum round per read)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "HOST:PORT to serve Prometheus metrics at /metrics over plain HTTP (default: off)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run takes no arguments, got %q", fs.Args())
	}
	if configFile != "" {
		if err := applyConfigFile(fs, configFile); err != nil {
			return err
		}
	}
	if cfg.AdminPassword == "" {
		cfg.AdminPassword = os.Getenv("EDGECTL_ADMIN_PASSWORD")
	}
	cfg.Join, cfg.JoinToken = join, joinToken
	cfg.Version, cfg.Revision, cfg.BuildDate = version, revision, buildDate
	log := hclog.New(&hclog.LoggerOptions{Name: "edgectl", Level: hclog.LevelFromString(logLevel), Output: os.Stderr})

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	node, err := controller.Start(ctx, cfg, log, os.Stdout)
	if err != nil {
		return err
	}
	fmt.Printf("edgectl is running: Client API %s/edge/client/v1, Management API %s/edge/management/v1\n", node.APIURL(), node.APIURL())
	fmt.Printf("Clients trust the CA bundle in %s/pki/ca-bundle.pem\n", node.DataDir())
	<-ctx.Done()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return node.Shutdown(sctx)
}

// applyConfigFile sets every flag named in the JSON file that was not given on the command line.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	var settings map[string]any
	if err := json.Unmarshal(raw, &settings); err != nil {
		return fmt.Errorf("--config %s: not a JSON object: %w", path, err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, v := range settings {
		if fs.Lookup(name) == nil || name == "config" {
			return fmt.Errorf("--config %s: unknown setting %q", path, name)
		}
		if given[name] {
			continue
		}
		if err := fs.Set(name, fmt.Sprint(v)); err != nil {
			return fmt.Errorf("--config %s: %s: %w", path, name, err)
		}
	}
	return nil
}
