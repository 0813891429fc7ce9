package cluster

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// seedPort reserves a loopback address for a seeded node: the seed names
// the address in the raft configuration before the node binds it.
func seedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// snapshotBytes takes a snapshot of n and returns the stream OpenSnapshot
// yields (what GET /database/snapshots/{id} hands out) and its index.
func snapshotBytes(t *testing.T, n *testNode) ([]byte, uint64) {
	t.Helper()
	info, err := n.Snapshot(ctxTimeout(t, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := n.OpenSnapshot(info.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	raw, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return raw, info.Index
}

func TestSeedSnapshotStartsOneVoterClusterWithTheState(t *testing.T) {
	ctx := ctxTimeout(t, 60*time.Second)
	src := mustBootstrapped(t)
	for i := range 20 {
		mustApply(t, ctx, src, setCmd(fmt.Sprintf("k%d", i), fmt.Sprint(i)))
	}
	raw, index := snapshotBytes(t, src)
	src.stop(t)

	// A new node id and address: the seeded node is a new cluster.
	addr := seedPort(t)
	cfg := testConfig(t, "seeded")
	cfg.BindAddr = addr
	const term = 7
	if err := SeedSnapshot(cfg.DataDir, cfg.NodeID, addr, index, term, bytes.NewReader(raw)); err != nil {
		t.Fatalf("SeedSnapshot: %v", err)
	}
	n := mustStartNode(t, cfg)
	if !n.HasState() {
		t.Fatal("a seeded data dir does not count as existing state: the node would wait to be bootstrapped")
	}
	if err := n.WaitForLeader(ctx); err != nil {
		t.Fatalf("the seeded node did not elect itself: %v", err)
	}
	testPoll(t, n.IsLeader, 10*time.Second)
	if v, _ := n.fsm.get("k19"); v != "19" {
		t.Errorf("k19 after seeding = %q, want 19", v)
	}
	if got := n.fsm.AppliedIndex(); got < index {
		t.Errorf("applied index %d after seeding, want at least the snapshot's %d", got, index)
	}
	if st := n.Stats(); st.Term <= term {
		t.Errorf("term %d after the election, want more than the seeded %d", st.Term, term)
	}
	members, err := n.Members()
	if err != nil || len(members) != 1 || members[0].ID != "seeded" || members[0].Address != addr || !members[0].IsVoter {
		t.Fatalf("members after seeding = %+v, %v; want only seeded at %s as voter", members, err, addr)
	}
	idx := mustApply(t, ctx, n, setCmd("after", "seed"))
	if idx <= index {
		t.Errorf("first new entry at index %d, want after the snapshot's %d", idx, index)
	}

	// It is a normal cluster: a new voter gets the seeded state streamed to it.
	joiner := mustNewNode(t)
	if err := n.AddVoter(ctx, joiner.ID(), joiner.Addr()); err != nil {
		t.Fatalf("AddVoter on the seeded cluster: %v", err)
	}
	if err := joiner.WaitForApplied(ctx, idx); err != nil {
		t.Fatalf("the new voter did not catch up: %v", err)
	}
	if v, _ := joiner.fsm.get("k3"); v != "3" {
		t.Errorf("k3 on the new voter = %q, want 3", v)
	}

	// And it resumes after a restart like any node (the new voter keeps quorum).
	n.stop(t)
	cfg.FSM = newKVFSM()
	again := mustStartNode(t, cfg)
	testPoll(t, func() bool { v, _ := again.fsm.get("after"); return v == "seed" }, 15*time.Second)
}

func TestSeedSnapshotRefusesADataDirWithState(t *testing.T) {
	src := mustBootstrapped(t)
	mustApply(t, ctxTimeout(t, 20*time.Second), src, setCmd("a", "1"))
	raw, index := snapshotBytes(t, src)
	addr := seedPort(t)

	dir := t.TempDir()
	if err := SeedSnapshot(dir, "n1", addr, index, 1, bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	err := SeedSnapshot(dir, "n1", addr, index, 1, bytes.NewReader(raw))
	if err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("second seed of the same dir: %v, want a refusal", err)
	}
	// The running node's own data dir has a raft log.
	if err := SeedSnapshot(src.cfg.DataDir, "n2", addr, index, 1, bytes.NewReader(raw)); err == nil {
		t.Error("seeding a live node's data dir succeeded")
	}
}

func TestSeedSnapshotRejectsBadArguments(t *testing.T) {
	raw := []byte(`{"applied":1,"data":{}}`)
	for _, c := range []struct {
		name, id, addr string
		index, term    uint64
	}{
		{"no id", "", "127.0.0.1:7000", 1, 1},
		{"port 0", "n", "127.0.0.1:0", 1, 1},
		{"no port", "n", "127.0.0.1", 1, 1},
		{"index 0", "n", "127.0.0.1:7000", 0, 1},
		{"term 0", "n", "127.0.0.1:7000", 1, 0},
	} {
		dir := t.TempDir()
		if err := SeedSnapshot(dir, c.id, c.addr, c.index, c.term, bytes.NewReader(raw)); err == nil {
			t.Errorf("%s: SeedSnapshot succeeded", c.name)
		}
		if HasLogStore(dir) {
			t.Errorf("%s: a refused seed left a raft log behind", c.name)
		}
	}
}

func TestSeedSnapshotCleansUpAfterAFailedRead(t *testing.T) {
	dir := t.TempDir()
	bad := io.MultiReader(strings.NewReader(`{"applied":`), errReader{})
	if err := SeedSnapshot(dir, "n", "127.0.0.1:7000", 1, 1, bad); err == nil {
		t.Fatal("a broken reader was seeded")
	}
	// Nothing left that would make a node think it has state: a retry works.
	if err := SeedSnapshot(dir, "n", "127.0.0.1:7000", 1, 1, strings.NewReader(`{"applied":1,"data":{}}`)); err != nil {
		t.Fatalf("seed after a failed one: %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, fmt.Errorf("disk on fire") }
