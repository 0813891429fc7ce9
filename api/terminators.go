package api

import (
	"edgectl/fsm"
	"edgectl/store"
)

// terminatorFields are the writable fields of a terminator.
var terminatorFields = []field{
	{name: "service", to: "serviceId", kind: fString, required: true, min: 1, ref: "services"},
	{name: "router", to: "routerId", kind: fString, required: true, min: 1, ref: "routers"},
	{name: "binding", kind: fString, required: true, min: 1, max: 255},
	{name: "address", kind: fString, required: true, min: 1, max: 4096},
	{name: "identity", kind: fString, nullable: true, max: 255, def: ""},
	{name: "identitySecret", kind: fString, nullable: true, max: 4096, def: ""},
	{name: "cost", kind: fInt, nullable: true, min: 0, max: 65535, def: 0},
	{name: "precedence", kind: fString, nullable: true, enum: precedences, def: "default"},
	{name: "hostId", kind: fString, nullable: true, max: 255, def: ""},
	tagsField,
}

func (s *Server) createTerminator(c *call) error {
	return s.createHandler(store.KindTerminator, "terminators", terminatorFields, fsm.CmdTerminatorCreate, nil)(c)
}

func (s *Server) updateTerminator(m mode) func(c *call) error {
	return s.updateHandler(store.KindTerminator, terminatorFields, fsm.CmdTerminatorUpdate, m, nil)
}

func (s *Server) deleteTerminator(c *call) error { return s.deleteHandler(fsm.CmdTerminatorDelete)(c) }

func (s *Server) getTerminator(c *call) error {
	t, err := store.GetAs[*store.Terminator](c.tx, store.KindTerminator, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(s.terminatorView(c.tx, t, c.api))
	return nil
}

func (s *Server) listTerminators(c *call) error {
	return c.listKind(store.KindTerminator, false, func(r store.Record) any { return s.terminatorView(c.tx, r.(*store.Terminator), c.api) })
}

// terminatorView is a terminator without its identity secret, as the API
// on names it. The router reference points at /edge-routers or /routers,
// wherever the router is; the Fabric API lists both at /routers and names
// them so (routerRef).
func (s *Server) terminatorView(tx *store.Tx, t *store.Terminator, on apiKind) map[string]any {
	rk, rpath := store.KindRouter, "routers"
	if tx.TerminatorRouterKind(t.RouterID) == store.KindEdgeRouter {
		rk = store.KindEdgeRouter
		if on != fabricAPI {
			rpath = "edge-routers"
		}
	}
	return map[string]any{
		"_links":    selfLinks("terminators", t.ID),
		"id":        t.ID,
		"createdAt": t.CreatedAt,
		"updatedAt": t.UpdatedAt,
		"tags":      tagsOrEmpty(t.Tags),
		"service":   s.entityRef(tx, store.KindService, "services", t.ServiceID),
		"serviceId": t.ServiceID,
		"router":    s.entityRef(tx, rk, rpath, t.RouterID),
		"routerId":  t.RouterID,
		"binding":   t.Binding,
		"address":   t.Address,
		"identity":  t.Identity,
		"cost":      t.Cost,
		// dynamicCost is the cost the routers' load adds to; without router
		// data it is the static cost (OpenZiti's clients read it).
		"dynamicCost": t.Cost,
		"precedence":  t.Precedence,
		"hostId":      t.HostID,
	}
}

// terminatorRoutes are the terminator operations.
func (s *Server) terminatorRoutes() []route {
	return crudRoutes("/terminators", "Terminator", "Terminators", "Terminator", crudOps{list: s.listTerminators, create: s.createTerminator, detail: s.getTerminator, update: s.updateTerminator, del: s.deleteTerminator})
}
