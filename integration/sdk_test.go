package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
	sdkPolicies(mk)
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

// sdkPolicies gives the services of role #sdk to the identities of role
// #clients to dial and #hosts to bind, through every router.
func sdkPolicies(mk func(string, map[string]any) string) {
	mk("/service-policies", map[string]any{"name": "sdk-dial", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#clients"}, "serviceRoles": []string{"#sdk"}})
	mk("/service-policies", map[string]any{"name": "sdk-bind", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []string{"#hosts"}, "serviceRoles": []string{"#sdk"}})
	mk("/edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	mk("/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
}

// TestTraffic_SDKOneProcessHostsManyIdentities: one sdkecho process hosts
// three identities (two named by -i, one found by -identities DIR), each
// with its own context: through two real routers each identity makes a
// terminator on each router (sdk-golang binds through up to 3 routers,
// never twice through one), a client's dials are echoed, and the process
// gone takes all six terminators with it.
func TestTraffic_SDKOneProcessHostsManyIdentities(t *testing.T) {
	t.Parallel()
	bin := sdkEchoBinary(t)
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	dir := t.TempDir()
	routers := map[string]bool{}
	for _, name := range []string{"er1", "er2"} {
		routers[startZitiRouter(t, n, token, name).id] = true
	}
	mk := creator(t, n, token)
	mk("/services", map[string]any{"name": "sdk-many", "roleAttributes": []string{"sdk"}})
	sdkPolicies(mk)
	hostIDs := map[string]bool{}
	var files []string
	for i := range 2 {
		id, f := enrolledIdentity(t, n, token, dir, fmt.Sprintf("sdk-host-%d", i), "hosts")
		hostIDs[id], files = true, append(files, f)
	}
	more := filepath.Join(dir, "more")
	if err := os.Mkdir(more, 0o700); err != nil {
		t.Fatal(err)
	}
	id, _ := enrolledIdentity(t, n, token, more, "sdk-host-2", "hosts")
	hostIDs[id] = true
	_, clientFile := enrolledIdentity(t, n, token, dir, "sdk-client", "clients")

	host := startProgram(t, dir, "sdkecho host", bin, "host", "-i", strings.Join(files, ","), "-identities", more, "-s", "sdk-many")
	waitUntil(t, "a terminator per host identity per router", 60*time.Second, func() error {
		items, err := listAll(t, n, token, "/terminators")
		if err != nil {
			return err
		}
		seen := map[[2]string]bool{}
		for _, it := range items {
			h, r := jget(it, "hostId").(string), jget(it, "routerId").(string)
			if !hostIDs[h] || !routers[r] || seen[[2]string{h, r}] {
				return fmt.Errorf("terminator %s: host %s, router %s (twice: %v)", jget(it, "id"), h, r, seen[[2]string{h, r}])
			}
			seen[[2]string{h, r}] = true
		}
		if len(seen) != len(hostIDs)*len(routers) {
			return fmt.Errorf("%d of %d (host, router) terminators", len(seen), len(hostIDs)*len(routers))
		}
		if !strings.Contains(host.out.String(), "listening") {
			return fmt.Errorf("the host has not said it listens: %s", tail(host.out.String(), 5))
		}
		return nil
	})
	cmd := exec.Command(bin, "dial", "-i", clientFile, "-s", "sdk-many", "-bytes", "1000", "-sequential", "10", "-concurrent", "3")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("the SDK client's dials: %v\n%s", err, tail(string(out), 20))
	}
	host.stop()
	waitTerminators(t, "the host process gone, its terminators removed", n, token, "sdk-many", 0)
}
