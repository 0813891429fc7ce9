package cluster

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestSegmentFiles_SegmentsAreWrittenBlocks: every segment of the log, the
// first and those made from spares, has its blocks written (no unwritten
// extents, which would make each fsync commit the file system's journal);
// a spare is made once half a segment is written and used by the next
// segment; the entries read back after the log is reopened.
func TestSegmentFiles_SegmentsAreWrittenBlocks(t *testing.T) {
	t.Parallel()
	const segSize = 64 << 10
	dir := t.TempDir()
	walDir := filepath.Join(dir, walDirName)
	s, err := openLogStore(dir, hclog.NewNullLogger(), segSize)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("e"), 1000)
	next := uint64(1)
	write := func(n int) {
		t.Helper()
		for range n {
			if err := s.StoreLogs([]*raft.Log{{Index: next, Term: 1, Type: raft.LogCommand, Data: data}}); err != nil {
				t.Fatal(err)
			}
			next++
		}
	}
	spare := filepath.Join(walDir, spareSegment)
	write(10) // under half of the first segment
	if exists(spare) {
		t.Fatal("a spare was made before half the segment was written")
	}
	write(30) // past half
	waitFor(t, func() bool { return exists(spare) }, "a spare after half the segment")
	write(60) // into the second segment
	segs := segmentNames(t, walDir)
	if len(segs) < 2 {
		t.Fatalf("segments %v after %d entries of 1000 bytes, want a second one", segs, next-1)
	}
	for _, name := range segs {
		checkWrittenBlocks(t, filepath.Join(walDir, name), segSize)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = openLogStore(dir, hclog.NewNullLogger(), segSize)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := uint64(1); i < next; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil || !bytes.Equal(l.Data, data) {
			t.Fatalf("entry %d after reopening: %v", i, err)
		}
	}
	if last, _ := s.LastIndex(); last != next-1 {
		t.Fatalf("last index %d, want %d", last, next-1)
	}
}

// TestSegmentFiles_OnlyAWholeSpareOfTheSegmentSizeIsUsed: a spare left half
// written (the node stopped while writing it) is removed at open; a spare
// of another segment size is not used; a segment name that exists is
// refused, as raft-wal's Create refuses it.
func TestSegmentFiles_OnlyAWholeSpareOfTheSegmentSizeIsUsed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, spareSegmentPartial), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, spareSegment), make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	files := newSegmentFiles(dir, 64<<10, hclog.NewNullLogger())
	defer files.close()
	if exists(filepath.Join(dir, spareSegmentPartial)) {
		t.Fatal("the partial spare is still there")
	}
	f, err := files.Create(dir, "a.wal", 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if exists(filepath.Join(dir, spareSegment)) {
		t.Fatal("a spare of 100 bytes was neither used nor removed")
	}
	checkWrittenBlocks(t, filepath.Join(dir, "a.wal"), 64<<10)
	if _, err := files.Create(dir, "a.wal", 64<<10); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Create of an existing name: %v, want it refused", err)
	}
	// With a whole spare, the name exists: refused, and the spare kept.
	files.wantSpare()
	waitFor(t, func() bool { return exists(filepath.Join(dir, spareSegment)) }, "a spare")
	if _, err := files.Create(dir, "a.wal", 64<<10); err == nil {
		t.Fatal("Create over an existing name with a spare ready succeeded")
	}
	if !exists(filepath.Join(dir, spareSegment)) {
		t.Fatal("the spare is gone after a refused Create")
	}
}

// TestSegmentFiles_CloseStopsASpareBeingWritten: closing the log while a
// spare is written waits for it to stop and leaves nothing half written.
func TestSegmentFiles_CloseStopsASpareBeingWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := newSegmentFiles(dir, 1<<30, hclog.NewNullLogger()) // 1 GiB: still being written at close
	files.wantSpare()
	waitFor(t, func() bool { return exists(filepath.Join(dir, spareSegmentPartial)) }, "the spare being written")
	files.close()
	if exists(filepath.Join(dir, spareSegmentPartial)) || exists(filepath.Join(dir, spareSegment)) {
		t.Fatal("a spare is left after close")
	}
	files.wantSpare() // after close: nothing starts
	if exists(filepath.Join(dir, spareSegmentPartial)) {
		t.Fatal("a spare was started after close")
	}
}

func segmentNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".wal") {
			out = append(out, e.Name())
		}
	}
	return out
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkWrittenBlocks fails unless path is at least size bytes long and, where the
// file system can tell (FIEMAP), none of its extents is unwritten.
func checkWrittenBlocks(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < size { // a segment's last batch may run past its size
		t.Fatalf("%s is %d bytes, want at least %d", path, fi.Size(), size)
	}
	size = fi.Size()
	const (
		fsIocFiemap      = 0xC020660B
		extentUnwritten  = 0x800
		extentLast       = 0x1
		fiemapFlagSync   = 0x1
		maxExtentsPerMap = 32
	)
	type extent struct {
		Logical, Physical, Length uint64
		_                         [2]uint64
		Flags                     uint32
		_                         [3]uint32
	}
	var req struct {
		Start, Length                uint64
		Flags, Mapped, Count, Unused uint32
		Extents                      [maxExtentsPerMap]extent
	}
	var covered uint64
	for start := uint64(0); start < uint64(size); {
		req.Start, req.Length, req.Flags, req.Count = start, uint64(size)-start, fiemapFlagSync, maxExtentsPerMap
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&req))); errno != 0 {
			t.Logf("%s: FIEMAP not supported here (%v): the extents are not checked", path, errno)
			return
		}
		if req.Mapped == 0 {
			break
		}
		for _, e := range req.Extents[:req.Mapped] {
			if e.Flags&extentUnwritten != 0 {
				t.Fatalf("%s: extent at %d (%d bytes) is unwritten", path, e.Logical, e.Length)
			}
			covered += e.Length
			start = e.Logical + e.Length
		}
		if req.Extents[req.Mapped-1].Flags&extentLast != 0 {
			break
		}
	}
	if covered < uint64(size) {
		t.Fatalf("%s: extents cover %d of %d bytes (holes)", path, covered, size)
	}
}
