package api_test

import (
	"net/http"
	"net/url"
	"testing"
)

func TestTerminators_CreateValidatesAndRunsOnRoutersAndEdgeRouters(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	svc := ts.create("/services", map[string]any{"name": "svc"})
	router := ts.create("/routers", map[string]any{"name": "r1"})
	edge := ts.create("/edge-routers", map[string]any{"name": "er1"})
	ok := func(extra map[string]any) map[string]any {
		b := map[string]any{"service": svc, "router": router, "binding": "transport", "address": "tcp:10.0.0.1:80"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing service", map[string]any{"router": router, "binding": "transport", "address": "a"}, "service"},
		{"unknown service", ok(map[string]any{"service": "nope"}), "service"},
		{"missing router", map[string]any{"service": svc, "binding": "transport", "address": "a"}, "router"},
		{"unknown router", ok(map[string]any{"router": "nope"}), "router"},
		{"missing binding", ok(map[string]any{"binding": nil}), "binding"},
		{"missing address", ok(map[string]any{"address": ""}), "address"},
		{"cost too high", ok(map[string]any{"cost": 65536}), "cost"},
		{"cost negative", ok(map[string]any{"cost": -1}), "cost"},
		{"bad precedence", ok(map[string]any{"precedence": "top"}), "precedence"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt("/terminators"), c.body)
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", c.field) })
	}
	if _, n := ts.list("/terminators"); n != 0 {
		t.Fatalf("%d terminators after bad creates", n)
	}

	t1 := ts.create("/terminators", ok(map[string]any{"identity": "host-1", "identitySecret": "s3cret", "cost": 10, "hostId": "h1"}))
	t2 := ts.create("/terminators", ok(map[string]any{"router": edge, "binding": "edge", "precedence": "required"}))
	got := ts.get("/terminators/" + t1)
	if got["serviceId"] != svc || got["routerId"] != router || got["binding"] != "transport" || got["address"] != "tcp:10.0.0.1:80" ||
		got["identity"] != "host-1" || got["cost"].(float64) != 10 || got["precedence"] != "default" || got["hostId"] != "h1" {
		t.Fatalf("view: %v", got)
	}
	if _, shown := got["identitySecret"]; shown {
		t.Fatal("the identity secret is shown")
	}
	if got["service"].(map[string]any)["name"] != "svc" || got["router"].(map[string]any)["name"] != "r1" {
		t.Fatalf("refs: %v %v", got["service"], got["router"])
	}
	got = ts.get("/terminators/" + t2)
	if r := got["router"].(map[string]any); r["name"] != "er1" || r["entity"] != "edge-routers" || got["precedence"] != "required" {
		t.Fatalf("edge router terminator: %v", got)
	}
	data, total := ts.list("/services/" + svc + "/terminators")
	if total != 2 || data[0].(map[string]any)["id"] != t1 {
		t.Fatalf("terminators of the service: %v", data)
	}
	if _, total := ts.list("/terminators?filter=" + url.QueryEscape(`binding = "edge"`)); total != 1 {
		t.Fatalf("filter by binding: %d", total)
	}
	ts.fails(http.MethodGet, mgmt("/services/nope/terminators"), nil, 404, "NOT_FOUND", "")
}

func TestTerminators_PatchPutDelete(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	svc := ts.create("/services", map[string]any{"name": "svc"})
	router := ts.create("/routers", map[string]any{"name": "r1"})
	id := ts.create("/terminators", map[string]any{"service": svc, "router": router, "binding": "transport",
		"address": "tcp:a:1", "cost": 7, "identity": "i"})
	if st, out := ts.do(http.MethodPatch, mgmt("/terminators/"+id), map[string]any{"address": "tcp:b:2"}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	got := ts.get("/terminators/" + id)
	if got["address"] != "tcp:b:2" || got["cost"].(float64) != 7 || got["identity"] != "i" {
		t.Fatalf("after patch: %v", got)
	}
	ts.fails(http.MethodPatch, mgmt("/terminators/"+id), map[string]any{"router": "nope"}, 400, "COULD_NOT_VALIDATE", "router")
	ts.fails(http.MethodPut, mgmt("/terminators/"+id), map[string]any{"service": svc, "router": router, "binding": "transport"}, 400, "COULD_NOT_VALIDATE", "address")
	if st, out := ts.do(http.MethodPut, mgmt("/terminators/"+id), map[string]any{"service": svc, "router": router, "binding": "udp", "address": "udp:c:3"}); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	got = ts.get("/terminators/" + id)
	if got["binding"] != "udp" || got["cost"].(float64) != 0 || got["identity"] != "" || got["precedence"] != "default" {
		t.Fatalf("after put: %v", got)
	}
	ts.mustDelete("/terminators/" + id)
	ts.fails(http.MethodGet, mgmt("/terminators/"+id), nil, 404, "NOT_FOUND", "")
	ts.fails(http.MethodDelete, mgmt("/terminators/"+id), nil, 404, "NOT_FOUND", "")
}
