package cluster

import (
	"os"
	"path/filepath"
	"sync/atomic"

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

// pacer writes back what was written to f since the last slice; with no
// file it only counts.
type pacer struct {
	f               *os.File
	written, synced int64
}

// wrote counts n more bytes written to f and writes back a full slice.
func (p *pacer) wrote(n int) {
	p.written += int64(n)
	if p.f != nil && p.written-p.synced >= writeBackSlice {
		// A failure here only loses the pacing: the final fsync reports
		// errors that matter.
		_ = writeBack(p.f, p.synced, p.written-p.synced)
		p.synced = p.written
	}
}

// pacedSnapshots is the node's snapshot store: raft's file store, whose
// snapshots are written back as they are written, and which counts the
// snapshots being written (taken by this node or installed from the
// leader) for Stats.
type pacedSnapshots struct {
	*raft.FileSnapshotStore
	dir      string // the store's snapshots directory
	activity snapshotActivity
}

// snapshotActivity counts snapshots being written and written. A snapshot
// at a million identities is half a GiB and seconds of a CPU: operators
// (and the scale benchmark) need to see when one runs.
type snapshotActivity struct {
	writing atomic.Int32
	written atomic.Uint64
}

// Create opens the new snapshot's state file a second time, read-only, to
// pace its write-back (raft's sink does not expose its file).
func (s *pacedSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.FileSnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	ps := &pacedSink{SnapshotSink: sink, activity: &s.activity}
	if f, err := os.Open(filepath.Join(s.dir, sink.ID()+".tmp", "state.bin")); err == nil {
		ps.f = f
	} // else unpaced, as raft writes it
	s.activity.writing.Add(1)
	return ps, nil
}

type pacedSink struct {
	raft.SnapshotSink
	pacer
	activity *snapshotActivity
	ended    atomic.Bool
}

func (s *pacedSink) Write(p []byte) (int, error) {
	n, err := s.SnapshotSink.Write(p)
	s.wrote(n)
	return n, err
}

func (s *pacedSink) Close() error {
	err := s.SnapshotSink.Close()
	s.end(err == nil)
	return err
}

func (s *pacedSink) Cancel() error {
	s.end(false)
	return s.SnapshotSink.Cancel()
}

// end counts the sink's end once, whichever of Close and Cancel come.
func (s *pacedSink) end(written bool) {
	if !s.ended.CompareAndSwap(false, true) {
		return
	}
	if s.f != nil {
		s.f.Close()
	}
	s.activity.writing.Add(-1)
	if written {
		s.activity.written.Add(1)
	}
}
