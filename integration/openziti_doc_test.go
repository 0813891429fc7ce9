package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenZitiDoc_RouterWalkthrough runs docs/openziti.md's router block as
// written (the node's address and a free edge port in place of make run's,
// this build's edgectl and the cached ziti v1.7.2 on PATH) after a login,
// and waits for the router to be online with the listener it reported;
// then the traffic block, with an echo server as the application, and
// waits for bytes to come back through the proxy.
func TestOpenZitiDoc_RouterWalkthrough(t *testing.T) {
	t.Parallel()
	ziti := zitiBinary(t)
	routers, traffic := docBlock(t, "docs/openziti.md", "routers"), docBlock(t, "docs/openziti.md", "traffic")
	n := startNode(t, nodeOpts{})
	edge := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	script := strings.ReplaceAll(routers, "127.0.0.1:1280", n.host())
	script = strings.ReplaceAll(script, "127.0.0.1:3022", edge)
	script = "edgectl login https://" + n.host() + " -u admin -p '" + n.password + "' --ca " +
		filepath.Join(n.dataDir, "pki", "ca-bundle.pem") + " >/dev/null\n" + script
	dir := t.TempDir()
	cmd := docScript(t, dir, script, map[string]string{"edgectl": binPath, "ziti": ziti})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the router it starts stays in its group
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "er1", "router.log"))
			t.Logf("---- router log ----\n%s", tail(string(log), 40))
		}
	})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, out)
	}
	token := login(t, n, adminUser, n.password)
	waitUntil(t, "er1 online with its listener", 15*time.Second, func() error {
		items, err := listAll(t, n, token, "/edge-routers")
		if err != nil {
			return err
		}
		if len(items) != 1 {
			return fmt.Errorf("%d routers listed", len(items))
		}
		if jget(items[0], "isOnline") != true {
			return errString("er1 is not online yet")
		}
		if got := jget(items[0], "supportedProtocols", "tls"); got != "tls://"+edge {
			return fmt.Errorf("its listener: %v", got)
		}
		return nil
	})

	app := echoServer(t)
	proxy := freePort(t)
	traffic = strings.ReplaceAll(traffic, "127.0.0.1:1280", n.host())
	traffic = strings.ReplaceAll(traffic, `"port":7000`, fmt.Sprintf(`"port":%d`, app))
	traffic = strings.ReplaceAll(traffic, "echo:7001", fmt.Sprintf("echo:%d", proxy))
	tcmd := exec.Command("bash", "-euo", "pipefail", "-c", traffic)
	tcmd.Dir, tcmd.Env = dir, cmd.Env
	tcmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t.Cleanup(func() {
		if tcmd.Process != nil {
			_ = syscall.Kill(-tcmd.Process.Pid, syscall.SIGKILL)
		}
	})
	if out, err := tcmd.CombinedOutput(); err != nil {
		t.Fatalf("the traffic walkthrough failed: %v\n%s", err, out)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", proxy)
	waitUntil(t, "bytes through the router as the walkthrough says", 30*time.Second, func() error {
		return echoOnce(addr, []byte("hello through edgectl"))
	})
}
