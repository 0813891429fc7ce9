package controller

import (
	"bytes"
	"testing"
	"time"

	"edgectl/store"
)

// A restored model gets a new router data model timeline and keeps its
// keys: routers that followed the old cluster get the full state, and the
// tokens of the restored API sessions stay derivable.
func TestNewRouterTimeline_OnRestoreOnlyTheTimelineChanges(t *testing.T) {
	keys, err := NewDataPlaneKeys(time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	s := store.New()
	tx := s.Write()
	if err := tx.EnsureDataPlaneKeys(&keys.Keys, keys.At); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	if err := newRouterTimeline(s); err != nil {
		t.Fatal(err)
	}
	got := s.Read().DataPlaneKeys()
	if got == nil || got.TimelineID == "" || got.TimelineID == keys.Keys.TimelineID {
		t.Fatalf("timeline %q after a restore, %q before", got.TimelineID, keys.Keys.TimelineID)
	}
	if !bytes.Equal(got.TokenKey, keys.Keys.TokenKey) || got.SigningKeyPEM != keys.Keys.SigningKeyPEM || got.KeyID != keys.Keys.KeyID {
		t.Fatal("a restore changed the data-plane keys")
	}
}
