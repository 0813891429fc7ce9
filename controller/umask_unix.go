//go:build unix

package controller

import "syscall"

// umask sets the process umask and returns the old one, so the socket is
// created owner-only with no window where others could connect.
func umask(m int) int { return syscall.Umask(m) }
