package integration

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// TestClusterScript: scripts/cluster.sh, as the README's users run it,
// starts three nodes and prints the `edgectl login` line; `stop 2` stops one
// node, `status` then answers through another and exits 1 showing it as
// unknown, `start 2` brings it back and `status` exits 0; `stop 1` (the
// node status used to ask) leaves status answering through node 2.
func TestClusterScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "cluster-data")
	apiBase, clusterBase := threeFreePorts(t), threeFreePorts(t)
	script := func(args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", append([]string{"../scripts/cluster.sh"}, args...)...)
		cmd.Env = append(envWithout("EDGECTL_ADMIN_PASSWORD"), "EDGECTL_BIN="+binPath, "EDGECTL_CLUSTER_DATA="+data,
			fmt.Sprintf("EDGECTL_API_PORT=%d", apiBase), fmt.Sprintf("EDGECTL_CLUSTER_PORT=%d", clusterBase))
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("cluster.sh %v: %v\n%s", args, err, out)
		}
		return string(out), code
	}
	t.Cleanup(func() { script("stop") })

	out, code := script("start")
	login := fmt.Sprintf("edgectl login https://127.0.0.1:%d -u admin --ca %s", apiBase, filepath.Join(data, "n1", "pki", "ca-bundle.pem"))
	if code != 0 || !strings.Contains(out, login) {
		t.Fatalf("start: exit %d, want the line %q:\n%s", code, login, out)
	}
	unknownRow := func(out string, port int) bool {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, fmt.Sprintf(":%d ", port)) {
				return strings.Contains(l, "false") && strings.Contains(l, "unknown")
			}
		}
		return false
	}
	if out, code = script("stop", "2"); code != 0 {
		t.Fatalf("stop 2: exit %d\n%s", code, out)
	}
	waitUntil(t, "status shows node 2 down", 10*time.Second, func() error {
		out, code := script("status")
		if code != 1 || !unknownRow(out, clusterBase+1) || !strings.Contains(out, "does not answer") {
			return fmt.Errorf("exit %d:\n%s", code, out)
		}
		return nil
	})
	if out, code = script("start", "2"); code != 0 {
		t.Fatalf("start 2: exit %d\n%s", code, out)
	}
	waitUntil(t, "status shows three members well", 15*time.Second, func() error {
		if out, code := script("status"); code != 0 {
			return fmt.Errorf("exit %d:\n%s", code, out)
		}
		return nil
	})
	if out, code = script("stop", "1"); code != 0 {
		t.Fatalf("stop 1: exit %d\n%s", code, out)
	}
	waitUntil(t, "status through node 2 shows node 1 down", 10*time.Second, func() error {
		out, code := script("status")
		if code != 1 || !unknownRow(out, clusterBase) {
			return fmt.Errorf("exit %d:\n%s", code, out)
		}
		return nil
	})
}

// threeFreePorts is the first of three consecutive free loopback ports (the
// script numbers its nodes' ports from one base).
func threeFreePorts(t *testing.T) int {
	t.Helper()
	p, err := benchkit.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
