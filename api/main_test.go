package api

import (
	"os"
	"testing"

	"edgectl/fsm"
)

// Every command the API tests write is decoded by the FSM's decoder and by
// encoding/json, and a difference panics (fsm.CrossCheckDecoding): the API
// tests write nearly every command type there is.
func TestMain(m *testing.M) {
	fsm.CrossCheckDecoding()
	os.Exit(m.Run())
}
