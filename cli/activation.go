package cli

import (
	"fmt"
	"net"
	"os"
	"strconv"
)

// activatedListener is the API port a service manager opened for this
// process (systemd's socket activation: LISTEN_PID names this process,
// LISTEN_FDS counts the sockets from fd 3), or nil. The manager keeps the
// socket open while the node restarts, so connections made meanwhile wait
// in its backlog (docs/operations.md, "Restarts without refusals").
func activatedListener() (net.Listener, error) {
	if os.Getenv("LISTEN_PID") != strconv.Itoa(os.Getpid()) {
		return nil, nil
	}
	count := os.Getenv("LISTEN_FDS")
	// Children (none today) must not take the socket for theirs.
	for _, v := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
		_ = os.Unsetenv(v)
	}
	if count != "1" {
		return nil, fmt.Errorf("socket activation: LISTEN_FDS=%q: edgectl takes one socket, the API port's", count)
	}
	const firstFD = 3
	f := os.NewFile(firstFD, "api-socket")
	defer f.Close() // FileListener holds a copy
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("socket activation: fd %d: %w", firstFD, err)
	}
	return ln, nil
}
