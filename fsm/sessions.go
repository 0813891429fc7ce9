package fsm

import "edgectl/store"

// Session commands.
var (
	CmdSessionCreate = command("session.create", 1)
	CmdSessionDelete = command("session.delete", 1)
	CmdFailedRequest = command("failedRequest.record", 1)
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
