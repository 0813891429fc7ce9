package cluster

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
)

// A heartbeat inside raft when the node stops must finish before the log
// store may close, and a heartbeat after that must not reach raft at all
// (raft panics when it cannot save a newer term to a closed store).
func TestHeartbeatGateWaitsForRunningHeartbeatsAndRefusesLaterOnes(t *testing.T) {
	t.Parallel()
	var g heartbeatGate
	var calls atomic.Int32
	var finished atomic.Bool
	inside, release := make(chan struct{}), make(chan struct{})
	h := g.wrap(func(raft.RPC) {
		if calls.Add(1) == 1 {
			close(inside)
			<-release
			finished.Store(true)
		}
	})

	go h(raft.RPC{RespChan: make(chan raft.RPCResponse, 1)})
	<-inside
	closing, closed := make(chan struct{}), make(chan bool)
	go func() {
		close(closing)
		g.close()
		closed <- finished.Load()
	}()
	<-closing
	close(release)
	if !<-closed {
		t.Fatal("close returned while a heartbeat was still inside raft")
	}

	resp := make(chan raft.RPCResponse, 1)
	h(raft.RPC{RespChan: resp})
	if n := calls.Load(); n != 1 {
		t.Fatalf("a heartbeat after close reached raft (%d calls)", n)
	}
	if r := <-resp; !errors.Is(r.Error, raft.ErrTransportShutdown) {
		t.Fatalf("refused heartbeat answered %v, want ErrTransportShutdown", r.Error)
	}
}
