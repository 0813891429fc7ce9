package integration

import (
	"strings"
	"testing"
	"time"
)

// TestRouter_EnrollsConnectsAndIsRefusedOnceDisabled: a real `ziti router`
// enrolls with the JWT edgectl made (its ctrls claim naming the node's
// control-channel address), connects, and is online within 10 s; disabling
// it closes its channel and refuses it from then on; enabling it lets it
// back; re-enrolling it closes the channel and refuses the old certificate.
func TestRouter_EnrollsConnectsAndIsRefusedOnceDisabled(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	r := newZitiRouter(t, n, token, "er1")
	r.start()
	waitOnline(t, n, token, r.id, true, 10*time.Second)

	st, m := do(t, "PATCH", n.mgmt("/edge-routers/"+r.id), token, map[string]any{"disabled": true})
	mustStatus(t, "disable", st, m, 200)
	waitOnline(t, n, token, r.id, false, 5*time.Second)
	waitUntil(t, "the node to log the disabled router's refusal", 20*time.Second, func() error {
		if !strings.Contains(n.stderr.String()+n.stdout.String(), "reason=disabled") {
			return errString("no refusal logged yet")
		}
		return nil
	})
	st, m = do(t, "PATCH", n.mgmt("/edge-routers/"+r.id), token, map[string]any{"disabled": false})
	mustStatus(t, "enable", st, m, 200)
	waitOnline(t, n, token, r.id, true, 30*time.Second)

	st, m = do(t, "POST", n.mgmt("/edge-routers/"+r.id+"/re-enroll"), token, nil)
	mustStatus(t, "re-enroll", st, m, 200)
	waitOnline(t, n, token, r.id, false, 5*time.Second)
	waitUntil(t, "the node to refuse the old certificate", 20*time.Second, func() error {
		if !strings.Contains(n.stderr.String()+n.stdout.String(), "reason=not_enrolled") {
			return errString("no refusal logged yet")
		}
		return nil
	})
}

type errString string

func (e errString) Error() string { return string(e) }
