package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's first five minutes, run as written against a real node: the
// block between the quickstart markers, with the node's own URL, CA bundle
// and password in place of make run's, and `edgectl` being this build.
func TestREADMEQuickstartRunsAsWritten(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- quickstart[^>]*-->\\s*```sh\\n(.*?)```\\s*<!-- /quickstart -->").FindSubmatch(raw)
	if m == nil {
		t.Fatal("README.md has no quickstart block")
	}
	n := startNode(t, nodeOpts{})
	script := string(m[1])
	script = strings.ReplaceAll(script, "https://127.0.0.1:1280", "https://"+n.host())
	script = strings.ReplaceAll(script, "data/pki/ca-bundle.pem", filepath.Join(n.dataDir, "pki", "ca-bundle.pem"))
	script = strings.Replace(script, "-u admin", "-u admin -p '"+n.password+"'", 1) // the prompt, answered
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binPath, filepath.Join(bin, "edgectl")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(envWithout("EDGECTL_ADMIN_PASSWORD"), "PATH="+bin+":"+os.Getenv("PATH"), "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"), "EDGECTL_PROFILE=")
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
