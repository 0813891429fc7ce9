package api

import (
	"errors"
	"net/http"
	"slices"
	"time"

	"edgectl/dataplane"
	"edgectl/store"
	"edgectl/store/filter"
)

// The Fabric API (/fabric/v1): the part of OpenZiti's that its tools use.
// Routers (edge and transit, with whether each is connected to this node),
// terminators and services are read here and written through the
// Management API. Circuits (this node's) and links (those reported to this
// node) are listed, circuits deleted and links changed or deleted; both
// are also served on the Management API, an edgectl extension. The
// cluster's members (api/cluster.go), inspections (api/inspect.go) and the
// management channel's validations (api/wsapi.go) complete it.
// docs/openziti.md lists the `ziti fabric` and `ziti ops` commands this
// serves. Admins only, as the Management API.

// fabricRoutes are the Fabric API's operations.
func (s *Server) fabricRoutes() []route {
	return []route{
		{fabricAPI, get, "/routers", "listRouters", "Router", admin, s.listFabricRouters},
		{fabricAPI, get, "/routers/:id", "detailRouter", "Router", admin, s.getFabricRouter},
		{fabricAPI, get, "/terminators", "listTerminators", "Terminator", admin, s.listTerminators},
		{fabricAPI, get, "/terminators/:id", "detailTerminator", "Terminator", admin, s.getTerminator},
		{fabricAPI, get, "/services", "listServices", "Service", admin, s.listFabricServices},
		{fabricAPI, get, "/services/:id", "detailService", "Service", admin, s.getFabricService},
		{fabricAPI | managementAPI, get, "/circuits", "listCircuits", "Circuit", admin, s.listCircuits},
		{fabricAPI | managementAPI, get, "/circuits/:id", "detailCircuit", "Circuit", admin, s.getCircuit},
		{fabricAPI | managementAPI, del, "/circuits/:id", "deleteCircuit", "Circuit", admin, s.deleteCircuit},
		{fabricAPI | managementAPI, get, "/links", "listLinks", "Link", admin, s.listLinks},
		{fabricAPI | managementAPI, get, "/links/:id", "detailLink", "Link", admin, s.getLink},
		{fabricAPI | managementAPI, patch, "/links/:id", "patchLink", "Link", admin, s.patchLink},
		{fabricAPI | managementAPI, del, "/links/:id", "deleteLink", "Link", admin, s.deleteLink},
		{fabricAPI, get, "/ws-api", "managementChannel", "Management", admin, s.fabricWebSocket},
		{fabricAPI, post, "/inspections", "inspect", "Inspect", admin, s.inspect},
	}
}

// fabricRouterView is an edge router or transit router as the Fabric API shows it.
func (s *Server) fabricRouterView(r store.Record) map[string]any {
	live := s.routerLive(r.GetID())
	b := store.BaseOf(r)
	v := map[string]any{
		"_links": selfLinks("routers", b.ID), "id": b.ID, "name": r.RecordName(), "createdAt": b.CreatedAt,
		"updatedAt": b.UpdatedAt, "tags": tagsOrEmpty(b.Tags), "connected": live.Online, "listenerAddresses": []any{},
		"versionInfo": nil,
	}
	if live.Online {
		v["versionInfo"] = map[string]any{"version": live.Version, "revision": live.Revision, "os": live.OS, "arch": live.Arch, "buildDate": ""}
	}
	switch x := r.(type) {
	case *store.EdgeRouter:
		v["cost"], v["noTraversal"], v["disabled"], v["fingerprint"] = x.Cost, x.NoTraversal, x.Disabled, x.Fingerprint
	case *store.Router:
		v["cost"], v["noTraversal"], v["disabled"], v["fingerprint"] = x.Cost, x.NoTraversal, x.Disabled, x.Fingerprint
	}
	return v
}

// routerRecords are the edge routers and transit routers, by id.
func routerRecords(tx *store.Tx) []store.Record {
	var recs []store.Record
	for _, k := range []*store.Kind{store.KindEdgeRouter, store.KindRouter} {
		tx.Each(k, "id", func(r store.Record) bool { recs = append(recs, r); return true })
	}
	return recs
}

func (s *Server) listFabricRouters(c *call) error {
	// The router fields, which read edge routers as well (OpenZiti's
	// fabric router fields: no role attributes or tunneler flag).
	lr, err := c.parseList(store.KindRouter.Fields, false)
	if err != nil {
		return err
	}
	recs := routerRecords(c.tx)
	sortByName(recs)
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return s.fabricRouterView(r) })
}

func (s *Server) getFabricRouter(c *call) error {
	id := c.param("id")
	for _, k := range []*store.Kind{store.KindEdgeRouter, store.KindRouter} {
		if r, err := c.tx.Get(k, id); err == nil {
			c.ok(s.fabricRouterView(r))
			return nil
		}
	}
	return notFound("router", id)
}

func fabricServiceView(svc *store.Service) map[string]any {
	return map[string]any{
		"_links": selfLinks("services", svc.ID), "id": svc.ID, "name": svc.Name, "createdAt": svc.CreatedAt,
		"updatedAt": svc.UpdatedAt, "tags": tagsOrEmpty(svc.Tags), "terminatorStrategy": svc.TerminatorStrategy,
		"maxIdleTime": svc.MaxIdleTimeMillis,
	}
}

func (s *Server) listFabricServices(c *call) error {
	return c.listKind(store.KindService, false, func(r store.Record) any { return fabricServiceView(r.(*store.Service)) })
}

func (s *Server) getFabricService(c *call) error {
	svc, err := store.GetAs[*store.Service](c.tx, store.KindService, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(fabricServiceView(svc))
	return nil
}

// localRecord lets the list machinery page and filter what lives on this
// node only, not in the model: its circuits and the links reported to it.
type localRecord[T any] struct {
	store.Base
	v T
}

// localField is a filter field of a node-local record.
func localField[T any](get func(T) string) filter.Field {
	return filter.StringField(func(r any) string { return get(r.(*localRecord[T]).v) })
}

// listLocal answers a list of node-local records (each with its id and the
// time it was made), paged and filtered as the model's.
func listLocal[T any](c *call, fields *filter.Schema, items []T, id func(T) string, at func(T) time.Time, view func(T) any) error {
	lr, err := c.parseList(fields, false)
	if err != nil {
		return err
	}
	recs := make([]store.Record, 0, len(items))
	for _, it := range items {
		recs = append(recs, &localRecord[T]{Base: store.Base{ID: id(it), CreatedAt: at(it), UpdatedAt: at(it)}, v: it})
	}
	return c.page(lr, recordsSource(recs), len(recs), func(r store.Record) any { return view(r.(*localRecord[T]).v) })
}

// getLocal answers the node-local record of the call's id.
func getLocal[T any](c *call, entity string, items []T, id func(T) string, view func(T) any) error {
	for _, it := range items {
		if id(it) == c.param("id") {
			c.ok(view(it))
			return nil
		}
	}
	return notFound(entity, c.param("id"))
}

var circuitFields = store.BaseFields(map[string]filter.Field{
	"clientId":   localField(func(ci *dataplane.Circuit) string { return ci.SessionID }),
	"serviceId":  localField(func(ci *dataplane.Circuit) string { return ci.ServiceID }),
	"identityId": localField(func(ci *dataplane.Circuit) string { return ci.IdentityID }),
	"routerId":   localField(func(ci *dataplane.Circuit) string { return ci.IngressRouterID }),
})

func circuitID(ci *dataplane.Circuit) string    { return ci.ID }
func circuitAt(ci *dataplane.Circuit) time.Time { return ci.CreatedAt }
func linkID(l dataplane.Link) string            { return l.ID }
func linkAt(l dataplane.Link) time.Time         { return l.ReportedAt }

// routerRef is a reference to an edge router or a transit router. The
// Fabric API lists both at /routers, and names them so (entity "routers",
// as OpenZiti's fabric API does); the Management API, each at its own
// collection.
func (s *Server) routerRef(c *call, id string) any {
	k, path := store.KindEdgeRouter, "edge-routers"
	if c.tx.Exists(store.KindRouter, id) {
		k, path = store.KindRouter, "routers"
	}
	if c.api == fabricAPI {
		path = "routers"
	}
	return s.entityRef(c.tx, k, path, id)
}

// linkRef is a reference to a link, named by its id (links have no name),
// as OpenZiti's circuit paths show them.
func linkRef(id string) map[string]any {
	return map[string]any{"_links": selfLinks("links", id), "entity": "links", "id": id, "name": id}
}

// circuitView is a circuit as OpenZiti shows it: its client (the session),
// service, terminator and path (its routers and the links between them).
func (s *Server) circuitView(c *call, ci *dataplane.Circuit) map[string]any {
	nodes, links := []any{}, []any{}
	for _, id := range ci.Path {
		nodes = append(nodes, s.routerRef(c, id))
	}
	for _, id := range ci.Links {
		links = append(links, linkRef(id))
	}
	return map[string]any{
		"_links": selfLinks("circuits", ci.ID), "id": ci.ID, "createdAt": ci.CreatedAt, "updatedAt": ci.CreatedAt, "tags": map[string]any{},
		"clientId": ci.SessionID, "identityId": ci.IdentityID, "apiSessionId": ci.APISessionID,
		"identity":   s.entityRef(c.tx, store.KindIdentity, "identities", ci.IdentityID),
		"service":    s.entityRef(c.tx, store.KindService, "services", ci.ServiceID),
		"terminator": s.entityRef(c.tx, store.KindTerminator, "terminators", ci.TerminatorID),
		"path":       map[string]any{"nodes": nodes, "links": links, "ingressId": ci.IngressID, "egressId": ci.EgressID},
		// usage: the bytes the routers reported so far (every interval, a
		// minute by default), an edgectl extension.
		"usage": s.circuitUsage(ci.ID),
	}
}

// circuitUsage is what the routers reported of circuit id's bytes.
func (s *Server) circuitUsage(id string) map[string]any {
	var in, out uint64
	if s.DataPlane != nil {
		in, out = s.DataPlane.CircuitBytes(id)
	}
	return map[string]any{"bytesIn": in, "bytesOut": out}
}

func (s *Server) circuitList() []*dataplane.Circuit {
	if s.DataPlane == nil {
		return nil
	}
	return s.DataPlane.Circuits()
}

func (s *Server) listCircuits(c *call) error {
	return listLocal(c, circuitFields, s.circuitList(), circuitID, circuitAt, func(ci *dataplane.Circuit) any { return s.circuitView(c, ci) })
}

func (s *Server) getCircuit(c *call) error {
	return getLocal(c, "circuit", s.circuitList(), circuitID, func(ci *dataplane.Circuit) any { return s.circuitView(c, ci) })
}

// deleteCircuit ends a circuit this node routed: the router unroutes it now.
func (s *Server) deleteCircuit(c *call) error {
	id := c.param("id")
	if s.DataPlane == nil {
		return notFound("circuit", id)
	}
	if err := s.DataPlane.EndCircuit(id); err != nil {
		if errors.Is(err, dataplane.ErrNoCircuit) {
			return notFound("circuit", id)
		}
		return err
	}
	c.write(http.StatusOK, map[string]any{"data": map[string]any{}, "meta": meta(nil)})
	return nil
}

var linkFields = store.BaseFields(map[string]filter.Field{
	"sourceRouterId": localField(func(l dataplane.Link) string { return l.SrcRouterID }),
	"destRouterId":   localField(func(l dataplane.Link) string { return l.DstRouterID }),
	"protocol":       localField(func(l dataplane.Link) string { return l.Protocol }),
})

// linkView is a router link as OpenZiti's fabric API shows it: its two
// routers, its state (Connected while both are connected to this node, else
// Unusable), whether an operator took it out of paths (down), its cost, each
// end's latency in nanoseconds, and its connections as its routers last
// reported them (source: the reporting router's address, dest: the far one).
func (s *Server) linkView(c *call, l dataplane.Link) map[string]any {
	state := "Connected"
	if s.DataPlane == nil || !s.DataPlane.LinkUsable(l) {
		state = "Unusable"
	}
	conns := make([]any, 0, len(l.Conns))
	for _, cn := range l.Conns {
		conns = append(conns, map[string]any{"type": cn.Type, "source": cn.LocalAddr, "dest": cn.RemoteAddr})
	}
	return map[string]any{
		"_links": selfLinks("links", l.ID), "id": l.ID, "createdAt": l.ReportedAt, "updatedAt": l.ReportedAt,
		"sourceRouter": s.routerRef(c, l.SrcRouterID), "destRouter": s.routerRef(c, l.DstRouterID),
		"protocol": l.Protocol, "dialAddress": l.DialAddress, "iteration": l.Iteration, "state": state, "down": l.Down,
		"cost": l.Cost(), "staticCost": l.StaticCost, "sourceLatency": l.SrcLatency.Nanoseconds(), "destLatency": l.DstLatency.Nanoseconds(),
		"connections": conns,
	}
}

func (s *Server) linkList() []dataplane.Link {
	if s.DataPlane == nil {
		return nil
	}
	return s.DataPlane.Links()
}

// listLinks lists the router links reported to this node.
func (s *Server) listLinks(c *call) error {
	return listLocal(c, linkFields, s.linkList(), linkID, linkAt, func(l dataplane.Link) any { return s.linkView(c, l) })
}

func (s *Server) getLink(c *call) error {
	return getLocal(c, "link", s.linkList(), linkID, func(l dataplane.Link) any { return s.linkView(c, l) })
}

// linkPatchFields are what PATCH /links/{id} changes: the static cost added to
// the link's measured latency in paths, and down (out of paths).
var linkPatchFields = []field{
	{name: "staticCost", kind: fInt, min: 0, max: maxInt32,
		ui: fieldUI{help: "added to the latency measured at each end (ms) in the link's cost; 1 when the link came up"}},
	{name: "down", kind: fBool, ui: fieldUI{help: "out of paths: circuits over it move to other paths"}},
}

// routeBodies are the request bodies of the operations that are not a
// resource's create, PUT or PATCH, for the OpenAPI document.
var routeBodies = map[string][]field{
	http.MethodPatch + " /links/:id": linkPatchFields,
}

// patchLink changes a link's static cost or takes it out of paths or back,
// on this node and on the other members (controller/links.go): 200 with
// what each member did ("nodes": node id → "changed", or why not), 404 when
// this node knows no such link, 400 for a bad value or a field a link does
// not change (the body is checked first, as OpenZiti's controller does).
func (s *Server) patchLink(c *call) error {
	raw, err := decodeObject(c.r)
	if err != nil {
		return err
	}
	for k := range raw {
		if !slices.ContainsFunc(linkPatchFields, func(f field) bool { return f.name == k }) {
			return invalidField(k, "is not a field a link changes: staticCost and down are", nil)
		}
	}
	p, err := parseFields(raw, linkPatchFields, modePatch)
	if err != nil {
		return err
	}
	var change dataplane.LinkChange
	if v, ok := p.values["staticCost"].(int64); ok {
		cost := int(v)
		change.StaticCost = &cost
	}
	if v, ok := p.values["down"].(bool); ok {
		change.Down = &v
	}
	id := c.param("id")
	var nodes map[string]string
	if s.DataPlane != nil {
		switch {
		case change != (dataplane.LinkChange{}):
			nodes, err = s.DataPlane.ChangeLinkEverywhere(c.r.Context(), id, change)
		case !slices.ContainsFunc(s.DataPlane.Links(), func(l dataplane.Link) bool { return l.ID == id }):
			err = dataplane.ErrNoLink // nothing to change: only whether the link is known
		}
	}
	switch {
	case s.DataPlane == nil || errors.Is(err, dataplane.ErrNoLink):
		return notFound("link", id)
	case err != nil:
		return err
	}
	if nodes == nil {
		nodes = map[string]string{}
	}
	c.write(http.StatusOK, map[string]any{"data": map[string]any{"nodes": nodes}, "meta": meta(nil)})
	return nil
}

// deleteLink forgets a link and has its routers close it (they dial it
// again), as OpenZiti's controller does; a link this node does not have is
// closed on every connected router (a router may hold a link no node
// lists), so the answer is 200 either way. Every node then drops the link,
// as the routers report the fault to each.
func (s *Server) deleteLink(c *call) error {
	if s.DataPlane != nil {
		s.DataPlane.RemoveLink(c.param("id"))
	}
	c.write(http.StatusOK, map[string]any{"data": map[string]any{}, "meta": meta(nil)})
	return nil
}
