//go:build !linux

package cluster

import "net"

// sendQueued cannot tell elsewhere than on Linux: a frame is then never
// written without waiting (frameWriter.writeNow).
func sendQueued(net.Conn) (int, bool) { return 0, false }
