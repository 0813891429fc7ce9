package cluster

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// sendQueued is how many bytes c's socket holds that its peer has not
// acknowledged yet (SIOCOUTQ: sent and unacknowledged, or not sent). ok
// is false when it cannot tell (not a socket).
func sendQueued(c net.Conn) (n int, ok bool) {
	sc, isSock := c.(syscall.Conn)
	if !isSock {
		return 0, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ioErr error
	if err := rc.Control(func(fd uintptr) { n, ioErr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); err != nil || ioErr != nil {
		return 0, false
	}
	return n, true
}
