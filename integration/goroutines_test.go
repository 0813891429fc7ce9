package integration

import (
	"slices"
	"testing"
)

// TestGoroutineGroups_GroupsByTheFirstOpenZitiFrame: the summary a failed
// chaos round prints groups goroutines by where OpenZiti's own code waits,
// skips the channel library's frames and the arguments, and keeps the
// longest wait of a group.
func TestGoroutineGroups_GroupsByTheFirstOpenZitiFrame(t *testing.T) {
	dump := `goroutine 1 [select, 3 minutes]:
github.com/openziti/channel/v4.(*channelImpl).Send(0x1)
	/x/channel.go:1 +0x1
github.com/openziti/ziti/router/xgress_edge.(*xgEdgeForwarder).Unrouted(0xc0)
	/x/listener.go:1504 +0x2

goroutine 2 [select, 12 minutes]:
github.com/openziti/ziti/router/xgress_edge.(*xgEdgeForwarder).Unrouted(0xc1)
	/x/listener.go:1504 +0x2

goroutine 3 [IO wait]:
internal/poll.runtime_pollWait(0x1)
	/x/netpoll.go:1 +0x1
github.com/openziti/ziti/tunnel.myCopy({0x7f, 0x1}, {0x4, 0x2})
	/x/tunnel.go:145 +0x3
created by github.com/openziti/ziti/tunnel.Run in goroutine 9
	/x/tunnel.go:80 +0x4

goroutine 4 [running]:
main.main()
	/x/main.go:1 +0x1
`
	got := goroutineGroups(dump, 5)
	want := []string{
		"2 × github.com/openziti/ziti/router/xgress_edge.(*xgEdgeForwarder).Unrouted [select] (longest: 12 minutes)",
		"1 × github.com/openziti/ziti/tunnel.myCopy [IO wait]",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := goroutineGroups(dump, 1); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("limit 1: got %q", got)
	}
}

// TestTunnelHostWedged_TheAcceptLoopBlockedInCompleteAcceptSuccess: the
// short chaos run restarts a `ziti tunnel host` whose accept loop waits in
// CompleteAcceptSuccess with dials queued behind it, and only then.
func TestTunnelHostWedged_TheAcceptLoopBlockedInCompleteAcceptSuccess(t *testing.T) {
	accept := `goroutine 371 [select, 1 minutes]:
github.com/openziti/sdk-golang/xgress.(*LinkSendBuffer).BufferPayloadWithDeadline(0x1, 0x2, {0x3, 0x4})
	/x/link_send_buffer.go:140 +0x126
github.com/openziti/sdk-golang/ziti/edge/network.(*edgeConn).CompleteAcceptSuccess(0x10471ff70480)
	/x/conn.go:866 +0x27
github.com/openziti/ziti/tunnel.(*contextProvider).accept(0x1, {0x2, 0x3}, {0x4, 0x5})
	/x/provider.go:165 +0x84d
`
	queued := `goroutine 900 [chan send, 1 minutes]:
github.com/openziti/sdk-golang/ziti/edge/network.(*edgeHostConn).newChildConnection(0x1, 0x2)
	/x/conn.go:500 +0x1
`
	idle := `goroutine 371 [select]:
github.com/openziti/sdk-golang/ziti/edge/network.(*baseListener).AcceptEdge(0x1)
	/x/listener.go:90 +0x1
github.com/openziti/ziti/tunnel.(*contextProvider).accept(0x1, {0x2, 0x3}, {0x4, 0x5})
	/x/provider.go:137 +0x84d
`
	if !tunnelHostWedged(accept + "\n" + queued) {
		t.Error("an accept loop blocked in CompleteAcceptSuccess with a dial queued: not seen as wedged")
	}
	if tunnelHostWedged(accept) {
		t.Error("an accept loop in CompleteAcceptSuccess with nothing queued: seen as wedged")
	}
	if tunnelHostWedged(idle + "\n" + queued) {
		t.Error("an accept loop waiting for a dial: seen as wedged")
	}
}
