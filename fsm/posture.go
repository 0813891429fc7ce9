package fsm

import "edgectl/store"

// Posture commands.
const (
	CmdPostureResponses CommandType = "posture.responses"
	CmdPostureSweep     CommandType = "posture.sweep"
)

// PostureResponses is the payload of CmdPostureResponses.
type PostureResponses struct {
	APISessionID string                  `json:"apiSessionId"`
	Responses    []store.PostureResponse `json:"responses"`
}

// PostureSweep is the payload of CmdPostureSweep; its time is the command's.
type PostureSweep struct{}

func registerPosture(f *FSM) {
	on(f, CmdPostureResponses, func(tx *store.Tx, p *PostureResponses) (any, error) {
		return nil, tx.ApplyPostureResponses(p.APISessionID, p.Responses)
	})
	on(f, CmdPostureSweep, func(tx *store.Tx, _ *PostureSweep) (any, error) {
		return nil, tx.SweepPosture()
	})
}
