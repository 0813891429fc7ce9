package integration

import (
	"testing"

	"edgectl/bench/benchkit"
)

// newTCPProxy puts a benchkit.TCPProxy in front of target (a node's
// cluster port, a router's link listener), closed when the test ends.
// Cutting a node's cluster proxy means it receives no cluster traffic at
// all (its own outgoing connections to the other nodes go through their
// proxies and keep working).
func newTCPProxy(t *testing.T, target string) *benchkit.TCPProxy {
	t.Helper()
	p, err := benchkit.NewTCPProxy(target)
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}
