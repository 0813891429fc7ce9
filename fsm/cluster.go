package fsm

import (
	"time"

	"edgectl/store"
)

// Cluster commands.
var (
	// CmdControllerRegister records a node's name and API address.
	CmdControllerRegister = command("controller.register", 1)
	CmdJoinTokenCreate    = command("joinToken.create", 1)
	CmdJoinTokenConsume   = command("joinToken.consume", 1)
	CmdControllerRemove   = command("controller.remove", 1)
	// CmdJoinTokenDelete revokes an outstanding join token (command version 2).
	CmdJoinTokenDelete = command("joinToken.delete", 2)
	// CmdBuiltinsEnsure adds the built-in records a cluster lacks (command version 3).
	CmdBuiltinsEnsure = command("builtins.ensure", 3)
	// CmdJWTsReissue replaces enrollment JWTs signed the old way (command version 3).
	CmdJWTsReissue = command("jwts.reissue", 3)
)

// JoinTokenConsume is the payload of CmdJoinTokenConsume.
type JoinTokenConsume struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

func registerCluster(f *FSM) {
	on(f, CmdControllerRegister, func(tx *store.Tx, c *store.Controller) (any, error) {
		return nil, tx.RegisterController(c)
	})
	on(f, CmdControllerRemove, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.RemoveController(p.ID)
	})
	on(f, CmdJoinTokenCreate, func(tx *store.Tx, t *store.JoinToken) (any, error) {
		return nil, tx.CreateJoinToken(t)
	})
	on(f, CmdJoinTokenConsume, func(tx *store.Tx, p *JoinTokenConsume) (any, error) {
		return nil, tx.ConsumeJoinToken(p.ID, p.At)
	})
	on(f, CmdBuiltinsEnsure, func(tx *store.Tx, b *store.Builtins) (any, error) {
		return nil, tx.EnsureBuiltins(b)
	})
	on(f, CmdJWTsReissue, func(tx *store.Tx, p *[]store.JWTReissue) (any, error) {
		return nil, tx.ReissueJWTs(*p)
	})
	on(f, CmdJoinTokenDelete, func(tx *store.Tx, p *Delete) (any, error) {
		return nil, tx.DeleteJoinToken(p.ID)
	})
}
