package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"edgectl/bench/benchkit"
)

// TestDebianPackage: `make package` builds dist/edgectl_VERSION_amd64.deb
// with nfpm; dpkg-deb shows its control fields, the binary, the units, the
// default config (a conffile) and the maintainer scripts; `systemd-analyze
// verify` passes the units once it is installed; installed on this machine it
// makes the system user and its data dir, and the installed binary runs a
// node as that user with the packaged config, which the backup timer's
// command backs up through the admin socket; a purge takes it all away.
// It needs root and dpkg (CI has both); elsewhere it is skipped.
//
// It runs beside the other tests: on a machine whose build cache is cold it
// is mostly compiling (the package's static binary and nfpm: two minutes on
// two CPUs), time the suite would otherwise spend waiting for it. It
// touches nothing the others use (its node has ports of its own; make
// package writes bin/ and dist/, the others run the binary TestMain built).
func TestDebianPackage(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("installing a package needs root")
	}
	for _, tool := range []string{"dpkg", "dpkg-deb", "runuser", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	if out, err := exec.Command("dpkg", "-s", "edgectl").CombinedOutput(); err == nil && strings.Contains(string(out), "Status: install ok installed") {
		t.Skip("an edgectl package is installed on this machine already: not touching it")
	}
	run := func(timeout time.Duration, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(5*time.Minute, "make", "package", "VERSION=v0.0.99")
	deb, _ := filepath.Abs(filepath.Join("..", "dist", "edgectl_0.0.99_amd64.deb"))
	info := run(time.Minute, "dpkg-deb", "-I", deb)
	for _, want := range []string{"Package: edgectl", "Version: 0.0.99", "Architecture: amd64", "Depends: adduser", "postinst", "postrm", "conffiles"} {
		if !strings.Contains(info, want) {
			t.Fatalf("dpkg-deb -I lacks %q:\n%s", want, info)
		}
	}
	contents := run(time.Minute, "dpkg-deb", "-c", deb)
	for _, want := range []string{"./usr/bin/edgectl", "./lib/systemd/system/edgectl.service", "./lib/systemd/system/edgectl.socket", "./lib/systemd/system/edgectl-backup.service",
		"./lib/systemd/system/edgectl-backup.timer", "./etc/edgectl/config.json", "./usr/share/doc/edgectl/prometheus/edgectl-rules.yml"} {
		if !strings.Contains(contents, want) {
			t.Fatalf("dpkg-deb -c lacks %s:\n%s", want, contents)
		}
	}

	t.Cleanup(func() { _ = exec.Command("dpkg", "--purge", "edgectl").Run() })
	run(2*time.Minute, "dpkg", "-i", deb)
	if out := run(time.Minute, "id", "edgectl"); !strings.Contains(out, "(edgectl)") {
		t.Fatalf("id edgectl: %s", out)
	}
	if st, err := os.Stat("/var/lib/edgectl/backups"); err != nil || !st.IsDir() || st.Mode().Perm() != 0o750 {
		t.Fatalf("the data dir: %v %v", st, err)
	}
	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		out, err := exec.Command("systemd-analyze", "verify", "/lib/systemd/system/edgectl.service", "/lib/systemd/system/edgectl.socket",
			"/lib/systemd/system/edgectl-backup.service", "/lib/systemd/system/edgectl-backup.timer").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
		}
	}
	if out := run(time.Minute, "/usr/bin/edgectl", "version"); !strings.Contains(out, "v0.0.99") {
		t.Fatalf("the installed binary: %s", out)
	}

	// The packaged config, as the unit runs it (flags win: free ports here).
	api, clusterPort := freePort(t), freePort(t)
	// setpriv runs the node as the user itself (runuser would stay its parent).
	node := exec.Command("setpriv", "--reuid", "edgectl", "--regid", "edgectl", "--init-groups", "/usr/bin/edgectl", "run", "--config", "/etc/edgectl/config.json",
		"--api-addr", fmt.Sprintf("127.0.0.1:%d", api), "--cluster-addr", fmt.Sprintf("127.0.0.1:%d", clusterPort), "--admin-password", "Package-test-1")
	var logs benchkit.SyncBuffer
	node.Stdout, node.Stderr = &logs, &logs
	node.Dir = "/var/lib/edgectl"
	node.WaitDelay = 5 * time.Second
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Process.Kill(); _ = node.Wait() })
	backup := "/var/lib/edgectl/backups/edgectl-test.snap"
	waitUntil(t, "the backup timer's command backs the installed node up", 30*time.Second, func() error {
		out, err := exec.Command("runuser", "-u", "edgectl", "--", "/usr/bin/edgectl", "backup", "--data-dir", "/var/lib/edgectl/data", backup).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s (node: %s)", err, out, logs.String())
		}
		return nil
	})
	if st, err := os.Stat(backup); err != nil || st.Size() == 0 {
		t.Fatalf("the backup: %v", err)
	}
	_ = node.Process.Kill()
	_ = node.Wait()
	run(2*time.Minute, "dpkg", "--purge", "edgectl")
	if _, err := os.Stat("/var/lib/edgectl"); !os.IsNotExist(err) {
		t.Fatalf("the data dir after a purge: %v", err)
	}
	if err := exec.Command("id", "edgectl").Run(); err == nil {
		t.Fatal("the system user is still there after a purge")
	}
}
