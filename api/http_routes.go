package api

import (
	"net/http"
	"strings"

	"edgectl/store"
)

// routeTable lists every operation this node serves: the routes of every
// resource, then the operations that are not a resource's. It drives the
// router, the OpenAPI documents and the route tests alike.
func (s *Server) routeTable() []route {
	var all []route
	for _, r := range s.resources {
		all = append(all, r.routes()...)
	}
	for _, ops := range []func() []route{
		s.infoRoutes,
		s.authenticateRoutes,
		s.currentIdentityRoutes,
		s.mfaRoutes,
		s.enrollRoutes,
		s.sessionCertRoutes,
		s.certExtendRoutes,
		s.clientServiceRoutes,
		s.postureDataRoutes,
		s.roleAttributeRoutes,
		s.serviceConfigRoutes,
		s.relationRoutes,
		s.clusterRoutes,
		s.joinRoutes,
		s.eventRoutes,
		s.dataPlaneEventRoutes,
		s.fabricRoutes,
		s.sessionKeyRoutes,
	} {
		all = append(all, ops()...)
	}
	return s.ofExistingRecords(all)
}

// ofExistingRecords makes every GET below a record's path on any API
// (/{resource}/:id/{relation}..., a related list such as
// /services/:id/configs) answer 404 NOT_FOUND, before its handler runs, when
// the record does not exist in the call's transaction: the contract's answer
// for an unknown id (conventions §3). OpenZiti's controller answers most of
// them 200 with an empty list instead (docs/openziti.md). Those handlers
// take the record as existing.
func (s *Server) ofExistingRecords(all []route) []route {
	kinds := map[string]*store.Kind{}
	for _, r := range s.resources {
		kinds[r.path] = r.kind
	}
	for i, rt := range all {
		segs := strings.SplitN(strings.TrimPrefix(rt.path, "/"), "/", 3)
		k := kinds[segs[0]]
		if rt.method != get || len(segs) < 3 || segs[1] != ":id" || k == nil {
			continue
		}
		h := rt.h
		all[i].h = func(c *call) error {
			if id := c.param("id"); !c.tx.Exists(k, id) {
				return notFound(k.Entity, id)
			}
			return h(c)
		}
	}
	return all
}

// Methods, short, for the route tables.
const (
	get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
)

// crudOps are the handlers of a resource's standard Management operations;
// an operation whose handler is nil is not served.
type crudOps struct {
	list, create, detail, del func(c *call) error
	update                    func(m mode) func(c *call) error // PUT and PATCH
}

// crudRoutes are the standard Management operations of the resource at
// /path, with the operationIds OpenZiti gives them: list<Plural>,
// create<Singular>, detail<Singular>, update<Singular> (PUT),
// patch<Singular> (PATCH) and delete<Singular>. All need an admin.
func crudRoutes(path, singular, plural, tag string, ops crudOps) []route {
	var rs []route
	add := func(method, p, op string, h func(c *call) error) {
		if h != nil {
			rs = append(rs, route{managementAPI, method, p, op, tag, admin, h})
		}
	}
	one := path + "/:id"
	add(get, path, "list"+plural, ops.list)
	add(post, path, "create"+singular, ops.create)
	add(get, one, "detail"+singular, ops.detail)
	if ops.update != nil {
		add(put, one, "update"+singular, ops.update(modePut))
		add(patch, one, "patch"+singular, ops.update(modePatch))
	}
	add(del, one, "delete"+singular, ops.del)
	return rs
}
