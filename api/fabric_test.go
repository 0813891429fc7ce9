package api_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"edgectl/api"
	"edgectl/dataplane"
	"edgectl/dataplane/wire"
)

// Links and circuits live on the node, not in the model: with no router
// connected both lists are empty on both APIs, an unknown id is 404 and a
// filter on a field they do not have is 400 naming it.
func TestNodeLocalLists_LinksAndCircuits(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for _, path := range []string{"/edge/management/v1/links", "/fabric/v1/links", "/edge/management/v1/circuits", "/fabric/v1/circuits"} {
		st, out := ts.do(http.MethodGet, path, nil)
		if data, _ := out["data"].([]any); st != http.StatusOK || data == nil || len(data) != 0 {
			t.Errorf("GET %s: %d %v, want 200 and an empty list", path, st, out)
		}
		st, out = ts.do(http.MethodGet, path+"/no-such-id", nil)
		wantError(t, st, out, http.StatusNotFound, "NOT_FOUND", "")
		st, out = ts.do(http.MethodGet, path+"?filter="+url.QueryEscape(`noSuchField="x"`), nil)
		wantError(t, st, out, http.StatusBadRequest, "INVALID_FILTER", "")
		if msg, _ := out["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "noSuchField") {
			t.Errorf("GET %s with a bad filter: %q does not name the field", path, msg)
		}
	}
	st, out := ts.do(http.MethodGet, "/fabric/v1/links?filter="+url.QueryEscape(`sourceRouterId="r1" and protocol="tls"`), nil)
	if st != http.StatusOK {
		t.Fatalf("a filter on the links' own fields: %d %v", st, out)
	}
}

// linkRouters stands for this node's routers with two links reported and
// no router connected (the API's side of PATCH and DELETE /links/{id}; the
// real routers' side is integration/mesh_test.go's).
type linkRouters struct {
	api.DataPlane // not called by these operations
	mu            sync.Mutex
	links         []dataplane.Link
	circuits      []*dataplane.Circuit
	changes       int
	removed       []string
}

func (r *linkRouters) Connected() []string            { return nil }
func (r *linkRouters) Status(string) dataplane.Status { return dataplane.Status{} }
func (r *linkRouters) Circuits() []*dataplane.Circuit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.circuits)
}
func (r *linkRouters) LinkUsable(l dataplane.Link) bool     { return true }
func (r *linkRouters) CircuitBytes(string) (in, out uint64) { return 1000, 400 }
func (r *linkRouters) Links() []dataplane.Link {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.links)
}

func (r *linkRouters) ChangeLinkEverywhere(ctx context.Context, id string, c dataplane.LinkChange) (map[string]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.links {
		if l := &r.links[i]; l.ID == id {
			if c.StaticCost != nil {
				l.StaticCost = *c.StaticCost
			}
			if c.Down != nil {
				l.Down = *c.Down
			}
			r.changes++
			return map[string]string{"n1": "changed", "n2": "kept until its routers report the link to this node"}, nil
		}
	}
	return nil, dataplane.ErrNoLink
}

func (r *linkRouters) RemoveLink(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removed = append(r.removed, id)
	r.links = slices.DeleteFunc(r.links, func(l dataplane.Link) bool { return l.ID == id })
}

// Links and circuits name their routers as OpenZiti's fabric API does: on
// /fabric/v1 every router, edge or transit, is a "routers" ref at
// ./routers/ID (the API lists both there); on the Management API each is at
// its own collection. A link shows the connections its routers reported
// ({type, source, dest}: `ziti fabric list links`' CONNECTIONS column), a
// circuit's path its routers and its links as refs; a terminator its router
// as the links do.
func TestFabric_LinksAndCircuitsAsOpenZitiShowsThem(t *testing.T) {
	t.Parallel()
	routers := &linkRouters{}
	ts := newTestServerOf(t, nil, routers)
	er := ts.create("/edge-routers", map[string]any{"name": "edge-a"})
	tr := ts.create("/transit-routers", map[string]any{"name": "transit-b"})
	svc := ts.create("/services", map[string]any{"name": "echo"})
	term := ts.create("/terminators", map[string]any{"service": svc, "router": er, "binding": "edge", "address": "hosted"})
	routers.mu.Lock()
	routers.links = []dataplane.Link{{ID: "l1", SrcRouterID: er, DstRouterID: tr, StaticCost: 1, Conns: []wire.LinkConn{
		{Type: "payload", LocalAddr: "127.0.0.1:40001", RemoteAddr: "127.0.0.1:6004"},
		{Type: "ack", LocalAddr: "127.0.0.1:40002", RemoteAddr: "127.0.0.1:6004"},
	}}, {ID: "l2", SrcRouterID: tr, DstRouterID: er, StaticCost: 1}}
	routers.circuits = []*dataplane.Circuit{{ID: "c1", IngressRouterID: er, Path: []string{er, tr}, Links: []string{"l1"}, ServiceID: svc}}
	routers.mu.Unlock()
	ref := func(entity, path, id, name string) map[string]any {
		return map[string]any{"_links": map[string]any{"self": map[string]any{"href": "./" + path + "/" + id}}, "entity": entity, "id": id, "name": name}
	}
	for _, c := range []struct {
		prefix     string
		edge, tran map[string]any
	}{
		{"/fabric/v1", ref("routers", "routers", er, "edge-a"), ref("routers", "routers", tr, "transit-b")},
		{"/edge/management/v1", ref("edge-routers", "edge-routers", er, "edge-a"), ref("routers", "routers", tr, "transit-b")},
	} {
		st, out := ts.do(http.MethodGet, c.prefix+"/links/l1", nil)
		if st != http.StatusOK {
			t.Fatalf("GET %s/links/l1: %d %v", c.prefix, st, out)
		}
		l := out["data"].(map[string]any)
		if !reflect.DeepEqual(l["sourceRouter"], c.edge) || !reflect.DeepEqual(l["destRouter"], c.tran) {
			t.Errorf("%s: a link's routers: %v and %v, want %v and %v", c.prefix, l["sourceRouter"], l["destRouter"], c.edge, c.tran)
		}
		want := []any{
			map[string]any{"type": "payload", "source": "127.0.0.1:40001", "dest": "127.0.0.1:6004"},
			map[string]any{"type": "ack", "source": "127.0.0.1:40002", "dest": "127.0.0.1:6004"},
		}
		if !reflect.DeepEqual(l["connections"], want) {
			t.Errorf("%s: a link's connections: %v, want %v", c.prefix, l["connections"], want)
		}
		if st, out = ts.do(http.MethodGet, c.prefix+"/links/l2", nil); st != http.StatusOK || !reflect.DeepEqual(dig(out, "data", "connections"), []any{}) {
			t.Errorf("%s: a link with no connections reported: %d %v", c.prefix, st, out)
		}
		st, out = ts.do(http.MethodGet, c.prefix+"/circuits", nil)
		data, _ := out["data"].([]any)
		if st != http.StatusOK || len(data) != 1 {
			t.Fatalf("GET %s/circuits: %d %v", c.prefix, st, out)
		}
		path := dig(data[0], "path")
		if !reflect.DeepEqual(dig(path, "nodes"), []any{c.edge, c.tran}) || !reflect.DeepEqual(dig(path, "links"), []any{ref("links", "links", "l1", "l1")}) {
			t.Errorf("%s: a circuit's path: %v", c.prefix, path)
		}
		if !reflect.DeepEqual(dig(data[0], "service"), ref("services", "services", svc, "echo")) {
			t.Errorf("%s: a circuit's service: %v", c.prefix, dig(data[0], "service"))
		}
		if u := dig(data[0], "usage"); !reflect.DeepEqual(u, map[string]any{"bytesIn": float64(1000), "bytesOut": float64(400)}) {
			t.Errorf("%s: a circuit's usage: %v", c.prefix, u)
		}
		if st, out = ts.do(http.MethodGet, c.prefix+"/terminators/"+term, nil); st != http.StatusOK || !reflect.DeepEqual(dig(out, "data", "router"), c.edge) {
			t.Errorf("%s: a terminator's router: %d %v, want %v", c.prefix, st, dig(out, "data", "router"), c.edge)
		}
	}
}

// A link's static cost and down change with PATCH (what `ziti fabric update
// link` sends) and show in its detail; a bad value, or a field a link does
// not change, is 400 naming it and changes nothing; an unknown link is 404;
// the answer lists what each node did; DELETE removes it. On both APIs, and the Management API's document
// describes the PATCH body.
func TestLinks_PatchAndDelete(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"/edge/management/v1", "/fabric/v1"} {
		routers := &linkRouters{links: []dataplane.Link{
			{ID: "l1", SrcRouterID: "ra", DstRouterID: "rb", StaticCost: 1},
			{ID: "l2", SrcRouterID: "rb", DstRouterID: "rc", StaticCost: 1},
		}}
		ts := newTestServerOf(t, nil, routers)
		link := func(id string) map[string]any {
			t.Helper()
			st, out := ts.do(http.MethodGet, prefix+"/links/"+id, nil)
			if st != http.StatusOK {
				t.Fatalf("GET %s/links/%s: %d %v", prefix, id, st, out)
			}
			return out["data"].(map[string]any)
		}
		if l := link("l1"); l["staticCost"] != 1.0 || l["down"] != false {
			t.Fatalf("%s: a new link: %v", prefix, l)
		}
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"staticCost": -1}, "staticCost"},
			{map[string]any{"staticCost": 1 << 31}, "staticCost"},
			{map[string]any{"staticCost": "high"}, "staticCost"},
			{map[string]any{"down": "yes"}, "down"},
			{map[string]any{"staticCost": 5, "name": "x"}, "name"},
		} {
			st, out := ts.do(http.MethodPatch, prefix+"/links/l1", c.body)
			wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", c.field)
		}
		if routers.changes != 0 {
			t.Fatalf("%s: a refused PATCH changed the link", prefix)
		}
		st, out := ts.do(http.MethodPatch, prefix+"/links/l1", map[string]any{"staticCost": 20})
		if st != http.StatusOK || dig(out, "data", "nodes", "n1") != "changed" || dig(out, "data", "nodes", "n2") == nil {
			t.Fatalf("%s: PATCH staticCost: %d %v, want each node's outcome", prefix, st, out)
		}
		st, out = ts.do(http.MethodPatch, prefix+"/links/l1", map[string]any{"down": true})
		if st != http.StatusOK {
			t.Fatalf("%s: PATCH down: %d %v", prefix, st, out)
		}
		if l := link("l1"); l["staticCost"] != 20.0 || l["down"] != true || l["cost"] != 20.0 {
			t.Fatalf("%s: after the PATCHes: %v", prefix, l)
		}
		if l := link("l2"); l["staticCost"] != 1.0 || l["down"] != false {
			t.Fatalf("%s: the other link changed: %v", prefix, l)
		}
		if st, _ = ts.do(http.MethodPatch, prefix+"/links/l1", map[string]any{}); st != http.StatusOK || routers.changes != 2 {
			t.Fatalf("%s: an empty PATCH: %d, %d changes", prefix, st, routers.changes)
		}
		st, out = ts.do(http.MethodPatch, prefix+"/links/nope", map[string]any{"down": true})
		wantError(t, st, out, http.StatusNotFound, "NOT_FOUND", "")
		st, out = ts.do(http.MethodPatch, prefix+"/links/nope", map[string]any{})
		wantError(t, st, out, http.StatusNotFound, "NOT_FOUND", "")
		// DELETE is 200 for a link this node does not list too (its routers
		// are told to close it, as OpenZiti's controller does).
		for _, id := range []string{"nope", "l1"} {
			if st, out = ts.do(http.MethodDelete, prefix+"/links/"+id, nil); st != http.StatusOK {
				t.Fatalf("%s: DELETE %s: %d %v", prefix, id, st, out)
			}
		}
		if !slices.Equal(routers.removed, []string{"nope", "l1"}) {
			t.Fatalf("%s: removed %v", prefix, routers.removed)
		}
		st, out = ts.do(http.MethodGet, prefix+"/links/l1", nil)
		wantError(t, st, out, http.StatusNotFound, "NOT_FOUND", "")
	}

	ts := newTestServer(t)
	st, out := ts.do(http.MethodGet, "/edge/management/v1/specs/edge-management/spec", nil)
	if st != http.StatusOK {
		t.Fatalf("the Management API's document: %d", st)
	}
	op, _ := dig(out, "data", "paths", "/links/{id}", "patch").(map[string]any)
	props, _ := dig(op, "requestBody", "content", "application/json", "schema", "properties").(map[string]any)
	if props["staticCost"] == nil || props["down"] == nil || len(props) != 2 {
		t.Fatalf("PATCH /links/{id} body in the document: %v", props)
	}
}

// POST /fabric/v1/inspections (`ziti fabric inspect`): the node's own
// values when the regex matches its id, none when it does not, OpenZiti's
// bare InspectResponse (no envelope); a bad regex or no values is 400 naming
// the field.
func TestInspections(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.do(http.MethodPost, "/fabric/v1/inspections", map[string]any{"requestedValues": []string{"stackdump", "connected-peers", "no-such-value"}})
	values, _ := out["values"].([]any)
	if st != http.StatusOK || out["success"] != true || out["data"] != nil || len(values) != 2 {
		t.Fatalf("inspect: %d %v", st, out)
	}
	if v, _ := dig(values[0], "value").(string); dig(values[0], "name") != "stackdump" || !strings.Contains(v, "goroutine") {
		t.Fatalf("stackdump: %v", values[0])
	}
	if peers, _ := dig(values[1], "value").([]any); dig(values[1], "name") != "connected-peers" || len(peers) != 1 {
		t.Fatalf("connected-peers (a JSON value given as JSON): %v", values[1])
	}
	st, out = ts.do(http.MethodPost, "/fabric/v1/inspections", map[string]any{"appRegex": "^no-such-node$", "requestedValues": []string{"stackdump"}})
	if values, _ := out["values"].([]any); st != http.StatusOK || len(values) != 0 {
		t.Fatalf("a regex that matches nothing: %d %v", st, out)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"appRegex": "(", "requestedValues": []string{"stackdump"}}, "appRegex"},
		{map[string]any{"appRegex": 3, "requestedValues": []string{"stackdump"}}, "appRegex"},
		{map[string]any{}, "requestedValues"},
		{map[string]any{"requestedValues": "stackdump"}, "requestedValues"},
		{map[string]any{"requestedValues": []string{" "}}, "requestedValues"},
	} {
		st, out := ts.do(http.MethodPost, "/fabric/v1/inspections", c.body)
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", c.field)
	}
}
