package integration

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// tcpProxy forwards TCP connections to a node's cluster port. cut closes
// every connection and refuses new ones until heal: the node then receives
// no cluster traffic at all (its own outgoing connections to the other
// nodes go through their proxies and keep working).
type tcpProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cutOn bool
	conns map[net.Conn]struct{}
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.closeAll() })
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(in)
	}
}

func (p *tcpProxy) forward(in net.Conn) {
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
	<-done // one direction ended: end both, as a broken link would
	in.Close()
	out.Close()
	<-done
	p.untrack(in, out)
}

// track registers a connection unless the proxy is cut.
func (p *tcpProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cutOn {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *tcpProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// cut drops every connection through the proxy and refuses new ones.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	p.cutOn = true
	p.mu.Unlock()
	p.closeAll()
}

// heal lets connections through again.
func (p *tcpProxy) heal() {
	p.mu.Lock()
	p.cutOn = false
	p.mu.Unlock()
}

func (p *tcpProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}
