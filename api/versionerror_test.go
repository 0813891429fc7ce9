package api

import (
	"net/http"
	"strings"
	"testing"

	"edgectl/fsm"
)

// A command the gate refuses (a member cannot apply it yet) answers 503
// CLUSTER_UNAVAILABLE, with a message naming the member and its release.
func TestToAPIError_AVersionErrorIsClusterUnavailable(t *testing.T) {
	err := &fsm.VersionError{Command: fsm.CmdLoginFailedAudit, Need: fsm.VersionOf(fsm.CmdLoginFailedAudit), NodeID: "node-x",
		NodeVersion: "v0.0.9", NodeCommandVersion: 1}
	ae := toAPIError(err)
	if ae.status != http.StatusServiceUnavailable || ae.code != codeUnavailable {
		t.Fatalf("%d %s, want 503 %s", ae.status, ae.code, codeUnavailable)
	}
	for _, want := range []string{"node-x", "v0.0.9"} {
		if !strings.Contains(ae.message, want) {
			t.Errorf("message %q does not name %q", ae.message, want)
		}
	}
}
