package api_test

import (
	"net/http"
	"strings"
	"testing"

	"edgectl/api"
)

// TestRelatedLists_AnUnknownRecordIsNotFoundAKnownOneAnswers walks every GET
// the node serves below a record's path (/{kind}/{id}/{relation}..., such as
// /services/{id}/configs) on every API, as the route table registered them,
// so a new one is covered without a change here: for the id "undefined"
// (what ZAC asks for while a create form makes a record) the answer is 404
// NOT_FOUND, the contract's answer for an id that does not exist
// (conventions §3), and for a record that exists it is 200.
func TestRelatedLists_AnUnknownRecordIsNotFoundAKnownOneAnswers(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	known := relatedListRecords(t, ts)
	// The other parameters of such paths, and the records they name.
	params := map[string]string{"serviceId": "services"}
	checked := 0
	for _, r := range ts.api.ServedRoutes() {
		prefix, segs := splitServed(r.Path)
		if r.Method != http.MethodGet || len(segs) < 3 || segs[1] != ":id" {
			continue
		}
		id, ok := known[segs[0]]
		if !ok {
			t.Errorf("GET %s: no record of /%s to ask for: add one to relatedListRecords", r.Path, segs[0])
			continue
		}
		rest := make([]string, 0, len(segs)-2)
		for _, s := range segs[2:] {
			if p, ok := strings.CutPrefix(s, ":"); ok {
				if s = known[params[p]]; s == "" {
					t.Errorf("GET %s: no record for the parameter %s: add it to params", r.Path, p)
				}
			}
			rest = append(rest, s)
		}
		tail := "/" + strings.Join(rest, "/")
		unknown := prefix + "/" + segs[0] + "/undefined" + tail
		st, out := ts.do(http.MethodGet, unknown, nil)
		if e, _ := out["error"].(map[string]any); st != http.StatusNotFound || e == nil || e["code"] != "NOT_FOUND" {
			t.Errorf("GET %s: %d %v, want 404 NOT_FOUND", unknown, st, out)
		}
		existing := prefix + "/" + segs[0] + "/" + id + tail
		if st, out := ts.do(http.MethodGet, existing, nil); st != http.StatusOK {
			t.Errorf("GET %s (%s): %d %v, want 200", existing, r.Path, st, out)
		}
		checked++
	}
	// The walk found them: routes.md alone has more than 30.
	if checked < 30 {
		t.Fatalf("checked only %d routes below a record's path", checked)
	}
}

// splitServed splits a served path into its API's prefix and the segments
// of the route's path.
func splitServed(path string) (string, []string) {
	for _, prefix := range []string{api.ClientPrefix, api.ManagementPrefix, api.FabricPrefix} {
		if rest, ok := strings.CutPrefix(path, prefix+"/"); ok {
			return prefix, strings.Split(rest, "/")
		}
	}
	return "", nil
}

// relatedListRecords makes one record of every kind that has paths below
// its records, and returns their ids by the kind's path segment. The admin
// may dial the service, so the Client API shows it too.
func relatedListRecords(t *testing.T, ts *testServer) map[string]string {
	t.Helper()
	ids := map[string]string{"specs": "edge-management"}
	ids["identities"] = ts.create("/identities", map[string]any{"name": "rel-identity", "type": "User", "isAdmin": false})
	ids["services"] = ts.create("/services", map[string]any{"name": "rel-service"})
	ids["service-policies"] = ts.create("/service-policies", map[string]any{"name": "rel-dial", "type": "Dial",
		"semantic": "AnyOf", "identityRoles": []string{"#all"}, "serviceRoles": []string{"@" + ids["services"]}})
	ids["edge-routers"] = ts.create("/edge-routers", map[string]any{"name": "rel-router"})
	ids["edge-router-policies"] = ts.create("/edge-router-policies", map[string]any{"name": "rel-erp",
		"semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	ids["service-edge-router-policies"] = ts.create("/service-edge-router-policies", map[string]any{"name": "rel-serp",
		"semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}})
	ids["config-types"] = ts.create("/config-types", map[string]any{"name": "rel-type"})
	ids["configs"] = ts.create("/configs", map[string]any{"name": "rel-config", "configTypeId": ids["config-types"], "data": map[string]any{"v": 1}})
	ids["cas"] = ts.create("/cas", caBody("rel-ca", newAuthnCA(t, "Related Lists Root").pem))
	return ids
}
