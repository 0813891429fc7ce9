package fsm

import (
	"time"

	"edgectl/store"
)

// Commands of edge routers and transit routers. Added, never renamed or reused.
var (
	CmdEdgeRouterCreate   = command("edgeRouter.create", 1)
	CmdEdgeRouterUpdate   = command("edgeRouter.update", 1)
	CmdEdgeRouterDelete   = command("edgeRouter.delete", 1)
	CmdEdgeRouterReEnroll = command("edgeRouter.reEnroll", 1)
	CmdRouterCreate       = command("router.create", 1)
	CmdRouterUpdate       = command("router.update", 1)
	CmdRouterDelete       = command("router.delete", 1)
	// CmdDataPlaneKeysEnsure stores the cluster's data-plane keys once (command version 6).
	CmdDataPlaneKeysEnsure = command("dataPlane.keysEnsure", 6)
	// CmdRouterReport records what a connected router reported of itself: its
	// hostname and its edge listeners (command version 6).
	CmdRouterReport = command("router.report", 6)
	// CmdTerminatorCreateByRouter, CmdTerminatorUpdateByRouter and
	// CmdTerminatorsDeleteByRouter are the terminators routers make, change
	// and remove for the identities they host (command version 6).
	CmdTerminatorCreateByRouter  = command("terminator.createByRouter", 6)
	CmdTerminatorUpdateByRouter  = command("terminator.updateByRouter", 6)
	CmdTerminatorsDeleteByRouter = command("terminators.deleteByRouter", 6)
	// CmdEdgeRouterDeleteAll and CmdRouterDeleteAll delete a router with its
	// terminators (command version 6; the deletes of earlier releases
	// refuse while terminators use the router).
	CmdEdgeRouterDeleteAll = command("edgeRouter.deleteWithTerminators", 6)
	CmdRouterDeleteAll     = command("router.deleteWithTerminators", 6)
	// CmdSessionKeyRotate makes a new service session signing key current
	// (command version 7); its result is the ids of the sessions it ended.
	CmdSessionKeyRotate = command("dataPlane.sessionKeyRotate", 7)
	// CmdEdgeRouterCreateWithIdentity, CmdEdgeRouterUpdateWithIdentity and
	// CmdEdgeRouterDeleteWithIdentity create, change and delete an edge
	// router together with the identity and system edge router policy of
	// its tunneler (command version 9; docs/openziti.md, "Router
	// identities"). The delete takes the router's terminators too.
	CmdEdgeRouterCreateWithIdentity = command("edgeRouter.createWithIdentity", 9)
	CmdEdgeRouterUpdateWithIdentity = command("edgeRouter.updateWithIdentity", 9)
	CmdEdgeRouterDeleteWithIdentity = command("edgeRouter.deleteWithIdentity", 9)
	// CmdRouterIdentitiesEnsure gives the tunneler-enabled edge routers of
	// an upgraded cluster their identities (command version 9; its payload
	// is the time, its result the routers' ids).
	CmdRouterIdentitiesEnsure = command("edgeRouter.identitiesEnsure", 9)
)

// At is the payload of commands whose only input is the time.
type At struct {
	At time.Time `json:"at"`
}

// RouterTerminator is the payload of CmdTerminatorCreateByRouter.
type RouterTerminator struct {
	Terminator *store.Terminator `json:"terminator"`
	At         time.Time         `json:"at"`
}

// RouterTerminatorUpdate is the payload of CmdTerminatorUpdateByRouter: nil
// fields are not changed.
type RouterTerminatorUpdate struct {
	RouterID   string    `json:"routerId"`
	ID         string    `json:"id"`
	Cost       *int      `json:"cost,omitempty"`
	Precedence *string   `json:"precedence,omitempty"`
	At         time.Time `json:"at"`
}

// RouterTerminatorsDelete is the payload of CmdTerminatorsDeleteByRouter.
type RouterTerminatorsDelete struct {
	RouterID string   `json:"routerId"`
	IDs      []string `json:"ids"`
}

// DataPlaneKeys is the payload of CmdDataPlaneKeysEnsure.
type DataPlaneKeys struct {
	Keys store.DataPlaneKeys `json:"keys"`
	At   time.Time           `json:"at"`
}

// RouterReport is the payload of CmdRouterReport.
type RouterReport struct {
	ID                 string            `json:"id"`
	Fingerprint        string            `json:"fingerprint"`
	Hostname           string            `json:"hostname"`
	SupportedProtocols map[string]string `json:"supportedProtocols"`
}

// ReEnroll is the payload of CmdEdgeRouterReEnroll: the fresh enrollment,
// made (token, JWT, times) by the API before proposing.
type ReEnroll struct {
	ID         string                 `json:"id"`
	Enrollment store.RouterEnrollment `json:"enrollment"`
	At         time.Time              `json:"at"`
}

// registerRouters registers the commands of edge routers and transit routers.
func registerRouters(f *FSM) {
	on(f, CmdEdgeRouterCreate, func(tx *store.Tx, r *store.EdgeRouter) (any, error) {
		return nil, tx.CreateEdgeRouter(r)
	})
	on(f, CmdEdgeRouterUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateEdgeRouter(p.ID, p.Patch, p.At)
	})
	on(f, CmdEdgeRouterDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteEdgeRouter(p.ID)
	})
	on(f, CmdEdgeRouterReEnroll, func(tx *store.Tx, p *ReEnroll) (any, error) {
		return nil, tx.ReEnrollEdgeRouter(p.ID, p.Enrollment, p.At)
	})
	on(f, CmdEdgeRouterCreateWithIdentity, func(tx *store.Tx, r *store.EdgeRouter) (any, error) {
		return nil, tx.CreateEdgeRouterWithIdentity(r)
	})
	on(f, CmdEdgeRouterUpdateWithIdentity, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateEdgeRouterWithIdentity(p.ID, p.Patch, p.At)
	})
	on(f, CmdEdgeRouterDeleteWithIdentity, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteEdgeRouterWithIdentity(p.ID)
	})
	on(f, CmdRouterIdentitiesEnsure, func(tx *store.Tx, p *At) (any, error) {
		return tx.EnsureRouterIdentities(p.At)
	})
	on(f, CmdRouterCreate, func(tx *store.Tx, r *store.Router) (any, error) {
		return nil, tx.CreateRouter(r)
	})
	on(f, CmdRouterUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateRouter(p.ID, p.Patch, p.At)
	})
	on(f, CmdRouterDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteRouter(p.ID)
	})
	on(f, CmdEdgeRouterDeleteAll, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteRouterWithTerminators(store.KindEdgeRouter, p.ID)
	})
	on(f, CmdRouterDeleteAll, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteRouterWithTerminators(store.KindRouter, p.ID)
	})
	on(f, CmdTerminatorCreateByRouter, func(tx *store.Tx, p *RouterTerminator) (any, error) {
		if p.Terminator == nil {
			return nil, store.Invalid("terminator", "is required", nil)
		}
		return nil, tx.CreateRouterTerminator(p.Terminator, p.At)
	})
	on(f, CmdTerminatorUpdateByRouter, func(tx *store.Tx, p *RouterTerminatorUpdate) (any, error) {
		return nil, tx.UpdateRouterTerminator(p.RouterID, p.ID, p.Cost, p.Precedence, p.At)
	})
	on(f, CmdTerminatorsDeleteByRouter, func(tx *store.Tx, p *RouterTerminatorsDelete) (any, error) {
		n, err := tx.DeleteRouterTerminators(p.RouterID, p.IDs)
		return n, err
	})
	on(f, CmdDataPlaneKeysEnsure, func(tx *store.Tx, p *DataPlaneKeys) (any, error) {
		return nil, tx.EnsureDataPlaneKeys(&p.Keys, p.At)
	})
	on(f, CmdSessionKeyRotate, func(tx *store.Tx, p *store.SessionKeyRotation) (any, error) {
		return tx.RotateSessionKey(p)
	})
	on(f, CmdRouterReport, func(tx *store.Tx, p *RouterReport) (any, error) {
		return nil, tx.ReportEdgeRouter(p.ID, p.Fingerprint, p.Hostname, p.SupportedProtocols)
	})
}
