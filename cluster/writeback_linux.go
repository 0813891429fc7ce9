package cluster

import (
	"os"

	"golang.org/x/sys/unix"
)

// writeBack writes the dirty pages of f in [off, off+n) to the device and
// waits for them (sync_file_range). It neither flushes the device's cache
// nor writes metadata: a later fsync still does, with little data left.
func writeBack(f *os.File, off, n int64) error {
	return unix.SyncFileRange(int(f.Fd()), off, n,
		unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
}
