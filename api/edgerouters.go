package api

import (
	"context"
	"edgectl/dataplane"
	"edgectl/dataplane/fabricmgmt"
	"edgectl/fsm"
	"edgectl/store"
	"errors"
	"net/http"
	"time"
)

// routerEnrollMethod is the enrollment method of edge and transit routers:
// a one-time token (conventions §10 lists it as "erott").
const routerEnrollMethod = "erott"

// edgeRouterFields are the writable fields of an edge router.
var edgeRouterFields = []field{
	{name: "name", kind: fString, required: true, min: 1, max: 255},
	{name: "cost", kind: fInt, nullable: true, min: 0, max: 65535, def: 0},
	{name: "disabled", kind: fBool, nullable: true, def: false},
	{name: "isTunnelerEnabled", kind: fBool, def: false},
	{name: "noTraversal", kind: fBool, nullable: true, def: false},
	{name: "roleAttributes", kind: fStringList, nullable: true, min: 1, max: 255},
	{name: "appData", kind: fObject, nullable: true},
	tagsField,
}

// newRouterEnrollment makes the one-time enrollment of an edge or transit
// router. It reuses the identity enrollment maker for the token and the
// signed JWT (subject: the router id); only those parts are kept.
func (s *Server) newRouterEnrollment(tx *store.Tx, routerID string) (store.RouterEnrollment, error) {
	e, err := s.newEnrollment(tx, routerID, routerEnrollMethod, nil, nil, s.now().Add(enrollmentDuration))
	if err != nil {
		return store.RouterEnrollment{}, err
	}
	return store.RouterEnrollment{
		EnrollmentToken: &e.Token, EnrollmentJwt: &e.JWT,
		EnrollmentCreatedAt: &e.CreatedAt, EnrollmentExpiresAt: &e.ExpiresAt,
	}, nil
}

func (s *Server) createEdgeRouter(c *call) error {
	r := &store.EdgeRouter{}
	_, err := s.newRecord(c, r, edgeRouterFields, nil)
	if err != nil {
		return err
	}
	if r.RouterEnrollment, err = s.newRouterEnrollment(c.tx, r.ID); err != nil {
		return err
	}
	if err := s.routerWrite(c.r.Context(), fsm.CmdEdgeRouterCreateWithIdentity, fsm.CmdEdgeRouterCreate, r); err != nil {
		return err
	}
	c.created("edge-routers", r.ID)
	return nil
}

func (s *Server) updateEdgeRouter(m mode) func(c *call) error {
	return func(c *call) error {
		id := c.param("id")
		if !c.tx.Exists(store.KindEdgeRouter, id) {
			return notFound(store.KindEdgeRouter.Entity, id)
		}
		p, err := parseBody(c, edgeRouterFields, m)
		if err != nil {
			return err
		}
		return s.routerWrite(c.r.Context(), fsm.CmdEdgeRouterUpdateWithIdentity, fsm.CmdEdgeRouterUpdate,
			fsm.Update{ID: id, Patch: p.patch, At: s.now()})
	}
}

// deleteEdgeRouter deletes an edge router with its terminators and its
// tunneler's identity.
func (s *Server) deleteEdgeRouter(c *call) error {
	return s.routerWrite(c.r.Context(), fsm.CmdEdgeRouterDeleteWithIdentity, fsm.CmdEdgeRouterDeleteAll, fsm.Delete{ID: c.param("id")})
}

// routerWrite proposes an edge router's write with its identity (cmd), or,
// while some member cannot apply that command yet (a cluster mid-upgrade),
// the command of earlier releases (old). The two do the same there: no
// router identity exists before every member applies the commands that
// make them, and the routers whose tunneler an older command enabled get
// their identities from the upgrade step once the upgrade is done
// (docs/openziti.md, "Router identities").
func (s *Server) routerWrite(ctx context.Context, cmd, old fsm.CommandType, payload any) error {
	_, err := s.Writer.Do(ctx, cmd, payload)
	var ve *fsm.VersionError
	if errors.As(err, &ve) {
		_, err = s.Writer.Do(ctx, old, payload)
	}
	return err
}

// reEnrollEdgeRouter drops the router's certificate and issues a fresh
// enrollment token and JWT, replacing an outstanding one.
func (s *Server) reEnrollEdgeRouter(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindEdgeRouter, id) {
		return notFound("edge router", id)
	}
	e, err := s.newRouterEnrollment(c.tx, id)
	if err != nil {
		return err
	}
	_, err = s.Writer.Do(c.r.Context(), fsm.CmdEdgeRouterReEnroll, fsm.ReEnroll{ID: id, Enrollment: e, At: s.now()})
	return err
}

// validateEdgeRouterDataModel has a router connected to this node compare
// its data model with the node's (docs/api-routers.md): 200 with both
// entity counts and the differences (none: in sync), 409 when the router
// is not connected to this node.
func (s *Server) validateEdgeRouterDataModel(c *call) error {
	id := c.param("id")
	if !c.tx.Exists(store.KindEdgeRouter, id) {
		return notFound("edge router", id)
	}
	if s.DataPlane == nil {
		return &apiError{status: http.StatusConflict, code: "ROUTER_NOT_CONNECTED", message: fabricmgmt.ErrNotConnected.Error()}
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), 30*time.Second)
	defer cancel()
	rep, err := s.DataPlane.ValidateDataModel(ctx, id)
	switch {
	case errors.Is(err, fabricmgmt.ErrNotConnected):
		return &apiError{status: http.StatusConflict, code: "ROUTER_NOT_CONNECTED", message: err.Error()}
	case err != nil:
		return &apiError{status: http.StatusGatewayTimeout, code: "ROUTER_DID_NOT_ANSWER", message: "the router did not answer: " + err.Error()}
	}
	c.ok(rep)
	return nil
}

func (s *Server) getEdgeRouter(c *call) error {
	r, err := store.GetAs[*store.EdgeRouter](c.tx, store.KindEdgeRouter, c.param("id"))
	if err != nil {
		return err
	}
	c.ok(edgeRouterView(r, s.routerLive(r.ID)))
	return nil
}

func (s *Server) listEdgeRouters(c *call) error {
	return c.listKind(store.KindEdgeRouter, true, func(r store.Record) any { return edgeRouterView(r.(*store.EdgeRouter), s.routerLive(r.GetID())) })
}

// routerLive is what this node knows of router id's control channel:
// whether it is connected here, and how far its sync went.
func (s *Server) routerLive(id string) dataplane.Status {
	if s.DataPlane == nil {
		return dataplane.Status{SyncStatus: dataplane.SyncUnknown}
	}
	return s.DataPlane.Status(id)
}

// edgeRouterView is the Management view of an edge router. The certificate
// PEM is not part of it; the fingerprint is.
func edgeRouterView(r *store.EdgeRouter, live dataplane.Status) map[string]any {
	links := selfLinks("edge-routers", r.ID)
	for _, rel := range []string{"edge-router-policies", "service-edge-router-policies", "identities", "services"} {
		links[rel] = map[string]string{"href": "./edge-routers/" + r.ID + "/" + rel}
	}
	return map[string]any{
		"_links":              links,
		"id":                  r.ID,
		"createdAt":           r.CreatedAt,
		"updatedAt":           r.UpdatedAt,
		"tags":                tagsOrEmpty(r.Tags),
		"name":                r.Name,
		"appData":             objOrEmpty(r.AppData),
		"cost":                r.Cost,
		"disabled":            r.Disabled,
		"noTraversal":         r.NoTraversal,
		"isTunnelerEnabled":   r.IsTunnelerEnabled,
		"roleAttributes":      nonNilStrings(r.RoleAttributes),
		"hostname":            r.Hostname,
		"supportedProtocols":  strMapOrEmpty(r.SupportedProtocols),
		"isOnline":            live.Online,
		"syncStatus":          live.SyncStatus,
		"isVerified":          r.IsVerified,
		"fingerprint":         r.Fingerprint,
		"enrollmentToken":     r.EnrollmentToken,
		"enrollmentJwt":       r.EnrollmentJwt,
		"enrollmentCreatedAt": r.EnrollmentCreatedAt,
		"enrollmentExpiresAt": r.EnrollmentExpiresAt,
	}
}

// edgeRouterRoutes are the edge router operations.
func (s *Server) edgeRouterRoutes() []route {
	return append(crudRoutes("/edge-routers", "EdgeRouter", "EdgeRouters", "Edge Router", crudOps{list: s.listEdgeRouters, create: s.createEdgeRouter, detail: s.getEdgeRouter, update: s.updateEdgeRouter, del: s.deleteEdgeRouter}),
		route{managementAPI, post, "/edge-routers/:id/re-enroll", "reEnrollEdgeRouter", "Edge Router", admin, s.reEnrollEdgeRouter},
		route{managementAPI, post, "/edge-routers/:id/validate-data-model", "validateEdgeRouterDataModel", "Edge Router", admin, s.validateEdgeRouterDataModel},
	)
}
