package api_test

import (
	"net/http"
	"testing"
)

func TestPosture_ResponsesGateSessionsAndFailuresAreRecorded(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	aliceID, alice := ts.newClientIdentity("alice", "eng")
	svc := ts.create("/services", map[string]any{"name": "web", "roleAttributes": []string{"web"}})
	check := ts.create("/posture-checks", map[string]any{"name": "win", "typeId": "OS", "roleAttributes": []string{"os"},
		"operatingSystems": []any{map[string]any{"type": "WINDOWS", "versions": []string{">=10.0.19041"}}}})
	pol := ts.create("/service-policies", map[string]any{"name": "dial-web", "type": "Dial", "semantic": "AllOf",
		"identityRoles": []string{"#eng"}, "serviceRoles": []string{"#web"}, "postureCheckRoles": []string{"#os"}})

	// No posture reported: the service is listed, its policy is not passing, a session is refused and recorded.
	st, out := alice.do(http.MethodGet, "/services/"+svc, nil)
	if st != 200 {
		t.Fatalf("get service: %d %v", st, out)
	}
	pq := out["data"].(map[string]any)["postureQueries"].([]any)
	if len(pq) != 1 || pq[0].(map[string]any)["isPassing"] != false || pq[0].(map[string]any)["policyId"] != pol {
		t.Fatalf("posture queries %v", pq)
	}
	st, out = alice.do(http.MethodPost, "/sessions", map[string]any{"serviceId": svc})
	// OpenZiti's answer: 409 INVALID_POSTURE naming the failed policy and
	// its failed checks, so a client gives up at once.
	wantError(t, st, out, 409, "INVALID_POSTURE", "")
	cause, _ := out["error"].(map[string]any)["cause"].(map[string]any)
	byPolicy, _ := cause["data"].(map[string]any)
	failedChecks, _ := byPolicy[pol].([]any)
	if msg, _ := cause["message"].(string); len(byPolicy) != 1 || len(failedChecks) != 1 || msg != "Failed to pass posture checks for service policies: ["+pol+"]" {
		t.Fatalf("cause %v", cause)
	}
	if fc := failedChecks[0].(map[string]any); fc["id"] != check || fc["typeId"] != "OS" || fc["isPassing"] != false {
		t.Fatalf("failed check %v", fc)
	}
	failed := ts.get2("/identities/" + aliceID + "/failed-service-requests")
	if len(failed) != 1 {
		t.Fatalf("failed requests %v", failed)
	}
	pf := failed[0].(map[string]any)["policyFailures"].([]any)
	checks := pf[0].(map[string]any)["checks"].([]any)
	if len(pf) != 1 || len(checks) != 1 || checks[0].(map[string]any)["postureCheckId"] != check || checks[0].(map[string]any)["expectedValue"] == nil {
		t.Fatalf("policy failures %v", pf)
	}

	// Bad responses are 400 and change nothing.
	for _, bad := range []struct {
		body  any
		field string
	}{
		{map[string]any{"id": check}, "typeId"},
		{map[string]any{"id": check, "typeId": "SHOE"}, "typeId"},
		{map[string]any{"id": "nope", "typeId": "OS", "type": "Windows", "version": "10.0.1"}, "id"},
		{map[string]any{"id": check, "typeId": "MAC", "macAddresses": []string{"aa"}}, "typeId"},
		{map[string]any{"id": check, "typeId": "OS", "version": "10.0.1"}, "type"},
	} {
		st, out := alice.do(http.MethodPost, "/posture-response", bad.body)
		wantError(t, st, out, 400, "COULD_NOT_VALIDATE", bad.field)
	}
	st, out = alice.do(http.MethodPost, "/posture-response-bulk", map[string]any{"id": check})
	wantError(t, st, out, 400, "COULD_NOT_PARSE_BODY", "")

	// A passing response lets the session through and names the affected service.
	st, out = alice.do(http.MethodPost, "/posture-response", map[string]any{"id": check, "typeId": "OS", "type": "Windows", "version": "10.0.19045"})
	if st != 201 {
		t.Fatalf("posture response: %d %v", st, out)
	}
	services := out["data"].(map[string]any)["services"].([]any)
	if len(services) != 1 || services[0].(map[string]any)["id"] != svc || services[0].(map[string]any)["timeout"].(float64) != -1 {
		t.Fatalf("affected services %v", services)
	}
	before := alice.lastChange()
	st, out = alice.do(http.MethodPost, "/sessions", map[string]any{"serviceId": svc})
	if st != 201 {
		t.Fatalf("session after passing posture: %d %v", st, out)
	}
	sessID := out["data"].(map[string]any)["id"].(string)
	data := ts.get("/identities/" + aliceID + "/posture-data")
	if os, _ := data["os"].(map[string]any); os == nil || os["version"] != "10.0.19045" || os["postureCheckId"] != check {
		t.Fatalf("posture data %v", data)
	}

	// A failing response (bulk this time) removes the session and moves lastChangeAt.
	st, out = alice.do(http.MethodPost, "/posture-response-bulk", []any{
		map[string]any{"id": check, "typeId": "OS", "type": "Windows", "version": "10.0", "build": "17763"},
	})
	if st != 200 {
		t.Fatalf("bulk: %d %v", st, out)
	}
	if st, _ := alice.do(http.MethodGet, "/sessions/"+sessID, nil); st != 404 {
		t.Fatalf("the session survived a failing posture: %d", st)
	}
	if after := alice.lastChange(); !after.After(before) {
		t.Fatalf("lastChangeAt did not move when the check started failing: %v → %v", before, after)
	}
}
