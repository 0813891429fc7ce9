package fsm

import "edgectl/store"

// Session commands.
const (
	CmdSessionCreate CommandType = "session.create"
	CmdSessionDelete CommandType = "session.delete"
	CmdFailedRequest CommandType = "failedRequest.record"
)

func registerClientSessions(f *FSM) {
	on(f, CmdSessionCreate, func(tx *store.Tx, s *store.Session) (any, error) {
		return nil, tx.CreateSession(s)
	})
	on(f, CmdSessionDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteSession(p.ID)
	})
	on(f, CmdFailedRequest, func(tx *store.Tx, r *store.FailedServiceRequest) (any, error) {
		return nil, tx.RecordFailedRequest(r)
	})
}
