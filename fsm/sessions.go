package fsm

import "edgectl/store"

// Session commands.
const (
	CmdSessionCreate CommandType = "session.create"
	CmdSessionDelete CommandType = "session.delete"
)

func registerClientSessions(f *FSM) {
	on(f, CmdSessionCreate, func(tx *store.Tx, s *store.Session) (any, error) {
		return nil, tx.CreateSession(s)
	})
	on(f, CmdSessionDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteSession(p.ID)
	})
}
