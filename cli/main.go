// Package cli is edgectl's command line: `run` starts a node; the other
// commands are an admin CLI over the Management API (docs/cli.md). The
// binary's main package only calls Main.
//
// The CLI is built on spf13/cobra: subcommands at any depth, --help that
// exits 0 everywhere, GNU-style --flags, and shell completion, which a
// hand-rolled parser would each have to reimplement.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"edgectl/cluster"
	"edgectl/controller"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Build says which build this is (set by the binary's main package from
// its -ldflags).
type Build struct{ Version, Revision, Date string }

// The build this process is, for `version`, the node's records and its API.
var (
	version   = "dev"
	revision  = "unknown"
	buildDate = "unknown"
)

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Main runs the command line of os.Args and returns the exit status: 0, 1
// for a failure, 2 for a mistake in the command line, or what a command
// chose (verify, cluster status).
func Main(b Build) int {
	version, revision, buildDate = b.Version, b.Revision, b.Date
	return execute(rootCmd(), os.Args[1:], os.Stderr)
}

// execute runs the command line args on root and returns the exit status,
// writing an error as one line to stderr.
func execute(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "edgectl: %s\n", oneLine(err.Error()))
	// Besides usageError, cobra's own: an unknown command or flag, and the
	// hidden __complete without its arguments.
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.Contains(err.Error(), "requires at least") {
		return 2
	}
	return 1
}

// oneLine keeps an error message on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "edgectl",
		Short:         "The controller of a zero-trust overlay network, and its admin CLI",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().String("profile", "", "login profile (default: $EDGECTL_PROFILE, else \"default\")")
	root.AddCommand(runCmd(), clusterCmd(), restoreCmd(), versionCmd(),
		loginCmd(), logoutCmd(),
		listCmd(), getCmd(), createCmd(), updateCmd(), deleteCmd(),
		whyCmd(), verifyCmd(), exportCmd(), applyCmd(), backupCmd(), adminCmd(), sessionKeysCmd(), eventsCmd(), resetCmd())
	return root
}

func versionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			v := map[string]string{"version": version, "revision": revision, "buildDate": buildDate, "go": runtime.Version()}
			if output == "json" {
				return printJSON(v)
			}
			if output != "" && output != "text" {
				return usagef("-o %q: use text or json", output)
			}
			fmt.Printf("edgectl %s (revision %s, built %s, %s)\n", version, revision, buildDate, runtime.Version())
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

func runCmd() *cobra.Command {
	var cfg controller.Config
	var configFile, logLevel, logFormat string
	applyAhead := true
	dataPlaneEvents := true
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a node (a one-node cluster with no flags)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configFile != "" {
				if err := applyConfigFile(cmd.Flags(), configFile); err != nil {
					return err
				}
			}
			if cfg.AdminPassword == "" {
				cfg.AdminPassword = os.Getenv("EDGECTL_ADMIN_PASSWORD")
			}
			if logFormat != "text" && logFormat != "json" {
				return usagef("--log-format %q: use text or json", logFormat)
			}
			level, ok := logLevels[strings.ToLower(logLevel)]
			if !ok {
				return usagef("--log-level %q: use trace, debug, info, warn or error", logLevel)
			}
			cfg.NoApplyAhead = !applyAhead
			cfg.NoDataPlaneEvents = !dataPlaneEvents
			cfg.Version, cfg.Revision, cfg.BuildDate = version, revision, buildDate
			// The settings the node refuses as it starts (controller.Start)
			// are refused here, each a flag's bad value: a mistake in the
			// command line (exit 2). A value given (on the command line or
			// in --config) is checked as given: a 0 given is not the default.
			if err := cfg.ValidateGiven(cmd.Flags().Changed); err != nil {
				return usageError{err}
			}
			ln, err := activatedListener()
			if err != nil {
				return err
			}
			cfg.APIListener = ln
			log := hclog.New(&hclog.LoggerOptions{Name: "edgectl", Level: level, Output: os.Stderr,
				JSONFormat: logFormat == "json"})
			return runNode(cmd.Context(), cfg, log)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.DataDir, "data-dir", "./data", "data directory")
	addressFlags(fs, &cfg)
	fs.StringVar(&cfg.NodeID, "node-id", "", "node id (default: generated once, kept in the data dir)")
	fs.StringVar(&cfg.AdminUsername, "admin-username", "admin", "username of the default admin")
	fs.StringVar(&cfg.AdminPassword, "admin-password", "", "password of the default admin (or env EDGECTL_ADMIN_PASSWORD; default: generated, printed once)")
	fs.StringVar(&cfg.Join, "join", "", "HOST:PORT of a node of the cluster to join")
	fs.StringVar(&cfg.JoinToken, "join-token", "", "one-use token from 'edgectl cluster join-token'")
	fs.StringVar(&configFile, "config", "", "a JSON file with the same settings, keyed by flag name (flags win)")
	fs.StringSliceVar(&cfg.CORSOrigins, "cors-origins", nil, "origins (https://host[:port], comma-separated or repeated) whose pages may call the APIs from a browser, such as a console served elsewhere; none by default")
	fs.DurationVar(&cfg.SessionTimeout, "session-timeout", 30*time.Minute, "API sessions end after this long without activity")
	fs.Uint64Var(&cfg.SnapshotThreshold, "snapshot-threshold", 0, "log entries between automatic snapshots; given, it is fixed; by default 4096, raised to a quarter of the model's records as the model grows")
	fs.Uint64Var(&cfg.TrailingLogs, "trailing-logs", 10240, "log entries kept after a snapshot, for followers that fall behind (at least; the log is freed by whole --raft-segment-size segments; a follower behind what is left gets the snapshot)")
	fs.Int64Var(&cfg.RaftSegmentSize, "raft-segment-size", 64<<20, "size in bytes of the Raft log's segment files; the log is freed by whole segments after a snapshot")
	fs.DurationVar(&cfg.SnapshotInterval, "snapshot-interval", cluster.DefaultSnapshotInterval, "how often to check whether the log has passed --snapshot-threshold (a restarting node replays the log since the last snapshot)")
	fs.DurationVar(&cfg.SmartRerouteInterval, "smart-reroute-interval", time.Minute, "how often to move circuits to a path that became cheaper by at least 15 (a few at a time, as OpenZiti's controller does); 0: never")
	fs.DurationVar(&cfg.RouterGrace, "router-grace", 30*time.Second, "how long a router whose control channel to this node closed may stay away before the circuits it is an end of end: until then its circuits and links are kept (it still routes, and dials this node again), and reconciled when it returns")
	fs.IntVar(&cfg.MaxTerminatorCreates, "max-terminator-creates", 1000, "terminator creates from routers queued or in flight on this node at once; one more is answered busy and the router retries it later (a storm of hosts binding at once is spread out, none is lost)")
	fs.BoolVar(&applyAhead, "apply-ahead", true, "a follower applies a write it forwarded as soon as the leader says it committed, without waiting for raft to tell it (false: it waits)")
	fs.StringVar(&logLevel, "log-level", "info", "trace, debug, info, warn or error")
	fs.StringVar(&logFormat, "log-format", "text", "text or json")
	fs.IntVar(&cfg.GCPercent, "gc-percent", controller.DefaultGCPercent, "the Go garbage collector's GOGC for this process (the GOGC environment variable wins)")
	fs.StringVar(&cfg.GCHeadroom, "gc-headroom", "0", "how much the heap may grow between garbage collections at least, while the model is small: 0 (off: --gc-percent alone), auto (the smaller of 512MiB and a sixteenth of the machine's memory) or a size such as 256MiB; fewer collections for a steady write load on a small model, slower restarts (the GOGC environment variable wins)")
	fs.StringVar(&cfg.ReadConsistency, "read-consistency", "local", "consistency of reads without ?consistency=: local (this node's state, read-your-writes) or linearizable (caught up with the leader first; costs a quorum round per read)")
	fs.Int64Var(&cfg.EventRetentionCount, "event-retention-count", 0, "events the cluster keeps (replicated: given, it sets the cluster's retention; a new cluster keeps 100000)")
	fs.DurationVar(&cfg.EventRetention, "event-retention", 0, "how long the cluster keeps events (replicated: given, it sets the cluster's retention; a new cluster keeps 720h)")
	fs.StringVar(&cfg.EventsFile, "events-file", "", "append every event to this JSON-lines file (per node; rotated by size)")
	fs.Int64Var(&cfg.EventsFileMaxSize, "events-file-max-size", 100<<20, "size in bytes at which --events-file is rotated")
	fs.IntVar(&cfg.EventsFileKeep, "events-file-keep", 5, "rotated --events-file files kept (FILE.1 newest; 0: none, the file starts over)")
	fs.BoolVar(&dataPlaneEvents, "data-plane-events", true, "keep this node's data-plane events (circuits, terminators, routers, links, usage) in memory and serve them (false: off)")
	fs.IntVar(&cfg.DataPlaneEventsCount, "data-plane-event-retention-count", 10000, "data-plane events this node keeps in memory (the newest)")
	fs.DurationVar(&cfg.DataPlaneEventsMaxAge, "data-plane-event-retention", time.Hour, "how long this node keeps its data-plane events in memory")
	fs.StringVar(&cfg.DataPlaneEventsFile, "data-plane-events-file", "", "append this node's data-plane events to this JSON-lines file (rotated as --events-file)")
	fs.StringVar(&cfg.DataPlaneEventsFormat, "data-plane-events-format", "edgectl", "format of --data-plane-events-file: edgectl or openziti (OpenZiti's circuit, usage, link, router and terminator events)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "HOST:PORT to serve Prometheus metrics at /metrics over plain HTTP (default: off)")
	fs.BoolVar(&cfg.EnablePprof, "enable-pprof", false, "also serve Go's CPU, heap, block and mutex profiles at /debug/pprof/ on --metrics-addr")
	return cmd
}

// logLevels are the levels --log-level takes, in any case (hclog would
// take any other word for info).
var logLevels = map[string]hclog.Level{
	"trace": hclog.Trace, "debug": hclog.Debug, "info": hclog.Info, "warn": hclog.Warn, "error": hclog.Error,
}

// addressFlags are the addresses of a node, the same for run and for
// restore (which prints the run command that resumes the restored node).
func addressFlags(fs *pflag.FlagSet, cfg *controller.Config) {
	fs.StringVar(&cfg.APIAddr, "api-addr", "127.0.0.1:1280", "HTTPS address of both APIs (its host goes into the API certificate)")
	fs.StringVar(&cfg.ClusterAddr, "cluster-addr", "127.0.0.1:6262", "mTLS address of Raft and forwarding")
	fs.StringVar(&cfg.Advertise, "advertise", "", "name or address other nodes and clients use (default: host of --api-addr)")
	fs.StringVar(&cfg.ClusterAdvertise, "cluster-advertise", "", "HOST:PORT other nodes dial for Raft, if not --advertise with the port of --cluster-addr (NAT, proxies)")
}

// runNode starts the node and serves until SIGINT or SIGTERM, or until ctx
// ends (a test's).
func runNode(ctx context.Context, cfg controller.Config, log hclog.Logger) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var once bytes.Buffer // what the first start has to say once: the generated admin password
	node, err := controller.Start(ctx, cfg, log, &once)
	if err != nil {
		return err
	}
	// One closing banner, written at once, after the node's startup log.
	bundle := filepath.Join(node.DataDir(), "pki", "ca-bundle.pem")
	var b strings.Builder
	fmt.Fprintf(&b, "\nedgectl is running: Client API %s/edge/client/v1, Management API %s/edge/management/v1\n", node.APIURL(), node.APIURL())
	fmt.Fprintf(&b, "Clients trust the CA bundle in %s\n", bundle)
	if once.Len() == 0 {
		b.WriteString("\n")
	}
	b.Write(once.Bytes())
	fmt.Fprintf(&b, "Log in with:\n\n    edgectl login %s -u %s --ca %s\n\n", node.APIURL(), cfg.AdminUsername, shellQuote(bundle))
	_, _ = os.Stdout.WriteString(b.String())
	<-ctx.Done()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return node.Shutdown(sctx)
}

// applyConfigFile sets every flag named in the JSON file that was not
// given on the command line. What it refuses is a mistake in the command
// line, as a flag's bad value is (exit 2).
func applyConfigFile(fs *pflag.FlagSet, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return usagef("--config: %w", err)
	}
	var settings map[string]any
	if err := json.Unmarshal(raw, &settings); err != nil {
		return usagef("--config %s: not a JSON object: %w", path, err)
	}
	for name, v := range settings {
		f := fs.Lookup(name)
		if f == nil || name == "config" {
			return usagef("--config %s: unknown setting %q", path, name)
		}
		if f.Changed {
			continue
		}
		values := []any{v}
		if list, ok := v.([]any); ok { // a list flag: each element, as if repeated
			values = list
		}
		for _, e := range values {
			if err := fs.Set(name, fmt.Sprint(e)); err != nil {
				return usagef("--config %s: %s: %w", path, name, err)
			}
		}
	}
	return nil
}
