package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// SnapshotInfo describes a snapshot stored on this node.
type SnapshotInfo struct {
	ID    string
	Index uint64 // last log index the snapshot covers
	Term  uint64
	Path  string // the snapshot's state file (what FSMSnapshot.Persist wrote)
	Size  int64
}

// Snapshot takes a snapshot of this node's FSM now (any node can, each keeps
// its own) and returns where it is on disk. Raft keeps the newest 3
// snapshots, so the file may be reaped by later snapshots: copy it (or use
// OpenSnapshot) promptly. If nothing was applied since the latest snapshot,
// that snapshot is returned instead of writing an identical one. A second call while one runs fails with
// ErrSnapshotRunning. If ctx ends first, the snapshot still completes in the
// background (raft cannot abort it) and the guard stays held until then.
func (n *Node) Snapshot(ctx context.Context) (SnapshotInfo, error) {
	if n.closed.Load() {
		return SnapshotInfo{}, ErrShutdown
	}
	if !n.snapshotting.CompareAndSwap(false, true) {
		return SnapshotInfo{}, ErrSnapshotRunning
	}
	// Raft would write an identical snapshot again if nothing was applied
	// since the last one; hand out the existing one instead.
	if list, err := n.snaps.List(); err == nil && len(list) > 0 && list[0].Index >= n.raft.AppliedIndex() {
		n.snapshotting.Store(false)
		return n.snapshotInfo(list[0]), nil
	}
	f := n.raft.Snapshot()
	done := make(chan error, 1)
	go func() {
		err := f.Error()
		n.snapshotting.Store(false) // before done: a caller may retry at once
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		return SnapshotInfo{}, fmt.Errorf("cluster: snapshot: %w", ctx.Err())
	}
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return n.latestSnapshot()
	}
	if err != nil {
		return SnapshotInfo{}, mapRaftErr("snapshot", err)
	}
	meta, rc, err := f.Open()
	if err != nil {
		return SnapshotInfo{}, fmt.Errorf("cluster: snapshot: %w", err)
	}
	rc.Close()
	return n.snapshotInfo(meta), nil
}

func (n *Node) latestSnapshot() (SnapshotInfo, error) {
	list, err := n.snaps.List()
	if err != nil {
		return SnapshotInfo{}, fmt.Errorf("cluster: snapshot: %w", err)
	}
	if len(list) == 0 {
		return SnapshotInfo{}, fmt.Errorf("cluster: snapshot: %w", raft.ErrNothingNewToSnapshot)
	}
	return n.snapshotInfo(list[0]), nil // List is newest first
}

func (n *Node) snapshotInfo(m *raft.SnapshotMeta) SnapshotInfo {
	return SnapshotInfo{
		ID:    m.ID,
		Index: m.Index,
		Term:  m.Term,
		Path:  filepath.Join(n.snaps.dir, m.ID, "state.bin"),
		Size:  m.Size,
	}
}

// OpenSnapshot opens a stored snapshot by ID for reading. The reader yields
// exactly what the FSM's snapshot persisted and checks its CRC at the end
// (a mismatch surfaces as a read error).
func (n *Node) OpenSnapshot(id string) (io.ReadCloser, *raft.SnapshotMeta, error) {
	meta, rc, err := n.snaps.Open(id)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: open snapshot %s: %w", id, err)
	}
	return rc, meta, nil
}
