package cluster

import (
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// Large files are written back to the disk as they are written, a few MiB
// at a time, instead of all at once by their final fsync.
//
// Why: a fsync ends with a flush of the device's cache, which waits for
// every write the device has in flight. The log's fsync of each batch (the
// commit of every write) then waits behind whatever bulk data the kernel is
// writing back at that moment. A snapshot at a million identities is 563 MiB
// with one fsync at its end, and a spare log segment is 64 MiB; traced at a
// million identities, the WAL's fsyncs had a p50 of 0.47 ms and a p99 of
// 5.7 ms, and the tail of an identity create was those fsyncs. Written back
// in slices of writeBackSlice, at most that much of a bulk file is in
// flight ahead of a commit.
const writeBackSlice = 4 << 20

// pacer writes back what was written to f since the last slice.
type pacer struct {
	f               *os.File
	written, synced int64
}

// wrote counts n more bytes written to f and writes back a full slice.
func (p *pacer) wrote(n int) {
	p.written += int64(n)
	if p.written-p.synced >= writeBackSlice {
		// A failure here only loses the pacing: the final fsync reports
		// errors that matter.
		_ = writeBack(p.f, p.synced, p.written-p.synced)
		p.synced = p.written
	}
}

// pacedSnapshots is the node's snapshot store: raft's file store, whose
// snapshots are written back as they are written.
type pacedSnapshots struct {
	*raft.FileSnapshotStore
	dir string // the store's snapshots directory
}

// Create opens the new snapshot's state file a second time, read-only, to
// pace its write-back (raft's sink does not expose its file).
func (s *pacedSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.FileSnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(s.dir, sink.ID()+".tmp", "state.bin"))
	if err != nil {
		return sink, nil // unpaced, as raft writes it
	}
	return &pacedSink{SnapshotSink: sink, pacer: pacer{f: f}}, nil
}

type pacedSink struct {
	raft.SnapshotSink
	pacer
}

func (s *pacedSink) Write(p []byte) (int, error) {
	n, err := s.SnapshotSink.Write(p)
	s.wrote(n)
	return n, err
}

func (s *pacedSink) Close() error {
	s.f.Close()
	return s.SnapshotSink.Close()
}

func (s *pacedSink) Cancel() error {
	s.f.Close()
	return s.SnapshotSink.Cancel()
}
