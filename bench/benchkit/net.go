package benchkit

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// TCPProxy forwards TCP connections on 127.0.0.1 to a target: the carrier
// of a link between routers, or of a node's cluster traffic. Cut closes
// every connection and refuses new ones (accepted, then closed) until Heal.
type TCPProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cutOn bool
	conns map[net.Conn]struct{}
}

// NewTCPProxy listens on a free port of 127.0.0.1 and forwards each
// connection to target (HOST:PORT) until Close.
func NewTCPProxy(target string) (*TCPProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &TCPProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

// Addr is where the proxy listens (HOST:PORT).
func (p *TCPProxy) Addr() string { return p.ln.Addr().String() }

func (p *TCPProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(in)
	}
}

func (p *TCPProxy) forward(in net.Conn) {
	if !p.track(in) {
		in.Close()
		return
	}
	out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil || !p.track(out) {
		in.Close()
		if out != nil {
			out.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done // one direction ended: end both, as a broken carrier would
	in.Close()
	out.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

// track registers a connection unless the proxy is cut.
func (p *TCPProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cutOn {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// Cut drops every connection through the proxy and refuses new ones.
func (p *TCPProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutOn = true
	for c := range p.conns {
		c.Close()
	}
}

// Heal lets connections through again.
func (p *TCPProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutOn = false
}

// Close stops the proxy: it cuts it and stops listening.
func (p *TCPProxy) Close() {
	p.Cut()
	p.ln.Close()
}

// EchoServer accepts connections on a free port of 127.0.0.1 and writes
// back what each reads, until the listener is closed.
func EchoServer() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln, nil
}

// EchoOn writes s on c and reads it back within timeout; an error if the
// bytes read back are not s.
func EchoOn(c net.Conn, s string, timeout time.Duration) error {
	_ = c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte(s)); err != nil {
		return err
	}
	b := make([]byte, len(s))
	if _, err := io.ReadFull(c, b); err != nil {
		return err
	}
	if string(b) != s {
		return fmt.Errorf("echoed %q, want %q", b, s)
	}
	return nil
}

// DialOnce connects to an echo service at addr (a tunneler's proxy port,
// say) and times the connection from its start to the first byte echoed;
// timeout bounds the connect and the echo each.
func DialOnce(addr string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := EchoOn(c, "x", timeout); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
