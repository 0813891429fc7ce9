package cli

import (
	"os"
	"strconv"
	"testing"
)

// A socket passed to another process (LISTEN_PID not this one) is not
// taken; more than one socket is refused, as edgectl serves one port.
func TestActivatedListener_OnlyOneSocketForThisProcess(t *testing.T) {
	t.Setenv("LISTEN_PID", strconv.Itoa(os.Getppid()))
	t.Setenv("LISTEN_FDS", "1")
	if ln, err := activatedListener(); ln != nil || err != nil {
		t.Fatalf("another process's socket taken: %v, %v", ln, err)
	}
	t.Setenv("LISTEN_PID", strconv.Itoa(os.Getpid()))
	t.Setenv("LISTEN_FDS", "2")
	if _, err := activatedListener(); err == nil {
		t.Fatal("two sockets accepted")
	}
	if v, ok := os.LookupEnv("LISTEN_FDS"); ok {
		t.Fatalf("LISTEN_FDS=%s left for children", v)
	}
}
