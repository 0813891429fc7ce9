package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/segment"
)

// The Raft log, term and vote live in a write-ahead log (hashicorp/raft-wal)
// under raft/wal/. Development builds before v0.1.0 kept them in
// raft/raft.db (raft-boltdb); v0.1.0 moved such a file into a new WAL when
// it first opened the data dir. This release no longer does: a node whose
// data dir still holds only raft.db refuses to start (ErrLogBeforeFloor).
//
// Why the WAL: raft-boltdb commits a B+tree transaction per batch of entries,
// with two fsyncs, page copies and a freelist that grows with the log, and
// rewrites pages that truncation freed. The WAL appends each entry once to a
// segment file with one fsync and drops whole segments when the log is
// compacted. Measured with one batch of 16 entries of 700 bytes per call
// (docs/performance-history.md, Issue 16, part 4): 1.53 ms and 0.77 ms of CPU per batch for raft-boltdb,
// 0.64 ms and 0.29 ms for the WAL. It is HashiCorp's log store for raft,
// written for Consul, with raft-boltdb as the thing it replaces.
const (
	walDirName = "wal"
	// legacyLogFile is the raft-boltdb log of builds before v0.1.0.
	legacyLogFile = "raft.db"
)

// ErrLogBeforeFloor: the data dir holds the raft-boltdb log of a build
// older than v0.1.0, the oldest release a cluster may upgrade from, and no
// WAL. The node does not start: starting with an empty log would lose the
// node's state.
var ErrLogBeforeFloor = errors.New("cluster: the data dir holds the Raft log of a release older than v0.1.0")

// HasLogStore reports whether dataDir holds a node's Raft log store (the
// WAL, or the raft.db of a build older than v0.1.0, which openLogStore then
// refuses).
func HasLogStore(dataDir string) bool {
	dir := filepath.Join(dataDir, "raft")
	return exists(filepath.Join(dir, walDirName)) || exists(filepath.Join(dir, legacyLogFile))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// openLogStore opens (or creates) the log store under dir, the data dir's
// raft directory. It refuses a dir that holds raft.db and no WAL
// (ErrLogBeforeFloor).
func openLogStore(dir string, logger hclog.Logger, segmentSize int) (*logStore, error) {
	walDir := filepath.Join(dir, walDirName)
	legacy := filepath.Join(dir, legacyLogFile)
	switch {
	case exists(walDir) && exists(legacy):
		// v0.1.0 finished moving raft.db into the WAL but stopped before
		// removing it: the WAL is the state (the rename was the move's
		// commit point).
		if err := os.Remove(legacy); err != nil {
			return nil, fmt.Errorf("cluster: remove the moved %s: %w", legacy, err)
		}
	case exists(legacy):
		return nil, fmt.Errorf("%w: %s is raft-boltdb's log, which this release no longer moves into the WAL: "+
			"upgrade this node through v0.1.0 first (start v0.1.0 once on this data dir: it moves the log), "+
			"or remove the node from the cluster and join it again with an empty data dir", ErrLogBeforeFloor, legacy)
	}
	if err := os.MkdirAll(walDir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if segmentSize == 0 {
		segmentSize = wal.DefaultSegmentSize
	}
	files := newSegmentFiles(walDir, uint64(segmentSize), logger.Named("wal"))
	w, err := wal.Open(walDir, wal.WithLogger(logger.Named("wal")), wal.WithSegmentSize(segmentSize),
		wal.WithSegmentFiler(segment.NewFiler(walDir, files)))
	if err != nil {
		files.close()
		return nil, fmt.Errorf("cluster: open the raft log in %s: %w", walDir, err)
	}
	ls := &logStore{WAL: w, files: files}
	ls.stored.init()
	return ls, nil
}

// logStore is the node's Raft log store: the WAL over its segment files.
type logStore struct {
	*wal.WAL
	files *segmentFiles
	// stored fires when StoreLogs starts to write a batch and when it
	// returns (Node.awaitForwarded).
	stored signal
	// storing is the batch StoreLogs is writing, nil between batches. raft
	// calls StoreLogs from one goroutine at a time, with the entries that
	// follow the log's last one, and changes none of them afterwards (its
	// log cache keeps the same entries).
	storing atomic.Pointer[[]*raft.Log]
	// beforeStore, when set (tests only), runs before each batch is written.
	beforeStore atomic.Pointer[func([]*raft.Log)]
}

// StoreLogs appends logs. Those waiting for entries to arrive are told when
// it starts, with the batch readable by arriving, and again when it ends.
func (s *logStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) > 0 {
		s.storing.Store(&logs)
		s.stored.fire()
	}
	if hook := s.beforeStore.Load(); hook != nil {
		(*hook)(logs)
	}
	err := s.WAL.StoreLogs(logs)
	if len(logs) > 0 {
		s.storing.Store(nil)
		s.stored.fire()
	}
	return err
}

// lastStored is the index of the last entry on disk (0 if none).
func (s *logStore) lastStored() uint64 {
	i, _ := s.LastIndex()
	return i
}

// arriving returns the batch being stored (nil if none): entries that
// follow the last stored one, in order, not yet on this node's disk.
func (s *logStore) arriving() []*raft.Log {
	if b := s.storing.Load(); b != nil {
		return *b
	}
	return nil
}

// lastArrived is the index of the last entry stored or being stored (0 if
// none).
func (s *logStore) lastArrived() uint64 {
	if b := s.arriving(); len(b) > 0 {
		return b[len(b)-1].Index
	}
	return s.lastStored()
}

// StoreLog appends one entry (as StoreLogs).
func (s *logStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// Close closes the WAL, then waits for a spare segment being written.
func (s *logStore) Close() error {
	err := s.WAL.Close()
	s.files.close()
	return err
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("cluster: sync %s: %w", dir, err)
	}
	return nil
}
