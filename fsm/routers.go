package fsm

import (
	"time"

	"edgectl/store"
)

// Commands of edge routers and transit routers. Added, never renamed or reused.
const (
	CmdEdgeRouterCreate   CommandType = "edgeRouter.create"
	CmdEdgeRouterUpdate   CommandType = "edgeRouter.update"
	CmdEdgeRouterDelete   CommandType = "edgeRouter.delete"
	CmdEdgeRouterReEnroll CommandType = "edgeRouter.reEnroll"
	CmdRouterCreate       CommandType = "router.create"
	CmdRouterUpdate       CommandType = "router.update"
	CmdRouterDelete       CommandType = "router.delete"
)

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
	on(f, CmdRouterCreate, func(tx *store.Tx, r *store.Router) (any, error) {
		return nil, tx.CreateRouter(r)
	})
	on(f, CmdRouterUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdateRouter(p.ID, p.Patch, p.At)
	})
	on(f, CmdRouterDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteRouter(p.ID)
	})
}
