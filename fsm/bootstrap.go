package fsm

import "edgectl/store"

// CmdBootstrap applies the bootstrap records of a new cluster (conventions §9).
var CmdBootstrap = command("bootstrap", 1)

func registerBootstrap(f *FSM) {
	on(f, CmdBootstrap, func(tx *store.Tx, b *store.Bootstrap) (any, error) {
		return nil, tx.ApplyBootstrap(b)
	})
}
