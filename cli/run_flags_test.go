package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runRefused runs `edgectl run` with args on a data dir that does not
// exist yet, in an empty working directory, and fails t unless it is
// refused the one way every flag of run refuses: exit 2, one line on stderr
// holding want (the flag and the reason), and nothing started (neither the
// data dir nor the default ./data is made). A node that starts anyway stops
// at once: its context has ended.
func runRefused(t *testing.T, want string, args ...string) {
	t.Helper()
	t.Chdir(t.TempDir())
	dir := filepath.Join(t.TempDir(), "data")
	root := rootCmd()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root.SetContext(ctx)
	var stderr bytes.Buffer
	code := execute(root, append([]string{"run", "--data-dir", dir}, args...), &stderr)
	msg := stderr.String()
	if code != 2 || strings.Count(strings.TrimSpace(msg), "\n") != 0 || !strings.Contains(msg, want) {
		t.Errorf("run %v: exit %d, stderr %q; want exit 2 and one line with %q", args, code, msg, want)
	}
	for _, d := range []string{dir, "data"} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("run %v: %s was made (%v): something started", args, d, err)
		}
	}
}

// TestRun_MaxTerminatorCreatesBelowOneIsRefused: a bound under 1 on the
// node's terminator creates is one line on stderr naming the flag and exit
// 2, before anything starts (no data dir is made).
func TestRun_MaxTerminatorCreatesBelowOneIsRefused(t *testing.T) {
	for _, v := range []string{"0", "-3"} {
		runRefused(t, "--max-terminator-creates "+v+": must be at least 1", "--max-terminator-creates", v)
	}
}

// TestRun_EveryBadFlagValueIsAMistakeInTheCommandLine: the values the node
// itself refuses as it starts (controller.Config.Validate) are refused as
// the command line's checks and cobra's are: exit 2, one line naming the
// flag and why, before anything starts. So are the settings a --config
// file gets wrong.
func TestRun_EveryBadFlagValueIsAMistakeInTheCommandLine(t *testing.T) {
	config := func(body string) string {
		p := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		want string
		args []string
	}{
		// The node's own refusals (controller.Config.Validate).
		{"--router-grace 500ms: must be at least 1s", []string{"--router-grace", "500ms"}},
		{"--router-grace -1s: must be at least 1s", []string{"--router-grace", "-1s"}},
		{"--smart-reroute-interval -1m0s: must be 0 (never) or more", []string{"--smart-reroute-interval", "-1m"}},
		{"--gc-percent 5: must be between 10 and 10000", []string{"--gc-percent", "5"}},
		{`--gc-headroom "lots": must be auto, 0 (off) or a size`, []string{"--gc-headroom", "lots"}},
		{`--gc-headroom "-5MiB": must be auto, 0 (off) or a size`, []string{"--gc-headroom", "-5MiB"}},
		{`--gc-headroom "2048GiB": must be at most 1TiB`, []string{"--gc-headroom", "2048GiB"}},
		{`--gc-headroom "": must be auto, 0 (off) or a size`, []string{"--gc-headroom", ""}},
		{`--api-addr "nowhere"`, []string{"--api-addr", "nowhere"}},
		{"--read-consistency \"eventual\": must be local or linearizable", []string{"--read-consistency", "eventual"}},
		{"--raft-segment-size 1: must be between", []string{"--raft-segment-size", "1"}},
		{"--events-file-keep -1: must be 0 (none kept) or more", []string{"--events-file-keep", "-1"}},
		{"--session-timeout 10ms: must be at least 1s", []string{"--session-timeout", "10ms"}},
		{`--admin-username "ab": must be 4 to 100 characters`, []string{"--admin-username", "ab"}},
		{"--join and --join-token go together", []string{"--join", "127.0.0.1:1"}},
		{"--enable-pprof: needs --metrics-addr", []string{"--enable-pprof"}},
		{"--data-plane-events-format \"zeek\": use edgectl or openziti", []string{"--data-plane-events-format", "zeek"}},
		{"--router-grace 200ms: must be at least 1s", []string{"--config", config(`{"router-grace": "200ms"}`)}},
		// A 0 (or "") given is checked as given, not taken for the default
		// the node fills in for a setting left out.
		{"--router-grace 0s: must be at least 1s", []string{"--router-grace", "0"}},
		{"--gc-percent 0: must be between 10 and 10000", []string{"--gc-percent", "0"}},
		{"--events-file-max-size 0: must be at least 4096 bytes", []string{"--events-file-max-size", "0"}},
		{"--raft-segment-size 0: must be between", []string{"--raft-segment-size", "0"}},
		{"--session-timeout 0s: must be at least 1s", []string{"--session-timeout", "0"}},
		{"--snapshot-threshold 0: must be at least 1", []string{"--snapshot-threshold", "0"}},
		{"--snapshot-interval 0s: must be at least 5ms", []string{"--snapshot-interval", "0"}},
		{"--snapshot-interval 1ms: must be at least 5ms", []string{"--snapshot-interval", "1ms"}},
		{"--trailing-logs 0: must be at least 1", []string{"--trailing-logs", "0"}},
		{"--max-terminator-creates 0: must be at least 1", []string{"--max-terminator-creates", "0"}},
		{"--event-retention-count 0: must be at least 1", []string{"--event-retention-count", "0"}},
		{"--event-retention 0s: must be at least 1m", []string{"--event-retention", "0"}},
		{"--data-plane-event-retention-count 0: must be at least 1", []string{"--data-plane-event-retention-count", "0"}},
		{"--data-plane-event-retention 0s: must be more than 0", []string{"--data-plane-event-retention", "0"}},
		{`--admin-username "": must be 4 to 100 characters`, []string{"--admin-username", ""}},
		{`--data-dir "": must name a directory`, []string{"--data-dir", ""}},
		{`--api-addr ""`, []string{"--api-addr", ""}},
		{`--read-consistency "": must be local or linearizable`, []string{"--read-consistency", ""}},
		{`--data-plane-events-format "": use edgectl or openziti`, []string{"--data-plane-events-format", ""}},
		{"--gc-percent 0: must be between 10 and 10000", []string{"--config", config(`{"gc-percent": 0}`)}},
		{"--router-grace 0s: must be at least 1s", []string{"--config", config(`{"router-grace": "0s"}`)}},
		// The command line's own checks, and cobra's, as they were.
		{`--log-level "bogus": use trace, debug, info, warn or error`, []string{"--log-level", "bogus"}},
		{`--log-level "off": use trace, debug, info, warn or error`, []string{"--config", config(`{"log-level": "off"}`)}},
		{"--event-retention 30s: must be at least 1m", []string{"--event-retention", "30s"}},
		{"--log-format \"xml\": use text or json", []string{"--log-format", "xml"}},
		{`invalid argument "soon" for "--router-grace"`, []string{"--router-grace", "soon"}},
		// A --config file's mistakes.
		{`unknown setting "router-graze"`, []string{"--config", config(`{"router-graze": "1m"}`)}},
		{"gc-percent: invalid argument", []string{"--config", config(`{"gc-percent": "lots"}`)}},
		{"not a JSON object", []string{"--config", config(`[1]`)}},
		{"--config: open", []string{"--config", filepath.Join(t.TempDir(), "missing.json")}},
	} {
		runRefused(t, c.want, c.args...)
	}
}

// TestRestore_BadAddressIsAMistakeInTheCommandLine: restore takes run's
// address flags and refuses a bad one as run does: exit 2, one line naming
// the flag, before the snapshot is read or the data dir made.
func TestRestore_BadAddressIsAMistakeInTheCommandLine(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{`--api-addr "nowhere"`, []string{"--api-addr", "nowhere"}},
		{`--cluster-addr "nowhere"`, []string{"--cluster-addr", "nowhere"}},
		{`--cluster-addr ""`, []string{"--cluster-addr", ""}},
		{`--cluster-advertise "host": must be HOST:PORT`, []string{"--cluster-advertise", "host"}},
		{"both name port 4000", []string{"--api-addr", "127.0.0.1:4000", "--cluster-addr", "127.0.0.1:4000"}},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		var stderr bytes.Buffer
		args := append([]string{"restore", filepath.Join(t.TempDir(), "snapshot.db"), "--data-dir", dir}, c.args...)
		code := execute(rootCmd(), args, &stderr)
		msg := stderr.String()
		if code != 2 || strings.Count(strings.TrimSpace(msg), "\n") != 0 || !strings.Contains(msg, c.want) {
			t.Errorf("restore %v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, msg, c.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("restore %v: the data dir was made (%v)", c.args, err)
		}
	}
}
