package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/migrate"
	"github.com/hashicorp/raft-wal/segment"
	"go.etcd.io/bbolt"
)

// The Raft log, term and vote live in a write-ahead log (hashicorp/raft-wal)
// under raft/wal/. Releases before it kept them in raft/raft.db
// (raft-boltdb); a node of this release moves such a file into a new WAL when
// it first opens the data dir.
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
	walDirName    = "wal"
	legacyLogFile = "raft.db"
)

// HasLogStore reports whether dataDir holds a node's Raft log store, of
// this release or an earlier one.
func HasLogStore(dataDir string) bool {
	dir := filepath.Join(dataDir, "raft")
	return exists(filepath.Join(dir, walDirName)) || exists(filepath.Join(dir, legacyLogFile))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// openLogStore opens (or creates) the log store under dir, the data dir's
// raft directory, first moving an earlier release's raft.db into it.
func openLogStore(dir string, logger hclog.Logger, segmentSize int) (*logStore, error) {
	walDir := filepath.Join(dir, walDirName)
	legacy := filepath.Join(dir, legacyLogFile)
	switch {
	case exists(walDir) && exists(legacy):
		// A move finished but the old file was not removed: the WAL is the
		// state (the rename is the move's commit point).
		if err := os.Remove(legacy); err != nil {
			return nil, fmt.Errorf("cluster: remove the moved %s: %w", legacy, err)
		}
	case exists(legacy):
		if err := moveLegacyLog(legacy, walDir, logger, segmentSize); err != nil {
			return nil, err
		}
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

// moveLegacyLog copies the entries, term and vote of an earlier release's
// raft.db into a new WAL at walDir, then removes raft.db. It builds the WAL
// beside walDir and renames it into place, so that a crash in the middle
// leaves either the old file alone (and the move starts over) or the
// finished WAL.
func moveLegacyLog(legacy, walDir string, logger hclog.Logger, segmentSize int) error {
	start := time.Now()
	tmp := walDir + ".moving"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	last, err := copyLegacyLog(legacy, tmp, logger, segmentSize)
	if err == nil {
		err = os.Rename(tmp, walDir)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("cluster: move %s into the WAL: %w", legacy, err)
	}
	if err := syncDir(filepath.Dir(walDir)); err != nil {
		return err
	}
	if err := os.Remove(legacy); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cluster: remove the moved %s: %w", legacy, err)
	}
	logger.Info("moved the raft log of an earlier release into the WAL", "from", legacy, "to", walDir,
		"lastIndex", last, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// copyLegacyLog copies raft.db's log, term and vote into a new WAL in dir
// and closes both; it returns the last index copied.
func copyLegacyLog(legacy, dir string, logger hclog.Logger, segmentSize int) (last uint64, err error) {
	src, err := raftboltdb.New(raftboltdb.Options{Path: legacy, BoltOptions: &bbolt.Options{Timeout: 5 * time.Second}})
	if err != nil {
		return 0, err
	}
	defer src.Close()
	dst, err := wal.Open(dir, wal.WithLogger(logger.Named("wal")), wal.WithSegmentSize(segmentSize))
	if err != nil {
		return 0, fmt.Errorf("create the WAL: %w", err)
	}
	defer func() {
		if cerr := dst.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close the WAL: %w", cerr)
		}
	}()
	if last, err = src.LastIndex(); err != nil {
		return 0, err
	}
	if last > 0 {
		if err := migrate.CopyLogs(context.Background(), dst, src, 4<<20, nil); err != nil {
			return 0, fmt.Errorf("copy the log: %w", err)
		}
	}
	if err := copyTermAndVote(dst, src); err != nil {
		return 0, fmt.Errorf("copy the term and vote: %w", err)
	}
	return last, nil
}

// raft's stable-store keys (its constants are unexported; the names are part
// of its on-disk format). A node that never voted has no vote keys, and one
// that never started has no term.
var (
	stableUint64Keys = []string{"CurrentTerm", "LastVoteTerm"}
	stableKeys       = []string{"LastVoteCand"}
)

// copyTermAndVote copies them key by key, through the typed calls: the two
// stores encode a uint64 in different byte orders, so raw bytes would not do.
func copyTermAndVote(dst, src raft.StableStore) error {
	for _, k := range stableUint64Keys {
		v, err := src.GetUint64([]byte(k))
		if errors.Is(err, raftboltdb.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if err := dst.SetUint64([]byte(k), v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	for _, k := range stableKeys {
		v, err := src.Get([]byte(k))
		if errors.Is(err, raftboltdb.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if err := dst.Set([]byte(k), v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
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
