package cluster

import (
	"net"
	"sync"
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
