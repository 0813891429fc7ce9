package integration

import (
	"strings"
	"testing"
)

// TestZitiCLI_RouterIdentity: OpenZiti's `ziti edge` sees the identity of
// an edge router it creates with --tunneler-enabled, is refused its delete
// as OpenZiti's controller refuses it, and deletes it with its router.
func TestZitiCLI_RouterIdentity(t *testing.T) {
	t.Parallel()
	zitiBinary(t)
	n := startNode(t, nodeOpts{})
	ziti := zitiCLIStatus(t, n)
	must := func(args ...string) string {
		t.Helper()
		out, err := ziti(args...)
		if err != nil {
			t.Fatalf("ziti %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	must("edge", "create", "edge-router", "tun-cli", "--tunneler-enabled")
	if out := must("edge", "list", "identities", `name="tun-cli"`); !strings.Contains(out, "Router") {
		t.Fatalf("ziti edge list identities shows no Router identity:\n%s", out)
	}
	if out := must("edge", "list", "edge-router-policies", "isSystem=true"); !strings.Contains(out, "-system") {
		t.Fatalf("ziti edge list edge-router-policies shows no system policy:\n%s", out)
	}
	out, err := ziti("edge", "delete", "identity", "tun-cli")
	if err == nil || !strings.Contains(out, "ENTITY_CAN_NOT_BE_DELETED") {
		t.Fatalf("ziti edge delete identity of a router's identity: %v\n%s", err, out)
	}
	must("edge", "delete", "edge-router", "tun-cli")
	if out := must("edge", "list", "identities", `name="tun-cli"`); strings.Contains(out, "Router") {
		t.Fatalf("the router's identity outlived its router:\n%s", out)
	}
}
