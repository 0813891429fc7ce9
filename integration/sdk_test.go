package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// sdkEcho builds, once per run, integration/sdk: a program that hosts and
// dials a service with OpenZiti's Go SDK v1.7.0 (a module of its own, so
// the main module never requires OpenZiti's).
var sdkEcho struct {
	once sync.Once
	path string
	err  error
}

func sdkEchoBinary(t *testing.T) string {
	t.Helper()
	zitiBinary(t) // the router these tests need; skips (or fails in CI) without it
	sdkEcho.once.Do(func() {
		dir, err := os.MkdirTemp("", "edgectl-sdkecho-")
		if err != nil {
			sdkEcho.err = err
			return
		}
		sdkEcho.path = filepath.Join(dir, "sdkecho")
		goTool := os.Getenv("GO")
		if goTool == "" {
			goTool = "go"
		}
		build := exec.Command(goTool, "build", "-o", sdkEcho.path, ".")
		build.Dir = "sdk"
		build.Env = append(os.Environ(), "GOSUMDB=off", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			sdkEcho.err = fmt.Errorf("building integration/sdk: %v\n%s", err, out)
		}
	})
	if sdkEcho.err != nil {
		t.Fatal(sdkEcho.err)
	}
	return sdkEcho.path
}

// TestTraffic_SDKListenAndDial: a service hosted by an sdk-golang v1.7.0
// program (Listen) and dialed by another (Dial), through one real router
// controlled by edgectl: 1 MiB echoed byte for byte, then 20 sequential
// and 8 concurrent connections; the host gone removes its terminator, and
// a client without a Dial policy is refused.
func TestTraffic_SDKListenAndDial(t *testing.T) {
	t.Parallel()
	bin := sdkEchoBinary(t)
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	dir := t.TempDir()
	startZitiRouter(t, n, token, "er1")
	mk := creator(t, n, token)
	mk("/services", map[string]any{"name": "sdk-echo", "roleAttributes": []string{"sdk"}})
	mk("/service-policies", map[string]any{"name": "sdk-dial", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#clients"}, "serviceRoles": []string{"#sdk"}})
	mk("/service-policies", map[string]any{"name": "sdk-bind", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []string{"#hosts"}, "serviceRoles": []string{"#sdk"}})
	mk("/edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	mk("/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	_, hostFile := enrolledIdentity(t, n, token, dir, "sdk-host", "hosts")
	_, clientFile := enrolledIdentity(t, n, token, dir, "sdk-client", "clients")
	_, strangerFile := enrolledIdentity(t, n, token, dir, "sdk-stranger")

	host := startProgram(t, dir, "sdkecho host", bin, "host", "-i", hostFile, "-s", "sdk-echo")
	waitTerminators(t, "the SDK host's terminator", n, token, "sdk-echo", 1)

	dial := func(identity string) (string, error) {
		cmd := exec.Command(bin, "dial", "-i", identity, "-s", "sdk-echo")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := dial(clientFile); err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("the SDK client's dials: %v\n%s", err, tail(out, 20))
	}
	out, err := dial(strangerFile)
	if err == nil {
		t.Fatalf("an identity without a Dial policy dialed the service:\n%s", out)
	}
	t.Logf("without a Dial policy: %s", strings.TrimSpace(tail(out, 3)))

	host.stop()
	waitTerminators(t, "the host gone, its terminator removed", n, token, "sdk-echo", 0)
}
