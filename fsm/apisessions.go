package fsm

import "edgectl/store"

// API session commands. Added, never renamed or reused.
var (
	CmdAPISessionCreate  = command("apiSession.create", 1)
	CmdAPISessionsTouch  = command("apiSession.touch", 1)
	CmdAPISessionsDelete = command("apiSession.delete", 1)
)

// Touch is the payload of CmdAPISessionsTouch.
type Touch struct {
	Batch []store.Activity `json:"batch"`
}

// DeleteMany is the payload of commands that remove several records.
type DeleteMany struct {
	IDs []string `json:"ids"`
}

func registerAPISessions(f *FSM) {
	on(f, CmdAPISessionCreate, func(tx *store.Tx, s *store.APISession) (any, error) {
		return nil, tx.CreateAPISession(s)
	})
	on(f, CmdAPISessionsTouch, func(tx *store.Tx, p *Touch) (any, error) {
		return nil, tx.TouchAPISessions(p.Batch)
	})
	on(f, CmdAPISessionsDelete, func(tx *store.Tx, p *DeleteMany) (any, error) {
		return nil, tx.DeleteAPISessions(p.IDs)
	})
}
