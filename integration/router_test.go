package integration

import (
	"fmt"
	"net/url"
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
	r := startZitiRouter(t, n, token, "er1")
	// The CLI's table shows it online, with the hostname it reported.
	c := newCLI(t)
	if _, errOut, code := c.run(adminPassword+"\n", "login", "https://"+n.host(), "-u", adminUser, "--password-stdin", "--yes"); code != 0 {
		t.Fatalf("login: %s", errOut)
	}
	table := c.ok("list", "edge-routers")
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 2 || !strings.Contains(lines[0], "ONLINE") ||
		!strings.Contains(lines[1], "er1") || !strings.Contains(lines[1], "true") {
		t.Fatalf("edgectl list edge-routers:\n%s", table)
	}
	if out := c.ok("get", "edge-router", "er1", "-o", "json"); !strings.Contains(out, `"hostname": "127.0.0.1"`) || !strings.Contains(out, `"tls": "tls://`+r.edgeAddr+`"`) {
		t.Fatalf("the router's hostname and listeners:\n%s", out)
	}

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
	// The audit trail has each of them, the refusals once per reason.
	waitRouterEvents(t, n, token, map[string]int{"connected": 2, "disconnected": 2, "refused": 2})
}

// waitRouterEvents waits until the event log holds at least the given
// number of router events of each action, and no refusal twice for one
// reason.
func waitRouterEvents(t *testing.T, n *node, token string, want map[string]int) {
	t.Helper()
	waitUntil(t, "the router events", 10*time.Second, func() error {
		items, err := listAll(t, n, token, `/events?filter=`+url.QueryEscape(`namespace = "router"`))
		if err != nil {
			return err
		}
		got := map[string]int{}
		reasons := map[string]int{}
		for _, it := range items {
			got[jget(it, "action").(string)]++
			if jget(it, "action") == "refused" {
				reasons[fmt.Sprint(jget(it, "after", "reason"))]++
			}
		}
		for a, w := range want {
			if got[a] < w {
				return fmt.Errorf("%d %s events, want %d (all: %v)", got[a], a, w, got)
			}
		}
		for r, c := range reasons {
			if c > 1 {
				return fmt.Errorf("refusal %s recorded %d times within a minute", r, c)
			}
		}
		return nil
	})
}

type errString string

func (e errString) Error() string { return string(e) }

// TestRouter_APISessionsReachTheRouter: API session tokens are JWTs the
// router verifies itself with the keys of its data model, so none is sent to
// it; what a client sees of its edge routers is the router's real state.
func TestRouter_APISessionsReachTheRouter(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	r := startZitiRouter(t, n, token, "er-sync")
	waitInSync(t, n, token, r.id, nil)
	if ok, err := r.knowsAPISession(sessionID(t, n, token)); err != nil || ok {
		t.Fatalf("the router was sent a JWT API session (%v, %v)", ok, err)
	}

	// What a client sees of its edge routers: online, synced, its listener.
	st, m := do(t, "POST", n.mgmt("/edge-router-policies"), token, map[string]any{"name": "all", "semantic": "AnyOf",
		"identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	mustStatus(t, "edge router policy", st, m, 201)
	waitUntil(t, "the router in the client's edge routers", 5*time.Second, func() error {
		st, m, err := doErr("GET", n.client("/current-identity/edge-routers"), token, nil)
		if err != nil || st != 200 {
			return fmt.Errorf("%d %v", st, err)
		}
		list, _ := m["data"].([]any)
		if len(list) != 1 || jget(list[0], "isOnline") != true || jget(list[0], "syncStatus") != "SYNC_DONE" ||
			jget(list[0], "supportedProtocols", "tls") != "tls://"+r.edgeAddr {
			return fmt.Errorf("%s", js(list))
		}
		return nil
	})
}

// sessionID is the id of the API session of token.
func sessionID(t *testing.T, n *node, token string) string {
	t.Helper()
	st, m := do(t, "GET", n.mgmt("/current-api-session"), token, nil)
	mustStatus(t, "current API session", st, m, 200)
	return jget(m, "data", "id").(string)
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
	waitRouterEvents(t, n, token, map[string]int{"certificateExtended": 1})
	r.stop()
	waitOnline(t, n, token, r.id, false, 10*time.Second)
	r.start()
	waitOnline(t, n, token, r.id, true, 15*time.Second)

	// Deleted: its channel closes at once.
	st, m := do(t, "DELETE", n.mgmt("/edge-routers/"+r.id), token, nil)
	mustStatus(t, "delete the router", st, m, 200)
	waitUntil(t, "the deleted router's disconnection", 10*time.Second, func() error {
		items, err := listAll(t, n, token, `/events?filter=`+url.QueryEscape(`namespace = "router" and action = "disconnected"`))
		if err != nil {
			return err
		}
		for _, it := range items {
			if strings.Contains(fmt.Sprint(jget(it, "after", "reason")), "deleted") {
				return nil
			}
		}
		return fmt.Errorf("no disconnection for the deletion among %d", len(items))
	})
}

// TestRouter_DataModelFollowsTheModel: the router subscribes to the data
// model, gets the full state, then change sets as identities, services,
// posture checks, configs and service policies are made, changed and
// deleted; the router's own comparison with the node's state (the
// validate-data-model operation) finds no difference, and the entity
// counts are the model's.
func TestRouter_DataModelFollowsTheModel(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	r := newZitiRouter(t, n, token, "er-rdm")
	mk := creator(t, n, token)
	mk("/services", map[string]any{"name": "before", "roleAttributes": []string{"web"}})
	policy := mk("/service-policies", map[string]any{"name": "dial-web", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#staff"}, "serviceRoles": []string{"#web"}, "postureCheckRoles": []string{"#checks"}})
	r.start()
	waitOnline(t, n, token, r.id, true, 10*time.Second)
	waitInSync(t, n, token, r.id, nil)

	ident := mk("/identities", map[string]any{"name": "laptop", "type": "Device", "isAdmin": false, "roleAttributes": []string{"staff"}})
	cfg := mk("/configs", map[string]any{"name": "web-host", "configTypeId": "NH5p4FpGR", "data": map[string]any{"protocol": "tcp", "address": "localhost", "port": 8080}})
	svc := mk("/services", map[string]any{"name": "after", "roleAttributes": []string{"web"}, "configs": []string{cfg}})
	check := mk("/posture-checks", map[string]any{"name": "mac", "typeId": "MAC", "macAddresses": []string{"aabbccddeeff"}, "roleAttributes": []string{"checks"}})
	// Identities: the admin, laptop and the router's own (its tunneler is
	// enabled: an identity of type Router).
	waitInSync(t, n, token, r.id, map[string]uint32{"identities": 3, "services": 2, "posture-checks": 1, "configs": 1, "service-policies": 1})

	for _, c := range []struct{ method, path string }{
		{"PATCH", "/identities/" + ident}, {"PATCH", "/services/" + svc},
	} {
		st, m := do(t, c.method, n.mgmt(c.path), token, map[string]any{"roleAttributes": []string{"other"}})
		mustStatus(t, c.method+" "+c.path, st, m, 200)
	}
	st, m := do(t, "PATCH", n.mgmt("/service-policies/"+policy), token, map[string]any{"type": "Bind"})
	mustStatus(t, "patch policy", st, m, 200)
	st, m = do(t, "DELETE", n.mgmt("/posture-checks/"+check), token, nil)
	mustStatus(t, "delete posture check", st, m, 200)
	waitInSync(t, n, token, r.id, map[string]uint32{"identities": 3, "services": 2, "posture-checks": 0, "service-policies": 1})
	st, m = do(t, "DELETE", n.mgmt("/identities/"+ident), token, nil)
	mustStatus(t, "delete identity", st, m, 200)
	waitInSync(t, n, token, r.id, map[string]uint32{"identities": 2})
}

// waitInSync waits until router id, asked by n, reports no difference
// between its data model and n's, with the given entity counts.
func waitInSync(t *testing.T, n *node, token, id string, counts map[string]uint32) {
	t.Helper()
	waitUntil(t, "router "+id+"'s data model to match "+n.name+"'s", 10*time.Second, func() error {
		st, m, err := doErr("POST", n.mgmt("/edge-routers/"+id+"/validate-data-model"), token, nil)
		if err != nil {
			return err
		}
		if st != 200 {
			return fmt.Errorf("validate: %d %s", st, js(m))
		}
		if diffs, _ := jget(m, "data", "diffs").([]any); len(diffs) > 0 {
			return fmt.Errorf("%d differences: %s", len(diffs), js(diffs))
		}
		for k, want := range counts {
			if got := jint(t, m, "data", "actual", k); got != int(want) {
				return fmt.Errorf("%s: the router has %d, want %d", k, got, want)
			}
		}
		return nil
	})
}
