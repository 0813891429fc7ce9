package api

import (
	"os"
	"testing"

	"edgectl/store"
)

// Every command the API tests write is decoded by the FSM's decoder and by
// encoding/json, and a difference panics (store.CrossCheckDecoding): the API
// tests write nearly every command type there is.
func TestMain(m *testing.M) {
	store.CrossCheckDecoding(true)
	os.Exit(m.Run())
}
