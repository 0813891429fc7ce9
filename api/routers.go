package api

import (
	"edgectl/dataplane"
	"edgectl/fsm"
	"edgectl/store"
)

// routerFields are the writable fields of a transit router.
var routerFields = []field{
	{name: "name", kind: fString, required: true, min: 1, max: 255},
	{name: "cost", kind: fInt, nullable: true, min: 0, max: 65535, def: 0},
	{name: "disabled", kind: fBool, nullable: true, def: false},
	{name: "noTraversal", kind: fBool, nullable: true, def: false},
	tagsField,
}

// createRouter serves both /routers and /transit-routers; path is the
// collection the request came through, for the links of the answer.
func (s *Server) createRouter(path string) func(c *call) error {
	return func(c *call) error {
		r := &store.Router{}
		_, err := s.newRecord(c, r, routerFields, nil)
		if err != nil {
			return err
		}
		if r.RouterEnrollment, err = s.newRouterEnrollment(c.tx, r.ID); err != nil {
			return err
		}
		if _, err := s.Writer.Do(c.r.Context(), fsm.CmdRouterCreate, r); err != nil {
			return err
		}
		c.created(path, r.ID)
		return nil
	}
}

func (s *Server) updateRouter(m mode) func(c *call) error {
	return s.updateHandler(store.KindRouter, routerFields, fsm.CmdRouterUpdate, m, nil)
}

// deleteRouter deletes a transit router with its terminators.
func (s *Server) deleteRouter(c *call) error { return s.deleteHandler(fsm.CmdRouterDeleteAll)(c) }

func (s *Server) getRouter(path string) func(c *call) error {
	return func(c *call) error {
		r, err := store.GetAs[*store.Router](c.tx, store.KindRouter, c.param("id"))
		if err != nil {
			return err
		}
		c.ok(routerView(r, path, s.routerLive(r.ID)))
		return nil
	}
}

func (s *Server) listRouters(path string) func(c *call) error {
	return func(c *call) error {
		return c.listKind(store.KindRouter, false, func(r store.Record) any { return routerView(r.(*store.Router), path, s.routerLive(r.GetID())) })
	}
}

// routerView is the Management view of a transit router.
func routerView(r *store.Router, path string, live dataplane.Status) map[string]any {
	return map[string]any{
		"_links":                selfLinks(path, r.ID),
		"id":                    r.ID,
		"createdAt":             r.CreatedAt,
		"updatedAt":             r.UpdatedAt,
		"tags":                  tagsOrEmpty(r.Tags),
		"name":                  r.Name,
		"cost":                  r.Cost,
		"disabled":              r.Disabled,
		"noTraversal":           r.NoTraversal,
		"isOnline":              live.Online,
		"isVerified":            r.IsVerified,
		"fingerprint":           r.Fingerprint,
		"unverifiedCertPem":     r.UnverifiedCertPem,
		"unverifiedFingerprint": r.UnverifiedFingerprint,
		"enrollmentToken":       r.EnrollmentToken,
		"enrollmentJwt":         r.EnrollmentJwt,
		"enrollmentCreatedAt":   r.EnrollmentCreatedAt,
		"enrollmentExpiresAt":   r.EnrollmentExpiresAt,
	}
}

// routerRoutes are the operations of edge routers, transit routers (at two
// paths), posture checks and their types, and the role attribute lists.
// It also registers the views of these kinds for the relation lists.
// routerRoutes are the transit router operations, served at /routers and,
// by the name OpenZiti uses, at /transit-routers.
func (s *Server) routerRoutes() []route {
	var rs []route
	for _, p := range []struct{ path, suffix string }{{"routers", "Router"}, {"transit-routers", "TransitRouter"}} {
		base := "/" + p.path
		rs = append(rs,
			route{managementAPI, get, base, "list" + p.suffix + "s", "Router", admin, s.listRouters(p.path)},
			route{managementAPI, post, base, "create" + p.suffix, "Router", admin, s.createRouter(p.path)},
			route{managementAPI, get, base + "/:id", "detail" + p.suffix, "Router", admin, s.getRouter(p.path)},
			route{managementAPI, put, base + "/:id", "update" + p.suffix, "Router", admin, s.updateRouter(modePut)},
			route{managementAPI, patch, base + "/:id", "patch" + p.suffix, "Router", admin, s.updateRouter(modePatch)},
			route{managementAPI, del, base + "/:id", "delete" + p.suffix, "Router", admin, s.deleteRouter},
		)
	}
	return rs
}
