package integration

import (
	"fmt"
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

// TestRouter_APISessionsReachTheRouter: the router gets the API sessions
// that exist when it connects (the full state), then a login and a logout
// made afterwards, each within 2 s, read from the router's own list.
func TestRouter_APISessionsReachTheRouter(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	r := newZitiRouter(t, n, token, "er-sync")
	before := sessionID(t, n, token)
	r.start()
	waitOnline(t, n, token, r.id, true, 10*time.Second)
	waitKnows(t, r, before, true, 10*time.Second)

	second := login(t, n, adminUser, adminPassword)
	secondID := sessionID(t, n, second)
	waitKnows(t, r, secondID, true, 2*time.Second)
	st, m := do(t, "DELETE", n.mgmt("/current-api-session"), second, nil)
	mustStatus(t, "logout", st, m, 200)
	waitKnows(t, r, secondID, false, 2*time.Second)
	if ok, err := r.knowsAPISession(before); err != nil || !ok {
		t.Fatalf("the first session left the router too: %v %v", ok, err)
	}
}

// sessionID is the id of the API session of token.
func sessionID(t *testing.T, n *node, token string) string {
	t.Helper()
	st, m := do(t, "GET", n.mgmt("/current-api-session"), token, nil)
	mustStatus(t, "current API session", st, m, 200)
	return jget(m, "data", "id").(string)
}

// waitKnows waits until router r knows API session id (want) or not.
func waitKnows(t *testing.T, r *zitiRouter, id string, want bool, timeout time.Duration) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("router %s to know API session %s: %v", r.name, id, want), timeout, func() error {
		ok, err := r.knowsAPISession(id)
		if err != nil {
			return err
		}
		if ok != want {
			return fmt.Errorf("knows it: %v", ok)
		}
		return nil
	})
}

// TestRouter_ExtendsItsCertificatesOverTheControlChannel: `ziti router run
// --extend` asks for new certificates on its control channel; the node
// signs them, the router proves it has the client certificate, and the
// router's fingerprint moves to it; the channel stays up, and the router
// connects with the new certificate after a restart.
func TestRouter_ExtendsItsCertificatesOverTheControlChannel(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	r := newZitiRouter(t, n, token, "er-extend")
	_, m := do(t, "GET", n.mgmt("/edge-routers/"+r.id), token, nil)
	before := jget(m, "data", "fingerprint")
	r.start("--extend")
	waitUntil(t, "the router to extend its certificates", 30*time.Second, func() error {
		if !r.logged("enrollment extension done") {
			return errString("not yet")
		}
		return nil
	})
	_, m = do(t, "GET", n.mgmt("/edge-routers/"+r.id), token, nil)
	after := jget(m, "data", "fingerprint")
	if after == before || after == nil {
		t.Fatalf("the fingerprint did not move: %v -> %v", before, after)
	}
	if !strings.Contains(r.out.String(), fmt.Sprint(after)) {
		t.Fatalf("the router's new certificate is not %v", after)
	}
	waitOnline(t, n, token, r.id, true, 5*time.Second)
	r.stop()
	waitOnline(t, n, token, r.id, false, 10*time.Second)
	r.start()
	waitOnline(t, n, token, r.id, true, 15*time.Second)
}
