package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// A data dir of a build older than v0.1.0 (raft.db, no WAL): the node
// refuses to start, with an error naming the file and v0.1.0, and leaves
// the dir as it was; it never starts with an empty log.
func TestLogStoreRefusesARaftDBOfABuildBeforeTheFloor(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "old-node")
	dir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Its content does not matter: the file is not read.
	if err := os.WriteFile(filepath.Join(dir, legacyLogFile), []byte("raft-boltdb"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !HasLogStore(cfg.DataDir) {
		t.Fatal("HasLogStore: false for a data dir with raft.db (the controller would start it as a new node)")
	}
	n, err := New(cfg)
	if err == nil {
		n.Shutdown(context.Background())
		t.Fatal("a node started on a data dir that holds only raft.db")
	}
	if !errors.Is(err, ErrLogBeforeFloor) {
		t.Errorf("error %v, want ErrLogBeforeFloor", err)
	}
	for _, want := range []string{filepath.Join(dir, legacyLogFile), "v0.1.0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %q: %v", want, err)
		}
	}
	if exists(filepath.Join(dir, walDirName)) {
		t.Error("a WAL was created beside raft.db")
	}
	if !exists(filepath.Join(dir, legacyLogFile)) {
		t.Error("raft.db is gone")
	}
	if err := SeedSnapshot(cfg.DataDir, "old-node", "127.0.0.1:7000", 1, 1, strings.NewReader("")); err == nil {
		t.Error("SeedSnapshot accepted a data dir with raft.db")
	}
}

// A move by v0.1.0 that finished but stopped before removing raft.db: the
// WAL is the state, and the stale raft.db is dropped.
func TestLogStoreDropsRaftDBLeftBehindByAFinishedMove(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "raft")
	w, err := openLogStore(dir, hclog.NewNullLogger(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.StoreLogs([]*raft.Log{{Index: 11, Term: 5, Type: raft.LogCommand, Data: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// The old raft.db is still beside the WAL.
	if err := os.WriteFile(filepath.Join(dir, legacyLogFile), []byte("raft-boltdb"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err = openLogStore(dir, hclog.NewNullLogger(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if last, _ := w.LastIndex(); last != 11 {
		t.Errorf("last index %d after reopening, want 11 (the WAL's)", last)
	}
	if exists(filepath.Join(dir, legacyLogFile)) {
		t.Error("the stale raft.db is still there")
	}
}
