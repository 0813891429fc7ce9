package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// What the docs have their users run: the README's quickstart and
// scripts/cluster.sh here, docs/openziti.md's walkthrough in
// openziti_doc_test.go.

// docBlock is the sh block of doc (a path from the repository root) between
// the markers <!-- name ...--> and <!-- /name -->.
func docBlock(t *testing.T, doc, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", doc))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- " + name + "[^>]*-->\\s*```sh\\n(.*?)```\\s*<!-- /" + name + " -->").FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s has no %s block", doc, name)
	}
	return string(m[1])
}

// docScript is the command that runs script with bash (-euo pipefail) in
// dir as a user would: the programs of bins (name: path) first on PATH, no
// admin password in the environment and a profile of its own.
func docScript(t *testing.T, dir, script string, bins map[string]string) *exec.Cmd {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range bins {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(envWithout("EDGECTL_ADMIN_PASSWORD"), "PATH="+bin+":"+os.Getenv("PATH"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"), "EDGECTL_PROFILE=")
	return cmd
}

// The README's first five minutes, run as written against a real node: the
// block between the quickstart markers, with the node's own URL, CA bundle
// and password in place of make run's, and `edgectl` being this build.
func TestREADMEQuickstartRunsAsWritten(t *testing.T) {
	t.Parallel()
	script := docBlock(t, "README.md", "quickstart")
	n := startNode(t, nodeOpts{})
	script = strings.ReplaceAll(script, "https://127.0.0.1:1280", "https://"+n.host())
	script = strings.ReplaceAll(script, "data/pki/ca-bundle.pem", filepath.Join(n.dataDir, "pki", "ca-bundle.pem"))
	script = strings.Replace(script, "-u admin", "-u admin -p '"+n.password+"'", 1) // the prompt, answered
	dir := t.TempDir()
	cmd := docScript(t, dir, script, map[string]string{"edgectl": binPath})
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README quickstart failed: %v\n%s", err, out)
	}
	// er1 is created but not enrolled in the quickstart: why and verify say so.
	for _, want := range []string{"dial: no", "er1 (never enrolled)", "has never been enrolled", "intercept.v1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the quickstart's output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"laptop.jwt", "web-server.jwt"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

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
