package api_test

import (
	"net/http"
	"testing"

	"edgectl/api"
	"edgectl/fsm"
)

// TestRouterIdentity_MadeRenamedAndProtectedWithItsRouter: an edge router
// with isTunnelerEnabled has an identity of type Router with its id and
// name and a system edge router policy; the identity cannot be deleted or
// renamed directly, and renaming the router renames it (OpenZiti's rules).
func TestRouterIdentity_MadeRenamedAndProtectedWithItsRouter(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/edge-routers", map[string]any{"name": "tun1", "isTunnelerEnabled": true})
	i := ts.get("/identities/" + id)
	if i["name"] != "tun1" || i["typeId"] != "Router" || i["isAdmin"] != false {
		t.Fatalf("router identity: %v", i)
	}
	p := ts.get("/edge-router-policies/" + id)
	if p["name"] != "edge-router-"+id+"-system" || p["isSystem"] != true || p["semantic"] != "AnyOf" ||
		js(p["identityRoles"]) != `["@`+id+`"]` || js(p["edgeRouterRoles"]) != `["@`+id+`"]` {
		t.Fatalf("system policy: %v", p)
	}

	st, out := ts.do(http.MethodDelete, mgmt("/identities/"+id), nil)
	wantError(t, st, out, http.StatusBadRequest, "ENTITY_CAN_NOT_BE_DELETED", "")
	st, out = ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"name": "other"})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "name")
	st, out = ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"type": "Device"})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "type")
	if st, out := ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"roleAttributes": []string{"hosts"}}); st != 200 {
		t.Fatalf("patch of a router identity's attributes: %d %v", st, out)
	}

	if st, out := ts.do(http.MethodPatch, mgmt("/edge-routers/"+id), map[string]any{"name": "tun-one"}); st != 200 {
		t.Fatalf("rename: %d %v", st, out)
	}
	if i := ts.get("/identities/" + id); i["name"] != "tun-one" || js(i["roleAttributes"]) != `["hosts"]` {
		t.Fatalf("after the router's rename: %v", i)
	}

	// The audit stream shows the identity and the policy the router's create made.
	st, out = ts.do(http.MethodGet, mgmt("/events?limit=50&filter="+`entityId%3D%22`+id+`%22%20and%20action%3D%22created%22`), nil)
	if st != 200 {
		t.Fatalf("events: %d %v", st, out)
	}
	types := map[string]bool{}
	for _, e := range out["data"].([]any) {
		types[e.(map[string]any)["entityType"].(string)] = true
	}
	if !types["identities"] || !types["edge-routers"] || !types["edge-router-policies"] {
		t.Fatalf("created events of %s: %v", id, types)
	}
}

// TestRouterIdentity_FollowsTheFlagAndTheRouter: turning the flag off or
// deleting the router deletes the identity and its @id references; on
// again it comes back with the same id and no policies.
func TestRouterIdentity_FollowsTheFlagAndTheRouter(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/edge-routers", map[string]any{"name": "tun2"})
	if st, _ := ts.do(http.MethodGet, mgmt("/identities/"+id), nil); st != http.StatusNotFound {
		t.Fatalf("a router without a tunneler has an identity: %d", st)
	}
	if st, out := ts.do(http.MethodPatch, mgmt("/edge-routers/"+id), map[string]any{"isTunnelerEnabled": true}); st != 200 {
		t.Fatalf("flag on: %d %v", st, out)
	}
	ts.get("/identities/" + id)
	sp := ts.create("/service-policies", map[string]any{"name": "bind-on-router", "type": "Bind", "semantic": "AnyOf",
		"identityRoles": []string{"@" + id, "#hosts"}, "serviceRoles": []string{"#all"}})

	if st, out := ts.do(http.MethodPatch, mgmt("/edge-routers/"+id), map[string]any{"isTunnelerEnabled": false}); st != 200 {
		t.Fatalf("flag off: %d %v", st, out)
	}
	for _, path := range []string{"/identities/", "/edge-router-policies/"} {
		if st, _ := ts.do(http.MethodGet, mgmt(path+id), nil); st != http.StatusNotFound {
			t.Fatalf("%s%s after the flag went off: %d", path, id, st)
		}
	}
	if roles := js(ts.get("/service-policies/" + sp)["identityRoles"]); roles != `["#hosts"]` {
		t.Fatalf("the policy still names the identity: %s", roles)
	}

	if st, out := ts.do(http.MethodPut, mgmt("/edge-routers/"+id), map[string]any{"name": "tun2", "isTunnelerEnabled": true}); st != 200 {
		t.Fatalf("flag on again: %d %v", st, out)
	}
	if i := ts.get("/identities/" + id); i["typeId"] != "Router" {
		t.Fatalf("identity back: %v", i)
	}
	if roles := js(ts.get("/service-policies/" + sp)["identityRoles"]); roles != `["#hosts"]` {
		t.Fatalf("the policy names the identity again: %s", roles)
	}

	ts.mustDelete("/edge-routers/" + id)
	for _, path := range []string{"/identities/", "/edge-router-policies/"} {
		if st, _ := ts.do(http.MethodGet, mgmt(path+id), nil); st != http.StatusNotFound {
			t.Fatalf("%s%s after the router's delete: %d", path, id, st)
		}
	}
}

// TestRouterIdentity_UsersCannotMakeOne: the type Router is the routers'
// own, on create and on update; and a router whose identity's name is taken
// is not made.
func TestRouterIdentity_UsersCannotMakeOne(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.do(http.MethodPost, mgmt("/identities"), map[string]any{"name": "fake", "type": "Router", "isAdmin": false})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "type")
	dev := ts.create("/identities", map[string]any{"name": "dev", "type": "Device", "isAdmin": false})
	st, out = ts.do(http.MethodPatch, mgmt("/identities/"+dev), map[string]any{"type": "Router"})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "type")

	_, before := ts.list("/edge-routers")
	st, out = ts.do(http.MethodPost, mgmt("/edge-routers"), map[string]any{"name": "dev", "isTunnelerEnabled": true})
	wantError(t, st, out, http.StatusConflict, "CONFLICT", "")
	if _, after := ts.list("/edge-routers"); after != before {
		t.Fatal("the router was made without its identity")
	}
}

// TestRouterIdentity_AClusterMidUpgradeKeepsEdgeRouterWrites: while a
// member cannot apply the router identity commands, edge routers are
// created, changed and deleted with the commands of earlier releases (no
// identity yet: the upgrade step makes it later).
func TestRouterIdentity_AClusterMidUpgradeKeepsEdgeRouterWrites(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ts.writer.SetGate(func(c fsm.CommandType) error {
		if v := fsm.VersionOf(c); v >= 9 {
			return &fsm.VersionError{Command: c, Need: v, NodeID: "old", NodeVersion: "v0.1.0", NodeCommandVersion: 8}
		}
		return nil
	})
	id := ts.create("/edge-routers", map[string]any{"name": "tun-old", "isTunnelerEnabled": true})
	if st, _ := ts.do(http.MethodGet, mgmt("/identities/"+id), nil); st != http.StatusNotFound {
		t.Fatalf("an identity made by a command the cluster cannot apply yet: %d", st)
	}
	if st, out := ts.do(http.MethodPatch, mgmt("/edge-routers/"+id), map[string]any{"cost": 3}); st != 200 {
		t.Fatalf("patch mid-upgrade: %d %v", st, out)
	}
	ts.mustDelete("/edge-routers/" + id)
}

// TestRouterIdentity_ReplicatedWithItsRouter: a follower that applies the
// log has the router's identity and policy from the router's own write, and
// loses them with its delete.
func TestRouterIdentity_ReplicatedWithItsRouter(t *testing.T) {
	t.Parallel()
	leader := newTestServer(t)
	f := newFollowerServer(t, leader, api.Config{})
	id := leader.create("/edge-routers", map[string]any{"name": "tun-r", "isTunnelerEnabled": true})
	if i := f.get("/identities/" + id + "?consistency=linearizable"); i["typeId"] != "Router" || i["name"] != "tun-r" {
		t.Fatalf("the follower's router identity: %v", i)
	}
	if p := f.get("/edge-router-policies/" + id + "?consistency=linearizable"); p["isSystem"] != true {
		t.Fatalf("the follower's system policy: %v", p)
	}
	leader.mustDelete("/edge-routers/" + id)
	if st, _ := f.do(http.MethodGet, mgmt("/identities/"+id+"?consistency=linearizable"), nil); st != http.StatusNotFound {
		t.Fatalf("the follower still has the identity: %d", st)
	}
}
