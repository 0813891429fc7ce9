package api_test

import (
	"net/http"
	"sort"
	"testing"
	"time"
)

// client is an identity logged in on the Client API.
type client struct {
	ts    *testServer
	token string
}

func clientPath(p string) string { return "/edge/client/v1" + p }

// newClientIdentity creates an identity with a password and logs it in on the Client API.
func (ts *testServer) newClientIdentity(name string, attrs ...string) (string, *client) {
	ts.t.Helper()
	if attrs == nil {
		attrs = []string{}
	}
	id := ts.create("/identities", map[string]any{"name": name, "type": "User", "isAdmin": false, "roleAttributes": attrs})
	ts.create("/authenticators", map[string]any{"identityId": id, "method": "updb", "username": name + "-user", "password": "Password-123!"})
	st, out := ts.doAs("", http.MethodPost, clientPath("/authenticate?method=password"), map[string]any{"username": name + "-user", "password": "Password-123!", "configTypes": []string{"all"}})
	if st != 200 {
		ts.t.Fatalf("client login %s: %d %v", name, st, out)
	}
	return id, &client{ts: ts, token: out["data"].(map[string]any)["token"].(string)}
}

func (c *client) do(method, path string, body any) (int, map[string]any) {
	c.ts.t.Helper()
	return c.ts.doAs(c.token, method, clientPath(path), body)
}

// services returns name → permissions of the caller's services.
func (c *client) services() map[string][]string {
	c.ts.t.Helper()
	st, out := c.do(http.MethodGet, "/services?limit=500", nil)
	if st != 200 {
		c.ts.t.Fatalf("services: %d %v", st, out)
	}
	got := map[string][]string{}
	for _, d := range out["data"].([]any) {
		m := d.(map[string]any)
		var perms []string
		for _, p := range m["permissions"].([]any) {
			perms = append(perms, p.(string))
		}
		sort.Strings(perms)
		got[m["name"].(string)] = perms
	}
	return got
}

func sameServices(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || len(v) != len(w) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}

func TestClientAPI_ServicesSessionsAndEdgeRoutersFollowPolicies(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	aliceID, alice := ts.newClientIdentity("alice", "eng")
	bobID, bob := ts.newClientIdentity("bob", "ops")
	carolID, carol := ts.newClientIdentity("carol")
	web := ts.create("/services", map[string]any{"name": "web", "roleAttributes": []string{"web"}})
	db := ts.create("/services", map[string]any{"name": "db", "roleAttributes": []string{"db"}})
	adm := ts.create("/services", map[string]any{"name": "admin-svc", "roleAttributes": []string{"admin"}})
	hidden := ts.create("/services", map[string]any{"name": "hidden"})
	ts.create("/service-policies", map[string]any{"name": "dial-web", "type": "Dial", "semantic": "AnyOf", "identityRoles": []string{"#eng", "#ops"}, "serviceRoles": []string{"#web"}})
	ts.create("/service-policies", map[string]any{"name": "bind-db", "type": "Bind", "semantic": "AllOf", "identityRoles": []string{"@" + bobID}, "serviceRoles": []string{"#db"}})
	ts.create("/service-policies", map[string]any{"name": "dial-admin", "type": "Dial", "semantic": "AllOf", "identityRoles": []string{"#eng", "#ops"}, "serviceRoles": []string{"#admin"}})
	er1 := ts.create("/edge-routers", map[string]any{"name": "er1", "roleAttributes": []string{"east"}})
	er2 := ts.create("/edge-routers", map[string]any{"name": "er2", "roleAttributes": []string{"west"}})
	er3 := ts.create("/edge-routers", map[string]any{"name": "er3", "roleAttributes": []string{"east", "west"}})
	ts.create("/edge-router-policies", map[string]any{"name": "alice-east", "semantic": "AllOf", "identityRoles": []string{"@" + aliceID}, "edgeRouterRoles": []string{"#east"}})
	ts.create("/edge-router-policies", map[string]any{"name": "bob-all", "semantic": "AllOf", "identityRoles": []string{"@" + bobID}, "edgeRouterRoles": []string{"#all"}})
	ts.create("/service-edge-router-policies", map[string]any{"name": "web-west", "semantic": "AllOf", "serviceRoles": []string{"#web"}, "edgeRouterRoles": []string{"#west"}})
	ts.create("/service-edge-router-policies", map[string]any{"name": "db-all", "semantic": "AllOf", "serviceRoles": []string{"#db"}, "edgeRouterRoles": []string{"#all"}})
	_, _, _ = er1, er2, adm

	want := map[string]map[string][]string{
		"alice": {"web": {"Dial"}},
		"bob":   {"web": {"Dial"}, "db": {"Bind"}},
		"carol": {},
	}
	clients := map[string]*client{"alice": alice, "bob": bob, "carol": carol}
	ids := map[string]string{"alice": aliceID, "bob": bobID, "carol": carolID}
	for name, c := range clients {
		if got := c.services(); !sameServices(got, want[name]) {
			t.Fatalf("%s sees %v, want %v", name, got, want[name])
		}
	}
	// Policy advice agrees with the client view for every identity and service.
	for name, id := range ids {
		for svcName, svcID := range map[string]string{"web": web, "db": db, "admin-svc": adm, "hidden": hidden} {
			adv := ts.get("/identities/" + id + "/policy-advice/" + svcID)
			perms := want[name][svcName]
			wantDial, wantBind := contains(perms, "Dial"), contains(perms, "Bind")
			if adv["isDialAllowed"] != wantDial || adv["isBindAllowed"] != wantBind {
				t.Fatalf("advice for %s on %s: %v, client view %v", name, svcName, adv, perms)
			}
		}
	}
	// A Dial session lists the edge routers both sides may use: alice {er1, er3} ∩ web {er2, er3}.
	st, out := alice.do(http.MethodPost, "/sessions", map[string]any{"serviceId": web, "type": "Dial"})
	if st != 201 {
		t.Fatalf("alice dial web: %d %v", st, out)
	}
	sess := out["data"].(map[string]any)
	ers := sess["edgeRouters"].([]any)
	if len(ers) != 1 || ers[0].(map[string]any)["name"] != "er3" || sess["token"] == "" {
		t.Fatalf("session edge routers %v", ers)
	}
	_ = er3
	// Not visible: 404, and the denial is recorded. Visible without the permission: refused and recorded.
	st, out = alice.do(http.MethodPost, "/sessions", map[string]any{"serviceId": db, "type": "Dial"})
	wantError(t, st, out, 404, "NOT_FOUND", "")
	if failed := ts.get2("/identities/" + aliceID + "/failed-service-requests"); len(failed) != 1 ||
		failed[0].(map[string]any)["serviceName"] != "db" || failed[0].(map[string]any)["reason"] != "permission" {
		t.Fatalf("alice's failed requests %v", failed)
	}
	st, out = alice.do(http.MethodPost, "/sessions", map[string]any{"serviceId": "no-such-service", "type": "Dial"})
	wantError(t, st, out, 404, "NOT_FOUND", "")
	if failed := ts.get2("/identities/" + aliceID + "/failed-service-requests"); len(failed) != 1 {
		t.Fatalf("a service that does not exist was recorded: %v", failed)
	}
	st, out = bob.do(http.MethodPost, "/sessions", map[string]any{"serviceId": db, "type": "Dial"})
	wantError(t, st, out, 403, "FORBIDDEN", "")
	failed := ts.get2("/identities/" + bobID + "/failed-service-requests")
	if len(failed) != 1 || failed[0].(map[string]any)["serviceName"] != "db" || failed[0].(map[string]any)["sessionType"] != "Dial" {
		t.Fatalf("failed requests %v", failed)
	}
	st, out = alice.do(http.MethodGet, "/services/"+hidden, nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")

	// An attribute change moves lastChangeAt and changes the list; it ends sessions that lost access.
	before := carol.lastChange()
	ts.do(http.MethodPatch, mgmt("/identities/"+carolID), map[string]any{"roleAttributes": []string{"ops"}})
	if after := carol.lastChange(); !after.After(before) {
		t.Fatalf("lastChangeAt did not move: %v → %v", before, after)
	}
	if got := carol.services(); !sameServices(got, map[string][]string{"web": {"Dial"}}) {
		t.Fatalf("carol after the change sees %v", got)
	}
	bobBefore := bob.lastChange()
	ts.do(http.MethodPatch, mgmt("/identities/"+carolID), map[string]any{"tags": map[string]any{"x": "y"}})
	if got := bob.lastChange(); !got.Equal(bobBefore) {
		t.Fatalf("bob's lastChangeAt moved on an unrelated change: %v → %v", bobBefore, got)
	}
	ts.do(http.MethodPatch, mgmt("/identities/"+aliceID), map[string]any{"roleAttributes": []string{}})
	st, _ = alice.do(http.MethodGet, "/sessions/"+sess["id"].(string), nil)
	if st != 404 {
		t.Fatalf("alice's session survived losing access: %d", st)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// lastChange reads the caller's service change marker.
func (c *client) lastChange() time.Time {
	c.ts.t.Helper()
	st, out := c.do(http.MethodGet, "/current-api-session/service-updates", nil)
	if st != 200 {
		c.ts.t.Fatalf("service-updates: %d %v", st, out)
	}
	t, err := time.Parse(time.RFC3339Nano, out["data"].(map[string]any)["lastChangeAt"].(string))
	if err != nil {
		c.ts.t.Fatal(err)
	}
	return t
}

// get2 fetches a Management list-shaped answer without pagination.
func (ts *testServer) get2(path string) []any {
	ts.t.Helper()
	st, out := ts.do(http.MethodGet, mgmt(path), nil)
	if st != 200 {
		ts.t.Fatalf("get %s: %d %v", path, st, out)
	}
	return out["data"].([]any)
}
