package cluster

import (
	"net"
	"sync"

	"github.com/hashicorp/raft"
)

// Fault injection for tests: a frozen node's cluster connections stop
// delivering bytes in either direction, as if the process were paused
// (SIGSTOP) while its TCP connections stay open. Reads and writes that
// start while frozen wait until the node thaws or the connection closes.
// Nothing in production freezes a node; the cost when not frozen is one
// atomic load per read and write of the cluster port.

// freezeGate blocks connection I/O while a node is frozen.
type freezeGate struct {
	mu     sync.Mutex
	frozen bool
	thawed chan struct{} // closed when the node thaws
}

func (g *freezeGate) set(frozen bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case frozen && !g.frozen:
		g.frozen, g.thawed = true, make(chan struct{})
	case !frozen && g.frozen:
		g.frozen = false
		close(g.thawed)
	}
}

// wait returns at once unless frozen, then when thawed or done is closed.
func (g *freezeGate) wait(done <-chan struct{}) {
	g.mu.Lock()
	frozen, ch := g.frozen, g.thawed
	g.mu.Unlock()
	if !frozen {
		return
	}
	select {
	case <-ch:
	case <-done:
	}
}

// gatedConn is a TCP connection of the cluster port under the node's gate.
type gatedConn struct {
	net.Conn
	g      *freezeGate
	closed chan struct{}
	once   sync.Once
}

func newGatedConn(c net.Conn, g *freezeGate) *gatedConn {
	return &gatedConn{Conn: c, g: g, closed: make(chan struct{})}
}

func (c *gatedConn) Read(p []byte) (int, error) {
	c.g.wait(c.closed)
	n, err := c.Conn.Read(p)
	c.g.wait(c.closed) // bytes that arrive while frozen are held until the thaw
	return n, err
}

func (c *gatedConn) Write(p []byte) (int, error) {
	c.g.wait(c.closed)
	return c.Conn.Write(p)
}

// sendQueued is the socket's bytes not yet acknowledged by the peer (see
// the function); ok is false while the node is frozen, when a write could
// wait for the thaw.
func (c *gatedConn) sendQueued() (n int, ok bool) {
	c.g.mu.Lock()
	frozen := c.g.frozen
	c.g.mu.Unlock()
	if frozen {
		return 0, false
	}
	return sendQueued(c.Conn)
}

func (c *gatedConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// Freeze stops (true) or resumes (false) all traffic of this node's cluster
// port, for fault tests: see faults.go.
func (n *Node) Freeze(frozen bool) { n.mux.gate.set(frozen) }

// StaleAcks has this node's heartbeats to the other members answered at
// once, without being sent, with the success a follower of this node's term
// gave before (true), or sent again (false), for fault tests. It stands for
// a leader that was paused (SIGSTOP) with its followers' answers in its
// sockets and reads them when it resumes, after the others have moved on:
// raft takes them as fresh.
func (n *Node) StaleAcks(on bool) { n.trans.staleAcks.Store(on) }

// AppendEntries is raft's, but for a heartbeat under StaleAcks.
func (t *gatedTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	if len(args.Entries) == 0 && t.staleAcks.Load() {
		*resp = raft.AppendEntriesResponse{RPCHeader: raft.RPCHeader{ProtocolVersion: args.ProtocolVersion},
			Term: args.Term, LastLog: args.PrevLogEntry, Success: true}
		return nil
	}
	return t.NetworkTransport.AppendEntries(id, target, args, resp)
}
