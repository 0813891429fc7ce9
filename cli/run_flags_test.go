package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runRefused runs `edgectl run` with args on a data dir that does not
// exist yet, and fails t unless it is refused the one way every flag of run
// refuses: exit 2, one line on stderr holding want (the flag and the
// reason), and nothing started (the data dir is not made).
func runRefused(t *testing.T, want string, args ...string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	var stderr bytes.Buffer
	code := execute(rootCmd(), append([]string{"run", "--data-dir", dir}, args...), &stderr)
	msg := stderr.String()
	if code != 2 || strings.Count(strings.TrimSpace(msg), "\n") != 0 || !strings.Contains(msg, want) {
		t.Errorf("run %v: exit %d, stderr %q; want exit 2 and one line with %q", args, code, msg, want)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("run %v: the data dir was made (%v): something started", args, err)
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
		{`--api-addr "nowhere"`, []string{"--api-addr", "nowhere"}},
		{"--read-consistency \"eventual\": must be local or linearizable", []string{"--read-consistency", "eventual"}},
		{"--raft-segment-size 1: must be between", []string{"--raft-segment-size", "1"}},
		{"--events-file-keep -1: must be 0 or more", []string{"--events-file-keep", "-1"}},
		{"--session-timeout must be at least 1s", []string{"--session-timeout", "10ms"}},
		{"--admin-username must be 4 to 100 characters", []string{"--admin-username", "ab"}},
		{"--join and --join-token go together", []string{"--join", "127.0.0.1:1"}},
		{"--enable-pprof: needs --metrics-addr", []string{"--enable-pprof"}},
		{"--data-plane-events-format \"zeek\": use edgectl or openziti", []string{"--data-plane-events-format", "zeek"}},
		{"--router-grace 200ms: must be at least 1s", []string{"--config", config(`{"router-grace": "200ms"}`)}},
		// The command line's own checks, and cobra's, as they were.
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
