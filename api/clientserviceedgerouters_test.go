package api_test

import (
	"net/http"
	"testing"
)

// GET /services/{id}/edge-routers on the Client API answers as OpenZiti's
// controller does, an object {"edgeRouters": [...]} (ServiceEdgeRouters),
// not a list: sdk-golang reads it that way when it refreshes a session from
// its token (ListServiceEdgeRoutersEnvelope), and failed on a list ("cannot
// unmarshal array"), as TestDataPlaneChaos's SDK host logged. The routers
// are those the caller may use for the service.
func TestClientAPI_ServiceEdgeRoutersIsAnObjectOfEdgeRouters(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	aliceID, alice := ts.newClientIdentity("alice", "eng")
	web := ts.create("/services", map[string]any{"name": "web", "roleAttributes": []string{"web"}})
	ts.create("/service-policies", map[string]any{"name": "dial-web", "type": "Dial", "semantic": "AnyOf", "identityRoles": []string{"#eng"}, "serviceRoles": []string{"#web"}})
	ts.create("/edge-routers", map[string]any{"name": "er1", "roleAttributes": []string{"east"}})
	ts.create("/edge-routers", map[string]any{"name": "er2", "roleAttributes": []string{"west"}})
	ts.create("/edge-router-policies", map[string]any{"name": "alice-all", "semantic": "AnyOf", "identityRoles": []string{"@" + aliceID}, "edgeRouterRoles": []string{"#all"}})
	ts.create("/service-edge-router-policies", map[string]any{"name": "web-east", "semantic": "AnyOf", "serviceRoles": []string{"#web"}, "edgeRouterRoles": []string{"#east"}})
	st, out := alice.do(http.MethodGet, "/services/"+web+"/edge-routers", nil)
	if st != 200 {
		t.Fatalf("GET /services/{id}/edge-routers: %d %v", st, out)
	}
	data, ok := out["data"].(map[string]any)
	if !ok {
		t.Fatalf("data is %T, not an object: %v", out["data"], out)
	}
	ers, _ := data["edgeRouters"].([]any)
	if len(ers) != 1 {
		t.Fatalf("edgeRouters %v", data)
	}
	er := ers[0].(map[string]any)
	for _, f := range []string{"name", "isOnline", "syncStatus", "cost", "noTraversal", "disabled", "supportedProtocols"} {
		if _, ok := er[f]; !ok {
			t.Fatalf("an edge router without %s: %v", f, er)
		}
	}
	if er["name"] != "er1" {
		t.Fatalf("edge router %v", er)
	}

	// An SDK refreshes a session with its token: good while the session is,
	// 401 once it is not (and for a token that is none), so that the SDK
	// makes a new session.
	st, out = alice.do(http.MethodPost, "/sessions", map[string]any{"serviceId": web, "type": "Dial"})
	if st != 201 {
		t.Fatalf("POST /sessions: %d %v", st, out)
	}
	sid, _ := dig(out, "data", "id").(string)
	tok, _ := dig(out, "data", "token").(string)
	refresh := func(token string) (int, map[string]any) { // sdk-golang sends it as the session-token header
		st, out, _ := ts.send(req{method: http.MethodGet, path: clientPath("/services/" + web + "/edge-routers"), token: alice.token,
			header: map[string]string{"session-token": token}})
		return st, out
	}
	if st, out := refresh(tok); st != 200 {
		t.Fatalf("a refresh with a live session's token: %d %v", st, out)
	}
	if st, out := refresh("not-a-token"); st != 401 || dig(out, "error", "code") != "UNAUTHORIZED" {
		t.Fatalf("a refresh with garbage: %d %v", st, out)
	}
	if st, out := alice.do(http.MethodDelete, "/sessions/"+sid, nil); st != 200 {
		t.Fatalf("DELETE /sessions/%s: %d %v", sid, st, out)
	}
	if st, out := refresh(tok); st != 401 || dig(out, "error", "code") != "UNAUTHORIZED" {
		t.Fatalf("a refresh with an ended session's token: %d %v", st, out)
	}
}
