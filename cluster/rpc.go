package cluster

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RPC framing (protocol byte protoRPC). One connection carries many
// concurrent requests; responses come back in any order, matched by id.
//
//	frame    = length:u32 (bytes after this field) kind:u8 id:u64 rest
//	request  rest = timeoutMillis:u32 (0 = none) nameLen:u8 name body
//	response rest = code:u8 body   (code != 0: body is the error message)
//
// All integers are big endian. The caller's deadline travels as a relative
// timeout so that clock skew between nodes does not matter.
const (
	frameRequest  byte = 1
	frameResponse byte = 2

	frameHeaderLen = 4 + 1 + 8
	maxFrameSize   = 64 << 20 // refuses absurd lengths from a broken peer
	writeTimeout   = 10 * time.Second
)

// RPCHandler serves one RPC name. peerCert is the verified leaf certificate
// of the calling node (nil only if the TLS config allows callers without a
// client certificate). The returned bytes are sent back unchanged; a returned
// error travels as a code (see RemoteError) plus its message.
type RPCHandler func(ctx context.Context, peerCert *x509.Certificate, req []byte) ([]byte, error)

// internalPrefix names the RPCs this package registers itself.
const internalPrefix = "cluster."

// RegisterRPC adds a handler for name, served on the cluster port of this
// node. Register before other nodes call it (typically right after New).
// Names are at most 255 bytes; the "cluster." prefix is reserved. It panics
// on a reserved, empty or duplicate name, like http.ServeMux does, because
// that is a programming error.
func (n *Node) RegisterRPC(name string, h RPCHandler) {
	if strings.HasPrefix(name, internalPrefix) {
		panic("cluster: RegisterRPC: reserved name " + name)
	}
	n.registerRPC(name, h)
}

func (n *Node) registerRPC(name string, h RPCHandler) {
	if name == "" || len(name) > 255 || h == nil {
		panic(fmt.Sprintf("cluster: RegisterRPC: invalid name %q or nil handler", name))
	}
	n.handlersMu.Lock()
	defer n.handlersMu.Unlock()
	if _, dup := n.handlers[name]; dup {
		panic("cluster: RegisterRPC: duplicate name " + name)
	}
	n.handlers[name] = h
}

// CallRPC calls the named RPC on the node at addr (its cluster address) over
// a pooled, multiplexed mTLS connection. The context's deadline is passed on
// to the remote handler. Errors from the remote handler are *RemoteError.
func (n *Node) CallRPC(ctx context.Context, addr, name string, req []byte) ([]byte, error) {
	if len(name) == 0 || len(name) > 255 {
		return nil, fmt.Errorf("cluster: invalid rpc name %q", name)
	}
	if n.closed.Load() {
		return nil, ErrShutdown
	}
	c, err := n.pool.get(ctx, addr)
	if err != nil {
		return nil, err
	}
	return c.call(ctx, name, req)
}

// frameWriter serialises frames from many goroutines onto one connection and
// coalesces flushes: whoever writes last in a burst flushes for everybody,
// so N concurrent responses cost one TLS record / syscall instead of N.
type frameWriter struct {
	conn    *tls.Conn
	waiting atomic.Int32
	mu      sync.Mutex
	bw      *bufio.Writer
	err     error
}

// nowQueueMax is the most bytes a connection's socket may hold unacknowledged
// by the peer for writeNow to write on it: a write blocks only once the
// socket's send buffer is full (16 KiB at least, counted with the kernel's
// overhead per segment: some 10 segments of answers), which a peer that
// reads, and so acknowledges, never lets happen.
const nowQueueMax = 1 << 10

// writeNow writes the frames and flushes them if it can without waiting:
// nobody else is writing on the connection and its socket holds under
// nowQueueMax bytes the peer has not acknowledged (a peer that stopped
// reading, paused or cut off, would let a write block for writeTimeout).
// It reports whether it wrote; when it did not, it wrote nothing. For
// raft's FSM goroutine, which answers forwarded writes at commit
// (forwardWaits.committed) and must never wait on a peer.
func (w *frameWriter) writeNow(frames [][]byte) bool {
	q, ok := w.conn.NetConn().(interface{ sendQueued() (int, bool) })
	if !ok || !w.mu.TryLock() {
		return false
	}
	defer w.mu.Unlock()
	size := w.bw.Buffered()
	for _, f := range frames {
		size += len(f)
	}
	if queued, known := q.sendQueued(); !known || queued+size > nowQueueMax || w.err != nil {
		return false
	}
	if w.put(frames[0], frames[1:]...) == nil {
		w.err = w.bw.Flush()
	}
	return true // written, or the connection is gone: so is the answer, by any path
}

func newFrameWriter(c *tls.Conn) *frameWriter {
	return &frameWriter{conn: c, bw: bufio.NewWriterSize(c, 32<<10)}
}

// write sends one frame made of hdr followed by the parts.
func (w *frameWriter) write(hdr []byte, parts ...[]byte) error {
	w.waiting.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	last := w.waiting.Add(-1) == 0
	if w.err != nil {
		return w.err
	}
	if w.put(hdr, parts...) == nil && last {
		w.err = w.bw.Flush()
	}
	return w.err
}

// put buffers first and then rest, keeping the first error in w.err; w.mu
// is held.
func (w *frameWriter) put(first []byte, rest ...[]byte) error {
	_ = w.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, w.err = w.bw.Write(first); w.err != nil {
		return w.err
	}
	for _, b := range rest {
		if _, w.err = w.bw.Write(b); w.err != nil {
			return w.err
		}
	}
	return nil
}

// readFrame reads one frame; the returned slice starts at the kind byte.
func readFrame(r *bufio.Reader) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(l[:])
	if size < 1+8 || size > maxFrameSize {
		return nil, fmt.Errorf("cluster: bad rpc frame length %d", size)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// serveRPC runs the server side of one RPC connection: it reads requests
// and runs each in its own goroutine, because handlers block (a forwarded
// write waits for its commit) and must not hold up the requests behind them.
func (n *Node) serveRPC(c *tls.Conn, peer *x509.Certificate) {
	defer n.mux.closeConn(c)
	ctx, cancel := context.WithCancel(n.ctx)
	defer cancel()
	br := bufio.NewReaderSize(c, 32<<10)
	w := newFrameWriter(c)
	for {
		f, err := readFrame(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !n.closed.Load() {
				n.logger.Debug("rpc connection ended", "remote", c.RemoteAddr().String(), "error", err)
			}
			return
		}
		if f[0] != frameRequest || len(f) < 1+8+4+1 {
			n.logger.Warn("malformed rpc frame", "remote", c.RemoteAddr().String())
			return
		}
		id := binary.BigEndian.Uint64(f[1:9])
		timeout := time.Duration(binary.BigEndian.Uint32(f[9:13])) * time.Millisecond
		nameLen := int(f[13])
		if len(f) < 14+nameLen {
			n.logger.Warn("malformed rpc frame", "remote", c.RemoteAddr().String())
			return
		}
		name := string(f[14 : 14+nameLen])
		body := f[14+nameLen:]
		n.rpcGate.RLock()
		draining := n.draining
		if !draining {
			n.inflight.Add(1)
		}
		n.rpcGate.RUnlock()
		if draining {
			// Answered inline: the handler never runs, so the caller may
			// safely retry on another node.
			msg := []byte(errRefused.Error())
			_ = w.write(responseHeader(id, codeRefused, len(msg)), msg)
			continue
		}
		go n.handleRPC(ctx, w, peer, id, timeout, name, body)
	}
}

// rpcReply is the response to an RPC being served: a handler may have it
// sent before it returns (replyOf); handleRPC then sends nothing more.
type rpcReply struct {
	w    *frameWriter
	id   uint64
	sent atomic.Bool // the response is on its way
}

type rpcReplyKey struct{}

// replyOf is the reply of the RPC a handler's ctx serves, or nil (the
// handler was called locally).
func replyOf(ctx context.Context) *rpcReply {
	r, _ := ctx.Value(rpcReplyKey{}).(*rpcReply)
	return r
}

// frame is the response frame carrying body as a success.
func (r *rpcReply) frame(body []byte) []byte {
	return append(responseHeader(r.id, codeOK, len(body)), body...)
}

func responseHeader(id uint64, code byte, bodyLen int) []byte {
	hdr := make([]byte, frameHeaderLen+1)
	binary.BigEndian.PutUint32(hdr[0:4], uint32(1+8+1+bodyLen))
	hdr[4] = frameResponse
	binary.BigEndian.PutUint64(hdr[5:13], id)
	hdr[13] = code
	return hdr
}

func (n *Node) handleRPC(ctx context.Context, w *frameWriter, peer *x509.Certificate, id uint64, timeout time.Duration, name string, body []byte) {
	defer n.inflight.Done()
	var resp []byte
	var err error
	n.handlersMu.RLock()
	h := n.handlers[name]
	n.handlersMu.RUnlock()
	switch {
	case h == nil:
		err = fmt.Errorf("%w %q", ErrUnknownRPC, name)
	case peer == nil && strings.HasPrefix(name, internalPrefix):
		err = errUnauthorized
	default:
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		reply := &rpcReply{w: w, id: id}
		resp, err = n.runHandler(context.WithValue(ctx, rpcReplyKey{}, reply), h, name, peer, body)
		if reply.sent.Load() {
			return
		}
	}
	if err == nil && len(resp) > maxFrameSize-64 {
		err = fmt.Errorf("cluster: rpc %s: response of %d bytes exceeds the frame limit", name, len(resp))
	}
	code := errorCode(err)
	if err != nil {
		resp = []byte(err.Error())
	}
	// A write error means the connection is gone; the reader loop notices.
	_ = w.write(responseHeader(id, code, len(resp)), resp)
}

// runHandler turns a handler panic into an error for the caller: a bad
// request from a peer must not take the whole controller down.
func (n *Node) runHandler(ctx context.Context, h RPCHandler, name string, peer *x509.Certificate, body []byte) (resp []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			n.logger.Error("rpc handler panicked", "rpc", name, "panic", r)
			resp, err = nil, fmt.Errorf("cluster: rpc %s: handler panicked", name)
		}
	}()
	return h(ctx, peer, body)
}

var errRefused = fmt.Errorf("node is shutting down: %w", ErrShutdown)
