package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Protocol bytes: the first byte a client writes after the TLS handshake
// selects what the rest of the connection speaks. Values are part of the
// protocol between nodes.
const (
	protoRaft byte = 1 // hashicorp/raft NetworkTransport (msgpack RPCs)
	protoRPC  byte = 2 // this package's framed request/response RPC (rpc.go)
)

// handshakeTimeout bounds the TLS handshake plus the protocol byte, so that a
// silent client cannot hold a goroutine forever.
const handshakeTimeout = 10 * time.Second

// mux owns the single cluster listener. It terminates TLS, checks the peer,
// reads the protocol byte and hands the connection to raft or to the RPC
// server. It also tracks every live connection (inbound and dialed) so that
// Shutdown can close them all.
type mux struct {
	gate       freezeGate   // fault injection (faults.go)
	ln         net.Listener // plain TCP; TLS is done per connection
	serverTLS  *tls.Config
	clientTLS  *tls.Config // template; ServerName is set per dial
	verifyPeer func(*x509.Certificate) error
	logger     hclog.Logger

	raftCh chan net.Conn // accepted raft connections, consumed by raftLayer.Accept
	rpc    func(c *tls.Conn, peer *x509.Certificate)

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup // accept loop and per-connection setup goroutines
}

func newMux(ln net.Listener, base *tls.Config, verifyPeer func(*x509.Certificate) error, logger hclog.Logger) *mux {
	srv := base.Clone()
	// A cluster port that does not verify client certificates would let
	// anybody speak raft; upgrade any weaker setting. VerifyClientCertIfGiven
	// is kept (a later join flow may need certificate-less callers); raft and
	// the built-in RPCs still refuse peers without a certificate.
	if srv.ClientAuth != tls.VerifyClientCertIfGiven {
		srv.ClientAuth = tls.RequireAndVerifyClientCert
	}
	if srv.MinVersion < tls.VersionTLS12 {
		srv.MinVersion = tls.VersionTLS12
	}
	cli := base.Clone()
	if cli.MinVersion < tls.VersionTLS12 {
		cli.MinVersion = tls.VersionTLS12
	}
	return &mux{
		ln:         ln,
		serverTLS:  srv,
		clientTLS:  cli,
		verifyPeer: verifyPeer,
		logger:     logger,
		raftCh:     make(chan net.Conn),
		conns:      make(map[net.Conn]struct{}),
		done:       make(chan struct{}),
	}
}

func (m *mux) start() {
	m.wg.Add(1)
	go m.acceptLoop()
}

func (m *mux) acceptLoop() {
	defer m.wg.Done()
	var backoff time.Duration
	for {
		c, err := m.ln.Accept()
		if err != nil {
			select {
			case <-m.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Temporary failures (EMFILE...): back off instead of spinning.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			m.logger.Warn("cluster accept failed", "error", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-m.done:
				return
			}
			continue
		}
		backoff = 0
		tc := tls.Server(newGatedConn(c, &m.gate), m.serverTLS)
		if !m.track(tc) {
			return
		}
		m.wg.Add(1)
		go m.setup(tc)
	}
}

// setup runs the handshake off the accept loop (a slow client must not
// delay others), then dispatches on the protocol byte.
func (m *mux) setup(c *tls.Conn) {
	defer m.wg.Done()
	peer, proto, err := m.serverHandshake(c)
	if err != nil {
		m.logger.Debug("cluster connection rejected", "remote", c.RemoteAddr().String(), "error", err)
		m.closeConn(c)
		return
	}
	switch proto {
	case protoRaft:
		if peer == nil {
			m.logger.Warn("raft connection without client certificate refused", "remote", c.RemoteAddr().String())
			m.closeConn(c)
			return
		}
		select {
		case m.raftCh <- &trackedConn{Conn: c, m: m}:
		case <-m.done:
			m.closeConn(c)
		}
	case protoRPC:
		// The RPC server runs in this goroutine; it closes c when done.
		m.rpc(c, peer)
	default:
		m.logger.Warn("unknown cluster protocol byte", "byte", proto, "remote", c.RemoteAddr().String())
		m.closeConn(c)
	}
}

func (m *mux) serverHandshake(c *tls.Conn) (*x509.Certificate, byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, 0, fmt.Errorf("tls handshake: %w", err)
	}
	var peer *x509.Certificate
	if certs := c.ConnectionState().PeerCertificates; len(certs) > 0 {
		peer = certs[0]
		if m.verifyPeer != nil {
			if err := m.verifyPeer(peer); err != nil {
				return nil, 0, fmt.Errorf("peer %q refused: %w", peer.Subject.CommonName, err)
			}
		}
	}
	var b [1]byte
	_ = c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	// io.ReadFull on the tls.Conn reads exactly one byte; anything else the
	// client already sent stays buffered inside the tls.Conn for the next
	// reader (raft or the RPC server).
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return nil, 0, fmt.Errorf("protocol byte: %w", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	return peer, b[0], nil
}

// dial opens a verified TLS connection to addr and writes the protocol byte.
func (m *mux) dial(ctx context.Context, addr string, proto byte) (*tls.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	cfg := m.clientTLS.Clone()
	// Node certificates carry the advertise host (plus localhost/127.0.0.1)
	// as SANs, so standard hostname verification against the CA pool works.
	cfg.ServerName = host
	d := &net.Dialer{Timeout: handshakeTimeout, KeepAlive: 15 * time.Second}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := tls.Client(newGatedConn(raw, &m.gate), cfg)
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	err = c.HandshakeContext(hctx)
	cancel()
	if err != nil {
		raw.Close()
		return nil, err
	}
	if m.verifyPeer != nil {
		if certs := c.ConnectionState().PeerCertificates; len(certs) > 0 {
			if err := m.verifyPeer(certs[0]); err != nil {
				c.Close()
				return nil, fmt.Errorf("server %s refused: %w", addr, err)
			}
		}
	}
	if !m.track(c) {
		c.Close()
		return nil, ErrShutdown
	}
	_ = c.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	if _, err := c.Write([]byte{proto}); err != nil {
		m.closeConn(c)
		return nil, err
	}
	_ = c.SetWriteDeadline(time.Time{})
	return c, nil
}

func (m *mux) track(c net.Conn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		c.Close()
		return false
	}
	m.conns[c] = struct{}{}
	return true
}

func (m *mux) closeConn(c net.Conn) {
	m.mu.Lock()
	delete(m.conns, c)
	m.mu.Unlock()
	c.Close()
}

// stopAccepting closes the listener; existing connections stay up so that
// in-flight RPCs can still answer.
func (m *mux) stopAccepting() {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.done)
	}
	m.mu.Unlock()
	m.ln.Close()
}

// isClosed reports whether the mux stopped accepting (the node is stopping).
func (m *mux) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// close closes the listener and every tracked connection, then waits for the
// connection goroutines it started.
func (m *mux) close() {
	m.stopAccepting()
	m.mu.Lock()
	conns := m.conns
	m.conns = make(map[net.Conn]struct{})
	m.mu.Unlock()
	for c := range conns {
		c.Close()
	}
	m.wg.Wait()
}

// trackedConn removes itself from the mux's set when its user closes it.
type trackedConn struct {
	net.Conn
	m    *mux
	once sync.Once
}

// Read reports a connection the node closed while shutting down as an
// orderly end (io.EOF): raft's transport logs any other read error of an
// inbound connection as an error, and a clean shutdown is not one.
func (t *trackedConn) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	if err != nil && errors.Is(err, net.ErrClosed) && t.m.isClosed() {
		err = io.EOF
	}
	return n, err
}

func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.m.mu.Lock()
		delete(t.m.conns, t.Conn)
		t.m.mu.Unlock()
	})
	return t.Conn.Close()
}

// raftLayer is the raft.StreamLayer view of the mux: raft connections only.
type raftLayer struct {
	m         *mux
	advertise net.Addr
	closeOnce sync.Once
	closed    chan struct{}
}

var _ raft.StreamLayer = (*raftLayer)(nil)

func newRaftLayer(m *mux, advertise string) *raftLayer {
	return &raftLayer{m: m, advertise: strAddr(advertise), closed: make(chan struct{})}
}

// Accept returns the next inbound raft connection. It ends only when the
// raft transport closes the layer: the node stops the mux from accepting
// before it shuts raft down, and an Accept that failed then would be logged
// by raft's accept loop as an error on every clean shutdown.
func (l *raftLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.m.raftCh:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops raft from accepting; the listener itself belongs to the mux
// (raft.Shutdown calls this before the node closes the mux).
func (l *raftLayer) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// Addr is the advertised address: raft puts it into votes and leader info.
func (l *raftLayer) Addr() net.Addr { return l.advertise }

// raftDialRetry is how often Dial tries a peer again that it could not
// reach.
const raftDialRetry = 25 * time.Millisecond

// Dial opens a raft connection to a peer. A peer that cannot be reached
// (down, restarting) is tried again every raftDialRetry until the
// transport's timeout, or until this node stops, before Dial fails. The
// reason is raft's backoff: each failed call to a follower doubles the wait
// of the leader's replication to it before the next one (10 ms, then 20,
// 40, ... up to 10 s; hashicorp/raft's replicateTo), and a dial refused at
// once is a failed call every few milliseconds. A follower down for two
// seconds found the leader's replication waiting 2.5 s more after it came
// back, and a follower down for ten seconds 10 s: the restarted node was
// ready only then (issue 46). Held here, a call fails once per timeout at
// most, and replication goes on as soon as the peer answers again.
func (l *raftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		c, err := l.m.dial(ctx, string(address), protoRaft)
		cancel()
		if err == nil {
			return &trackedConn{Conn: c, m: l.m}, nil
		}
		if time.Until(deadline) < raftDialRetry {
			return nil, err
		}
		t := time.NewTimer(raftDialRetry)
		select {
		case <-l.m.done:
			t.Stop()
			return nil, err
		case <-l.closed:
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

type strAddr string

func (a strAddr) Network() string { return "tcp" }
func (a strAddr) String() string  { return string(a) }

// gatedTransport is raft's NetworkTransport with one change: the heartbeat
// fast path stops at shutdown. NetworkTransport runs heartbeats on its own
// connection goroutines, straight into raft, not through raft's loops that
// raft.Shutdown waits for. A heartbeat with a newer term writes that term to
// the stable store, and raft panics when the write fails, so a heartbeat that
// arrives while the node closes its log store crashed the process ("failed to
// save current term: database not open"). stopHeartbeats waits for the running
// heartbeats and refuses later ones; the store is closed after it.
type gatedTransport struct {
	*raft.NetworkTransport
	hb        heartbeatGate
	staleAcks atomic.Bool // faults.go
}

func (t *gatedTransport) SetHeartbeatHandler(cb func(raft.RPC)) {
	t.NetworkTransport.SetHeartbeatHandler(t.hb.wrap(cb))
}

// stopHeartbeats returns once no heartbeat is inside raft, and none will be.
func (t *gatedTransport) stopHeartbeats() { t.hb.close() }

// AppendEntriesPipeline is raft's pipeline with its responses always read
// (drainedPipeline).
func (t *gatedTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.NetworkTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	return newDrainedPipeline(p), nil
}

// drainedPipeline reads the responses of a raft pipeline as they come,
// into a queue of its own that Consumer serves. hashicorp/raft 1.7.3 can
// wedge a leader's replication to one follower without it: when the
// follower answers Success=false, raft's reader of the responses
// (pipelineDecode) returns; the next send then waits for room among the
// requests in flight, which waits for the transport to hand over a
// response that nobody reads any more. The send never returns, so the
// replication goroutine never closes the pipeline: the follower keeps
// getting heartbeats but no entries, and raft.Shutdown waits forever (a CI
// run hung so, in the cluster tests; upstream hashicorp/raft issue 612).
// With the queue, the transport never waits for a reader, the send
// returns, and the replication loop sees its reader gone and closes the
// pipeline, which ends the queue. The queue holds at most the requests in
// flight when the reader went.
type drainedPipeline struct {
	raft.AppendPipeline
	out      chan raft.AppendFuture
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func newDrainedPipeline(p raft.AppendPipeline) *drainedPipeline {
	d := &drainedPipeline{AppendPipeline: p, out: make(chan raft.AppendFuture), stop: make(chan struct{}), done: make(chan struct{})}
	go d.run()
	return d
}

func (d *drainedPipeline) run() {
	defer close(d.done)
	in := d.AppendPipeline.Consumer()
	var queue []raft.AppendFuture
	for {
		var out chan raft.AppendFuture
		var next raft.AppendFuture
		if len(queue) > 0 {
			out, next = d.out, queue[0]
		}
		select {
		case f := <-in:
			queue = append(queue, f)
		case out <- next:
			queue[0] = nil
			queue = queue[1:]
		case <-d.stop:
			return
		}
	}
}

// Consumer serves the responses in the order they came.
func (d *drainedPipeline) Consumer() <-chan raft.AppendFuture { return d.out }

// Close closes raft's pipeline and ends the reading.
func (d *drainedPipeline) Close() error {
	err := d.AppendPipeline.Close()
	d.stopOnce.Do(func() { close(d.stop) })
	<-d.done
	return err
}

type heartbeatGate struct {
	mu     sync.RWMutex
	closed bool
}

func (g *heartbeatGate) wrap(cb func(raft.RPC)) func(raft.RPC) {
	if cb == nil {
		return nil
	}
	return func(rpc raft.RPC) {
		g.mu.RLock()
		defer g.mu.RUnlock()
		if g.closed {
			rpc.Respond(nil, raft.ErrTransportShutdown)
			return
		}
		cb(rpc)
	}
}

func (g *heartbeatGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
