package fsm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"edgectl/store"

	"github.com/hashicorp/raft"
)

// snapshotFormat is the version of the snapshot stream; Restore refuses others.
const snapshotFormat = 1

// header starts every snapshot stream.
type header struct {
	Format int    `json:"format"`
	Index  uint64 `json:"index"`
}

type snapshot struct {
	tx    *store.Tx
	index uint64
}

// Snapshot captures the model at the applied index. It only takes an MVCC
// view, so Apply goes on while Persist encodes. The index is the model's
// own, which may be past the one raft files the snapshot under (entries
// applied ahead of raft: ApplyCommitted); Restore takes it back, and the
// entries between the two that raft hands over again are skipped.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	return &snapshot{tx: f.store.Read(), index: f.AppliedIndex()}, nil
}

// Persist encodes the view into the sink.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := WriteSnapshot(sink, s.tx, s.index); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// A snapshot's stream is written and read through a buffer of snapshotBuf
// bytes, and the goroutine doing it gives way to others after every
// buffer (runtime.Gosched): under half a millisecond of encoding or
// decoding. A snapshot at a million identities is seconds of a CPU; without
// that, a request woken on the same processor could wait for the
// scheduler's preemption, every 10 ms (measured beside a dump of 300,000
// identities: the wake-up delay of request-like goroutines went from p50
// 0.6 ms, p99 14–17 ms to p50 0.1 ms, p99 7–9 ms; docs/performance-history.md,
// issue 16, part 10). The snapshot takes as long.
const snapshotBuf = 1 << 16

type yieldingWriter struct{ w io.Writer }

func (y yieldingWriter) Write(p []byte) (int, error) {
	n, err := y.w.Write(p)
	runtime.Gosched()
	return n, err
}

type yieldingReader struct{ r io.Reader }

func (y yieldingReader) Read(p []byte) (int, error) {
	n, err := y.r.Read(p)
	runtime.Gosched()
	return n, err
}

// WriteSnapshot writes the header and every record of tx to w.
func WriteSnapshot(w io.Writer, tx *store.Tx, index uint64) error {
	bw := bufio.NewWriterSize(yieldingWriter{w}, snapshotBuf)
	if err := json.NewEncoder(bw).Encode(header{Format: snapshotFormat, Index: index}); err != nil {
		return fmt.Errorf("fsm: snapshot header: %w", err)
	}
	if err := tx.Dump(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// Release is a no-op: the view is garbage collected.
func (s *snapshot) Release() {}

// Restore replaces the model with the snapshot's. The new model is built
// aside and swapped in whole.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	dec := store.NewSnapshotDecoder(bufio.NewReaderSize(yieldingReader{rc}, snapshotBuf))
	var h header
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("fsm: restore: header: %w", err)
	}
	if h.Format != snapshotFormat {
		if h.Format > snapshotFormat {
			return fmt.Errorf("fsm: restore: the snapshot is of format %d, written by a newer edgectl; this node reads format %d: upgrade it", h.Format, snapshotFormat)
		}
		return fmt.Errorf("fsm: restore: snapshot format %d, this node reads %d", h.Format, snapshotFormat)
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if err := f.store.Load(dec); err != nil {
		return err
	}
	f.outcomes.reset()
	if f.watcher != nil {
		f.watcher.Restored(h.Index)
	}
	f.mu.Lock()
	f.applied.Store(h.Index)
	close(f.notify)
	f.notify = make(chan struct{})
	f.mu.Unlock()
	return nil
}
