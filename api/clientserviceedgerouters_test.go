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
}
