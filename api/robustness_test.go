package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// hostileValues are values of the wrong type, size or shape for any field.
var hostileValues = []any{
	nil, true, -1, 1e300, 9007199254740993, "", strings.Repeat("x", 70000), "#", "@", "\u0000\u2028<&>",
	[]any{}, []any{nil}, []any{1, "a", map[string]any{}}, map[string]any{}, map[string]any{"a": map[string]any{"b": []any{nil}}},
}

// fieldNames are the writable fields of every resource of the spec (and a few unknown ones).
var fieldNames = strings.Fields(`name type typeId semantic identityRoles serviceRoles edgeRouterRoles postureCheckRoles
	roleAttributes tags appData configs configTypeId data schema isAdmin authPolicyId enrollment method identityId
	serviceId edgeRouterId routerId cost precedence defaultHostingCost defaultHostingPrecedence serviceHostingCosts
	serviceHostingPrecedences operatingSystems macAddresses domains process processes semantic timeoutSeconds
	promptOnWake promptOnUnlock certPem jwksEndpoint kid issuer audience claimsProperty useExternalId password
	username currentPassword newPassword code expiresAt ttlSeconds encryptionRequired terminatorStrategy
	maxIdleTimeMillis isVerified isAutoCaEnrollmentEnabled isOttCaEnrollmentEnabled isAuthEnabled
	identityNameFormat externalId disabled disabledUntil durationMinutes primary secondary passwordRules
	address binding peerData configTypes envInfo sdkInfo id queryType ostype macAddresses`)

// hostileBodies are request bodies a client might send by mistake or on purpose.
func hostileBodies() []any {
	out := []any{"null", "[]", `"x"`, "123", "{", `{"a":}`, "{}", strings.Repeat("[", 5000) + strings.Repeat("]", 5000)}
	for i, v := range hostileValues {
		body := map[string]any{}
		for j, f := range fieldNames {
			body[f] = hostileValues[(i+j)%len(hostileValues)]
		}
		out = append(out, body, map[string]any{"name": fmt.Sprintf("robust-%d", i), "data": v, "tags": v, "roleAttributes": v})
	}
	return out
}

// TestRobustness_NoRouteAnswers5xxToHostileInput sends malformed and
// ill-typed bodies to every operation of routes.md, with ids of records that
// exist and of records that do not: every answer must be below 500, the node
// must keep serving, and the model must pass its integrity check afterwards.
func TestRobustness_NoRouteAnswers5xxToHostileInput(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sends thousands of requests")
	}
	ts := newNodeServer(t)
	// Real records, so that updates reach their body parsing.
	ids := map[string]string{
		"services":       ts.create("/services", map[string]any{"name": "robust-svc"}),
		"config-types":   ts.create("/config-types", map[string]any{"name": "robust-ct", "schema": map[string]any{"type": "object"}}),
		"edge-routers":   ts.create("/edge-routers", map[string]any{"name": "robust-er"}),
		"identities":     ts.create("/identities", map[string]any{"name": "robust-id", "type": "Device", "isAdmin": false}),
		"posture-checks": ts.create("/posture-checks", map[string]any{"name": "robust-pc", "typeId": "DOMAIN", "domains": []any{"a.example"}}),
	}
	ids["configs"] = ts.create("/configs", map[string]any{"name": "robust-cfg", "configTypeId": ids["config-types"], "data": map[string]any{}})
	ids["service-policies"] = ts.create("/service-policies", map[string]any{"name": "robust-sp", "type": "Dial", "semantic": "AnyOf",
		"identityRoles": []any{"#all"}, "serviceRoles": []any{"#all"}})
	idFor := func(path string) string {
		for coll, id := range ids {
			if strings.HasPrefix(path, "/"+coll+"/") {
				return id
			}
		}
		return "no-such-id"
	}
	bodies := hostileBodies()
	sent := 0
	for _, r := range readRoutes(t) {
		if strings.Contains(r.path, "/authenticate") || strings.HasSuffix(r.path, "current-api-session") && r.method == http.MethodDelete {
			continue // would end the admin's session; covered by their own tests
		}
		path := strings.NewReplacer("{id}", idFor(r.path), "{serviceId}", ids["services"]).Replace(r.path)
		if r.method == http.MethodGet || r.method == http.MethodDelete {
			if r.method == http.MethodDelete && path != r.path && idFor(r.path) != "no-such-id" {
				continue // keep the real records for the other routes
			}
			for _, q := range []string{"", "?limit=-1&offset=abc", "?filter=" + strings.Repeat("(", 300), "?filter=name%20%3D%20%22x%22%20sort%20by%20nope", "?limit=100000000000000000000"} {
				st, out := ts.doAs(ts.token, r.method, r.api+path+q, nil)
				sent++
				if st >= 500 {
					t.Errorf("%s %s%s: %d %v", r.method, r.api, path+q, st, out)
				}
			}
			continue
		}
		for _, b := range bodies {
			st, out := ts.doAs(ts.token, r.method, r.api+path, b)
			sent++
			if st >= 500 {
				desc := fmt.Sprint(b)
				if len(desc) > 200 {
					desc = desc[:200] + "..."
				}
				t.Errorf("%s %s%s with %s: %d %v", r.method, r.api, path, desc, st, out)
			}
		}
	}
	t.Logf("%d requests", sent)
	// The node still serves and its model is consistent.
	if st, out := ts.do(http.MethodPost, mgmt("/database/check-data-integrity"), nil); st >= 300 {
		t.Fatalf("integrity check: %d %v", st, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, out := ts.do(http.MethodGet, mgmt("/database/data-integrity-results"), nil)
		data, _ := out["data"].(map[string]any)
		if st == http.StatusOK && data["inProgress"] == false {
			if results, _ := data["results"].([]any); len(results) > 0 {
				t.Fatalf("integrity findings after the hostile requests: %v", results)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("integrity results: %d %v", st, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
