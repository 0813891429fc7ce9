package cluster

import (
	"bytes"
	"io"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestPacedSnapshots_WriteBackAsTheyAreWrittenAndAreCounted: a snapshot
// made through the node's store is paced (its state file found beside
// raft's sink), its write-back moves forward a slice at a time, and it reads
// back whole; the store counts it as being written until Close, then as
// written (a cancelled one not).
func TestPacedSnapshots_WriteBackAsTheyAreWrittenAndAreCounted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fs, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	store := &pacedSnapshots{FileSnapshotStore: fs, dir: dir + "/snapshots"}
	_, trans := raft.NewInmemTransport("")
	sink, err := store.Create(raft.SnapshotVersionMax, 10, 3, raft.Configuration{}, 1, trans)
	if err != nil {
		t.Fatal(err)
	}
	ps, ok := sink.(*pacedSink)
	if !ok || ps.f == nil {
		t.Fatalf("the sink is a %T, not paced: the state file was not found", sink)
	}
	if w := store.activity.writing.Load(); w != 1 {
		t.Fatalf("%d snapshots being written, want 1", w)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), (2*writeBackSlice+12345)/16)
	for off := 0; off < len(data); off += 64 << 10 {
		if _, err := sink.Write(data[off:min(off+64<<10, len(data))]); err != nil {
			t.Fatal(err)
		}
	}
	if ps.synced < 2*writeBackSlice || ps.synced > int64(len(data)) {
		t.Fatalf("written back up to %d of %d bytes, want at least %d", ps.synced, len(data), 2*writeBackSlice)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if w, n := store.activity.writing.Load(), store.activity.written.Load(); w != 0 || n != 1 {
		t.Fatalf("after Close: %d being written, %d written; want 0 and 1", w, n)
	}
	// A cancelled snapshot is not counted as written; a sink ends once.
	other, err := store.Create(raft.SnapshotVersionMax, 11, 3, raft.Configuration{}, 1, trans)
	if err != nil {
		t.Fatal(err)
	}
	_ = other.Cancel()
	_ = other.Cancel()
	if w, n := store.activity.writing.Load(), store.activity.written.Load(); w != 0 || n != 1 {
		t.Fatalf("after Cancel: %d being written, %d written; want 0 and 1", w, n)
	}
	_, rc, err := store.Open(sink.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
	}
}
