package controller

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFile is the data dir's lock: held (flock) by the process that runs on
// the dir, with its pid inside so a second one can say who holds it. The
// kernel releases the lock when the process exits, however it exits, so a
// file left by a dead process does not block a restart.
const lockFile = "edgectl.lock"

// ErrDataDirInUse: another live process holds the data dir.
var ErrDataDirInUse = errors.New("data dir in use")

// dirLock is a held data dir lock.
type dirLock struct{ f *os.File }

// lockDataDir takes the lock of dir without waiting, or fails with an error
// wrapping ErrDataDirInUse that names the dir and the holder's pid.
func lockDataDir(dir string) (*dirLock, error) {
	p := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(p)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(holder))
			if pid == "" {
				pid = "unknown"
			}
			abs, _ := filepath.Abs(dir)
			return nil, fmt.Errorf("%w: %s is held by process %s (lock file %s): stop that node first, or use another --data-dir",
				ErrDataDirInUse, abs, pid, p)
		}
		return nil, fmt.Errorf("data dir lock %s: %w", p, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// release gives the lock up (the file stays, empty of meaning).
func (l *dirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}
