package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

func TestSnapshotAndOpen(t *testing.T) {
	n := mustBootstrapped(t)
	ctx := ctxTimeout(t, 20*time.Second)
	var last uint64
	for i := 0; i < 50; i++ {
		_, idx, err := n.Apply(ctx, setCmd(fmt.Sprintf("k%d", i), fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	written := n.Stats().SnapshotsWritten
	info, err := n.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID == "" || info.Index < last || info.Term == 0 {
		t.Fatalf("snapshot info %+v (last index %d)", info, last)
	}
	if st := n.Stats(); st.SnapshotsWritten != written+1 || st.SnapshotsWriting != 0 {
		t.Fatalf("stats after a snapshot: %d written (%d before), %d being written", st.SnapshotsWritten, written, st.SnapshotsWriting)
	}
	fi, err := os.Stat(info.Path)
	if err != nil || fi.Size() != info.Size {
		t.Fatalf("snapshot file %s: %v (size %d vs %d)", info.Path, err, fi.Size(), info.Size)
	}

	rc, meta, err := n.OpenSnapshot(info.ID)
	if err != nil {
		t.Fatal(err)
	}
	var st kvState
	if err := json.NewDecoder(rc).Decode(&st); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if meta.Index != info.Index || len(st.Data) != 50 || st.Data["k49"] != "49" || st.Applied != last {
		t.Fatalf("snapshot content: meta %+v, %d keys, applied %d", meta, len(st.Data), st.Applied)
	}

	// Nothing new since: the latest snapshot is returned.
	again, err := n.Snapshot(ctx)
	if err != nil || again.ID != info.ID {
		t.Fatalf("second snapshot: %+v %v", again, err)
	}
	if _, _, err := n.OpenSnapshot("no-such-id"); err == nil {
		t.Fatal("opened a missing snapshot")
	}

	// A restart restores the FSM from the snapshot (plus later log).
	mustApply(t, ctx, n, setCmd("post", "snap"))
	cfg := n.cfg
	cfg.BindAddr = n.Addr()
	cfg.FSM = newKVFSM()
	n.stop(t)
	r := mustStartNode(t, cfg)
	if err := r.WaitForLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.fsm.get("k10"); v != "10" {
		t.Fatalf("k10 after restore = %q", v)
	}
	if v, _ := r.fsm.get("post"); v != "snap" {
		t.Fatalf("post after restore = %q", v)
	}
}

func TestSnapshotRunning(t *testing.T) {
	n := mustBootstrapped(t)
	ctx := ctxTimeout(t, 20*time.Second)
	mustApply(t, ctx, n, setCmd("a", "1"))
	n.fsm.persisting = make(chan struct{})
	n.fsm.release = make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := n.Snapshot(ctx)
		done <- err
	}()
	<-n.fsm.persisting // the first snapshot is now in progress
	if _, err := n.Snapshot(ctx); !errors.Is(err, ErrSnapshotRunning) {
		t.Fatalf("concurrent snapshot: %v", err)
	}
	close(n.fsm.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n.fsm.persisting, n.fsm.release = nil, nil
	// The guard is released afterwards.
	mustApply(t, ctx, n, setCmd("b", "2"))
	if _, err := n.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestAutomaticSnapshots(t *testing.T) {
	n := mustBootstrapped(t, func(c *Config) {
		c.SnapshotThreshold = 20
		c.SnapshotInterval = 50 * time.Millisecond
		c.TrailingLogs = 10
	})
	ctx := ctxTimeout(t, 20*time.Second)
	for i := 0; i < 60; i++ {
		mustApply(t, ctx, n, setCmd(fmt.Sprint(i), "x"))
	}
	testPoll(t, func() bool { return n.Stats().LastSnapshotIndex > 0 }, 10*time.Second)
}

// TestRestart_ReplaysOnlyTheLogSinceARecentSnapshot: with the default check
// interval, a node whose log passed the snapshot threshold snapshots within
// seconds, so a node killed under a steady write load restarts from a
// recent snapshot and replays a short tail of log, not everything written
// since it started. With raft's own interval (120 s, checked at a random
// moment of the next 120) no snapshot came for minutes: a node restarted
// three minutes into `make chaos` replayed all 44,000 entries of the run
// (issue 46).
func TestRestart_ReplaysOnlyTheLogSinceARecentSnapshot(t *testing.T) {
	const threshold = 200
	n := mustBootstrapped(t, func(c *Config) { c.SnapshotThreshold = threshold })
	ctx := ctxTimeout(t, 30*time.Second)
	// Writes go on while the check comes round, as under a steady load.
	// 15 s: three of the 5 s intervals (a check comes within two).
	const within = 15 * time.Second
	deadline := time.Now().Add(within)
	for i := 0; n.Stats().LastSnapshotIndex == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot %s after the log passed the threshold (%d entries, threshold %d)", within, n.Stats().LastLogIndex, threshold)
		}
		mustApply(t, ctx, n, setCmd(fmt.Sprintf("k%d", i%50), fmt.Sprint(i)))
	}
	snap := n.Stats().LastSnapshotIndex
	cfg := n.cfg
	cfg.BindAddr = n.Addr()
	cfg.FSM = newKVFSM()
	n.kill()
	r := mustStartNode(t, cfg)
	// Opening the node restored the snapshot: only the entries after it
	// are left to replay.
	if got := r.fsm.AppliedIndex(); got < snap {
		t.Fatalf("after the restart the FSM is at %d, before the snapshot at %d", got, snap)
	}
	if err := r.WaitForLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
}
