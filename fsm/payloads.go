package fsm

import (
	"time"

	"edgectl/store"
)

// Update is the payload of the update commands: a patch of one record.
type Update struct {
	ID    string      `json:"id"`
	Patch store.Patch `json:"patch"`
	At    time.Time   `json:"at"`
}

// Delete is the payload of the delete commands.
type Delete struct {
	ID string `json:"id"`
}
