package api_test

import (
	"net/http"
	"testing"
)

// serviceConfigPairs returns the service:config pairs of an identity's service-config list.
func serviceConfigPairs(ts *testServer, identity string) map[string]bool {
	ts.t.Helper()
	data, _ := ts.list("/identities/" + identity + "/service-configs")
	out := map[string]bool{}
	for _, d := range data {
		m := d.(map[string]any)
		out[m["service"].(map[string]any)["id"].(string)+":"+m["config"].(map[string]any)["id"].(string)] = true
	}
	return out
}

func TestIdentityServiceConfigs_AssociateReplacesPerTypeAndDisassociates(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a1, a2, b1 := configFixture(ts)
	svc := ts.create("/services", map[string]any{"name": "svc"})
	other := ts.create("/services", map[string]any{"name": "other"})
	ident := ts.create("/identities", map[string]any{"name": "dev", "type": "Device", "isAdmin": false})
	path := mgmt("/identities/" + ident + "/service-configs")

	cases := []struct {
		name  string
		body  any
		code  string
		field string
	}{
		{"object body", map[string]any{"serviceId": svc, "configId": a1}, "COULD_NOT_PARSE_BODY", ""},
		{"item not an object", []any{"x"}, "COULD_NOT_VALIDATE", "[0]"},
		{"missing serviceId", []any{map[string]any{"configId": a1}}, "COULD_NOT_VALIDATE", "[0].serviceId"},
		{"missing configId", []any{map[string]any{"serviceId": svc}}, "COULD_NOT_VALIDATE", "[0].configId"},
		{"unknown service", []any{map[string]any{"serviceId": svc, "configId": a1}, map[string]any{"serviceId": "nope", "configId": a1}}, "COULD_NOT_VALIDATE", "[1].serviceId"},
		{"unknown config", []any{map[string]any{"serviceId": svc, "configId": "nope"}}, "COULD_NOT_VALIDATE", "[0].configId"},
		{"serviceId not a string", []any{map[string]any{"serviceId": 1, "configId": a1}}, "COULD_NOT_VALIDATE", "[0].serviceId"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, path, c.body)
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, http.StatusBadRequest, c.code, c.field) })
	}
	if got := serviceConfigPairs(ts, ident); len(got) != 0 {
		t.Fatalf("bad requests stored associations: %v", got)
	}

	body := []any{map[string]any{"serviceId": svc, "configId": a1}, map[string]any{"serviceId": svc, "configId": b1},
		map[string]any{"serviceId": other, "configId": a1}}
	if st, out := ts.do(http.MethodPost, path, body); st != 200 {
		t.Fatalf("associate: %d %v", st, out)
	}
	data, total := ts.list("/identities/" + ident + "/service-configs")
	if total != 3 {
		t.Fatalf("want 3 associations, got %d: %v", total, data)
	}
	item := data[0].(map[string]any)
	if ref := item["service"].(map[string]any); ref["name"] == "" || ref["_links"] == nil || ref["id"] == nil {
		t.Fatalf("service ref: %v", item)
	}
	// a2 has the type of a1: it replaces a1 for svc only.
	if st, out := ts.do(http.MethodPost, path, []any{map[string]any{"serviceId": svc, "configId": a2}}); st != 200 {
		t.Fatalf("replace: %d %v", st, out)
	}
	want := map[string]bool{svc + ":" + a2: true, svc + ":" + b1: true, other + ":" + a1: true}
	if got := serviceConfigPairs(ts, ident); len(got) != len(want) || !got[svc+":"+a2] || !got[svc+":"+b1] || !got[other+":"+a1] {
		t.Fatalf("after replace: %v, want %v", got, want)
	}
	st, out := ts.do(http.MethodDelete, mgmt("/configs/"+a2), nil)
	wantError(t, st, out, 409, "REFERENCED", "")

	// Removing a pair that does not match (svc uses a2, not a1) changes nothing.
	if st, out := ts.do(http.MethodDelete, path, []any{map[string]any{"serviceId": svc, "configId": a1}, map[string]any{"serviceId": svc, "configId": b1}}); st != 200 {
		t.Fatalf("disassociate: %d %v", st, out)
	}
	if got := serviceConfigPairs(ts, ident); len(got) != 2 || !got[svc+":"+a2] || !got[other+":"+a1] {
		t.Fatalf("after disassociate: %v", got)
	}
	st, out = ts.do(http.MethodDelete, path, []any{map[string]any{"serviceId": svc}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "[0].configId")
	if st, out := ts.do(http.MethodDelete, path, nil); st != 200 {
		t.Fatalf("disassociate all: %d %v", st, out)
	}
	if got := serviceConfigPairs(ts, ident); len(got) != 0 {
		t.Fatalf("after removing all: %v", got)
	}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		st, out := ts.do(m, mgmt("/identities/nope/service-configs"), []any{})
		wantError(t, st, out, 404, "NOT_FOUND", "")
	}
}

func TestIdentityServiceConfigs_GoWithTheirServiceOrIdentity(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a1, _, b1 := configFixture(ts)
	svc := ts.create("/services", map[string]any{"name": "svc", "configs": []string{b1}})
	keep := ts.create("/services", map[string]any{"name": "keep"})
	router := ts.create("/routers", map[string]any{"name": "r1"})
	term := ts.create("/terminators", map[string]any{"service": svc, "router": router, "binding": "transport", "address": "a"})
	i1 := ts.create("/identities", map[string]any{"name": "i1", "type": "Device", "isAdmin": false})
	i2 := ts.create("/identities", map[string]any{"name": "i2", "type": "Device", "isAdmin": false})
	for _, i := range []string{i1, i2} {
		body := []any{map[string]any{"serviceId": svc, "configId": a1}, map[string]any{"serviceId": keep, "configId": a1}}
		if st, out := ts.do(http.MethodPost, mgmt("/identities/"+i+"/service-configs"), body); st != 200 {
			t.Fatalf("associate: %d %v", st, out)
		}
	}

	ts.mustDelete("/services/" + svc)
	st, out := ts.do(http.MethodGet, mgmt("/terminators/"+term), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
	if got := serviceConfigPairs(ts, i1); len(got) != 1 || !got[keep+":"+a1] {
		t.Fatalf("i1 after its service went: %v", got)
	}
	// b1 was used only by the deleted service.
	ts.mustDelete("/configs/" + b1)

	ts.mustDelete("/identities/" + i1)
	st, out = ts.do(http.MethodDelete, mgmt("/configs/"+a1), nil)
	wantError(t, st, out, 409, "REFERENCED", "") // i2 still uses it
	ts.mustDelete("/identities/" + i2)
	ts.mustDelete("/configs/" + a1)
}
