package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestRun_MaxTerminatorCreatesBelowOneIsRefused: a bound under 1 on the
// node's terminator creates is one line on stderr naming the flag and exit
// 2, before anything starts (no data dir is made).
func TestRun_MaxTerminatorCreatesBelowOneIsRefused(t *testing.T) {
	for _, v := range []string{"0", "-3"} {
		dir := t.TempDir() + "/data"
		var stderr bytes.Buffer
		code := execute(rootCmd(), []string{"run", "--data-dir", dir, "--max-terminator-creates", v}, &stderr)
		msg := stderr.String()
		if code != 2 || strings.Count(strings.TrimSpace(msg), "\n") != 0 ||
			!strings.Contains(msg, "--max-terminator-creates "+v+": must be at least 1") {
			t.Errorf("--max-terminator-creates %s: exit %d, stderr %q; want exit 2 and one line naming the flag", v, code, msg)
		}
	}
}
