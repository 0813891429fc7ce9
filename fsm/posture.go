package fsm

import "edgectl/store"

// Posture commands: the posture checks themselves, the responses clients
// send and the sweep of verdicts that change with time. Added, never renamed or reused.
var (
	CmdPostureCheckCreate = command("postureCheck.create", 1)
	CmdPostureCheckUpdate = command("postureCheck.update", 1)
	CmdPostureCheckDelete = command("postureCheck.delete", 1)
	CmdPostureResponses   = command("posture.responses", 1)
	CmdPostureSweep       = command("posture.sweep", 1)
)

// PostureResponses is the payload of CmdPostureResponses.
type PostureResponses struct {
	APISessionID string                  `json:"apiSessionId"`
	Responses    []store.PostureResponse `json:"responses"`
}

// PostureSweep is the payload of CmdPostureSweep; its time is the command's.
type PostureSweep struct{}

func registerPosture(f *FSM) {
	on(f, CmdPostureCheckCreate, func(tx *store.Tx, c *store.PostureCheck) (any, error) {
		return nil, tx.CreatePostureCheck(c)
	})
	on(f, CmdPostureCheckUpdate, func(tx *store.Tx, p *Update) (any, error) {
		return nil, tx.UpdatePostureCheck(p.ID, p.Patch, p.At)
	})
	on(f, CmdPostureCheckDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeletePostureCheck(p.ID)
	})
	on(f, CmdPostureResponses, func(tx *store.Tx, p *PostureResponses) (any, error) {
		return nil, tx.ApplyPostureResponses(p.APISessionID, p.Responses)
	})
	on(f, CmdPostureSweep, func(tx *store.Tx, _ *PostureSweep) (any, error) {
		return nil, tx.SweepPosture()
	})
}
