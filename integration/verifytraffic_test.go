package integration

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTraffic_ZitiOpsVerifyTraffic runs OpenZiti's `ziti ops verify traffic`
// (v1.7.2) against a node with one real router, as an operator would after
// setting up a network: with edge router and service edge router policies
// for everything (it makes neither), it logs in with a username and
// password, makes a service, a Bind and a Dial policy and two identities,
// enrolls them, hosts and dials the service with the SDK inside the CLI
// (waiting for the hosting terminator with the filter
// `service.name="vt.traffic"`), sends a line through the router and reads
// the answer, then deletes what it made.
func TestTraffic_ZitiOpsVerifyTraffic(t *testing.T) {
	t.Parallel()
	bin := zitiBinary(t)
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	startZitiRouter(t, n, token, "er1")
	mk := creator(t, n, token)
	mk("/edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	mk("/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "ops", "verify", "traffic", "--prefix", "vt",
		"--controller-url", n.host(), "-u", adminUser, "-p", adminPassword, "-y")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ziti ops verify traffic: %v\n%s", err, out)
	}
	for _, want := range []string{
		"successfully bound service: vt.traffic", "found terminator for service: vt.traffic",
		"successfully dialed service: vt.traffic", "traffic test successfully detected", "client complete",
	} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("ziti ops verify traffic did not log %q:\n%s", want, out)
		}
	}
	// What it made is gone.
	for _, path := range []string{"/identities", "/services", "/service-policies"} {
		items, err := listAll(t, n, token, path)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if name, _ := jget(it, "name").(string); strings.HasPrefix(name, "vt.") {
				t.Errorf("%s still lists %s after the command", path, name)
			}
		}
	}
	if t.Failed() {
		t.Log(string(out))
	}
}
