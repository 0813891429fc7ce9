package fsm

import "edgectl/store"

// CmdIntegrityFix repairs the model on every node alike.
var CmdIntegrityFix = command("integrity.fix", 1)

// IntegrityFix is the payload of CmdIntegrityFix.
type IntegrityFix struct {
	Max int `json:"max"`
}

func registerMaintenance(f *FSM) {
	on(f, CmdIntegrityFix, func(tx *store.Tx, p *IntegrityFix) (any, error) {
		return tx.CheckIntegrity(true, p.Max)
	})
}
