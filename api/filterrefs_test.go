package api_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// listIDs is the ids a list answers for filter, in its order.
func (ts *testServer) listIDs(path, filter string) []string {
	ts.t.Helper()
	data, _ := ts.list(path + "?" + url.Values{"filter": {filter}, "limit": {"-1"}}.Encode())
	ids := make([]string, 0, len(data))
	for _, d := range data {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	return ids
}

// TestLists_FilterThroughReferences: as OpenZiti's lists do, a filter reads
// the fields of the records a list's records refer to: a terminator's
// service and router (a router or an edge router), a session's API session
// and that one's identity, an API session's, an authenticator's and an
// enrollment's identity, an identity's auth policy, a config's type.
func TestLists_FilterThroughReferences(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	svcA := ts.create("/services", map[string]any{"name": "svc-a", "roleAttributes": []string{"a"}})
	svcB := ts.create("/services", map[string]any{"name": "svc-b"})
	r1 := ts.create("/routers", map[string]any{"name": "r1", "cost": 5})
	er1 := ts.create("/edge-routers", map[string]any{"name": "er1"})
	t1 := ts.create("/terminators", map[string]any{"service": svcA, "router": r1, "binding": "transport", "address": "tcp:a:1"})
	t2 := ts.create("/terminators", map[string]any{"service": svcB, "router": er1, "binding": "transport", "address": "tcp:b:1"})
	t3 := ts.create("/terminators", map[string]any{"service": svcA, "router": er1, "binding": "transport", "address": "tcp:a:2"})

	aliceID, alice := ts.newClientIdentity("alice", "eng")
	ts.create("/service-policies", map[string]any{"name": "dial", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []string{"#eng"}, "serviceRoles": []string{"@" + svcA, "@" + svcB}})
	var sessions []string
	for _, svc := range []string{svcA, svcB} {
		st, out := alice.do(http.MethodPost, "/sessions", map[string]any{"serviceId": svc, "type": "Dial"})
		if st != 201 {
			t.Fatalf("alice dials: %d %v", st, out)
		}
		sessions = append(sessions, out["data"].(map[string]any)["id"].(string))
	}
	bobID := ts.create("/identities", map[string]any{"name": "bob", "type": "Device", "isAdmin": false,
		"enrollment": map[string]any{"ott": true}})
	intercept := ts.create("/configs", map[string]any{"name": "web-intercept", "configTypeId": "g7cIWbcGg",
		"data": map[string]any{"protocols": []string{"tcp"}, "addresses": []string{"web.ziti"}, "portRanges": []map[string]any{{"low": 80, "high": 80}}}})

	for _, c := range []struct {
		path, filter string
		want         []string
	}{
		// ziti ops verify traffic's wait for its terminator.
		{"/terminators", `service.name="svc-a"`, []string{t1, t3}},
		{"/terminators", `router.name = "er1"`, []string{t2, t3}},
		{"/terminators", `router.name = "r1" and router.cost = 5`, []string{t1}},
		{"/terminators", `service.name = "svc-a" and router.id = "` + er1 + `"`, []string{t3}},
		{"/terminators", `anyOf(service.roleAttributes) = "a" and not (router.name contains "e")`, []string{t1}},
		{"/terminators", `service.tags.x = null and service.name in ["svc-b"]`, []string{t2}},
		{"/sessions", `service.name = "svc-b"`, []string{sessions[1]}},
		{"/sessions", `apiSession.identity.name = "alice"`, sessions},
		{"/api-sessions", `identity.name = "alice" and identity.id = "` + aliceID + `"`, nil}, // filled below
		{"/authenticators", `identity.name = "alice"`, nil},
		{"/enrollments", `identity.name = "bob" and identity.type.name = "Device"`, nil},
		{"/identities", `authPolicyId.name = "Default" and name = "alice"`, []string{aliceID}},
		{"/configs", `type.name = "intercept.v1"`, []string{intercept}},
	} {
		got := ts.listIDs(c.path, c.filter)
		if c.want == nil {
			// Records made on the way (an API session, an authenticator,
			// an enrollment): one, and the plain filter by id lists it.
			plain := strings.NewReplacer("identity.name = \"alice\"", "identityId = \""+aliceID+"\"",
				"identity.name = \"bob\"", "identityId = \""+bobID+"\"").Replace(c.filter)
			plain, _, _ = strings.Cut(plain, " and identity.")
			c.want = ts.listIDs(c.path, plain)
			if len(c.want) != 1 {
				t.Fatalf("%s?filter=%s: %d records, want 1", c.path, plain, len(c.want))
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s?filter=%s = %v, want %v", c.path, c.filter, got, c.want)
		}
	}
	// The Fabric API's terminators too; its routers read edge routers and
	// routers alike.
	st, out := ts.do(http.MethodGet, "/fabric/v1/terminators?"+url.Values{"filter": {`service.name = "svc-b"`}}.Encode(), nil)
	if data, _ := out["data"].([]any); st != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != t2 {
		t.Fatalf("fabric terminators by service name: %d %v", st, out)
	}
	st, out = ts.do(http.MethodGet, "/fabric/v1/routers?"+url.Values{"filter": {`cost >= 0`}}.Encode(), nil)
	if data, _ := out["data"].([]any); st != 200 || len(data) != 2 {
		t.Fatalf("fabric routers by cost: %d %v", st, out)
	}
}

// TestLists_FilterThroughAReferenceRefusesWhatItCannotRead: an unknown
// field of the referenced records, or a sort by one (OpenZiti: "no such
// sort field"), is a 400 naming the field.
func TestLists_FilterThroughAReferenceRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for _, c := range []struct{ path, filter, msg string }{
		{"/terminators", `service.nme = "x"`, `unknown field "service.nme": "service" refers to service records, which have no field "nme"`},
		{"/terminators", `router.Name = "x"`, `(did you mean "router.name"?)`},
		{"/terminators", `router.isTunnelerEnabled = true`, `unknown field "router.isTunnelerEnabled"`},
		{"/sessions", `apiSession.identity.nope = 1`, `unknown field "apiSession.identity.nope": "apiSession.identity" refers to identity records`},
		{"/terminators", `sort by service.name`, `cannot sort by "service.name"`},
		{"/services", `name.x = "y"`, `unknown field "name.x"`},
	} {
		st, out := ts.do(http.MethodGet, mgmt(c.path+"?"+url.Values{"filter": {c.filter}}.Encode()), nil)
		wantError(t, st, out, http.StatusBadRequest, "INVALID_FILTER", "filter")
		if reason := out["error"].(map[string]any)["cause"].(map[string]any)["reason"].(string); !strings.Contains(reason, c.msg) {
			t.Errorf("%s?filter=%s: %q, want %q", c.path, c.filter, reason, c.msg)
		}
	}
}
