package cluster

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Client side of the RPC protocol: one multiplexed connection per remote
// node, shared by all callers; responses are matched to callers by id.

// rpcPool keeps one multiplexed connection per remote address.
type rpcPool struct {
	n     *Node
	mu    sync.Mutex
	slots map[string]*poolSlot
	done  bool
}

type poolSlot struct {
	sem  chan struct{} // 1-slot lock held while dialing, so concurrent callers share one dial
	conn *rpcConn      // guarded by sem
}

func (p *rpcPool) get(ctx context.Context, addr string) (*rpcConn, error) {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return nil, ErrShutdown
	}
	s := p.slots[addr]
	if s == nil {
		s = &poolSlot{sem: make(chan struct{}, 1)}
		p.slots[addr] = s
	}
	p.mu.Unlock()

	// A channel instead of a mutex: callers queued behind a slow dial can
	// still give up when their own context ends.
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, &notSentError{ctx.Err()}
	}
	defer func() { <-s.sem }()
	if s.conn != nil && !s.conn.isClosed() {
		return s.conn, nil
	}
	dctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	tc, err := p.n.mux.dial(dctx, addr, protoRPC)
	if err != nil {
		return nil, &notSentError{fmt.Errorf("cluster: dial %s: %w", addr, err)}
	}
	c := &rpcConn{addr: addr, c: tc, w: newFrameWriter(tc), pending: make(map[uint64]*rpcCall), m: p.n.mux}
	go c.readLoop()
	s.conn = c
	return c, nil
}

func (p *rpcPool) close() {
	p.mu.Lock()
	p.done = true
	slots := p.slots
	p.slots = nil
	p.mu.Unlock()
	for _, s := range slots {
		s.sem <- struct{}{}
		if s.conn != nil {
			s.conn.fail(ErrShutdown)
		}
		<-s.sem
	}
}

// rpcConn is the client side of one multiplexed RPC connection.
type rpcConn struct {
	addr string
	c    *tls.Conn
	w    *frameWriter
	m    *mux

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]*rpcCall
	err     error // non-nil once the connection is dead
}

type rpcCall struct {
	ch chan rpcResult // buffered(1): the reader never blocks on a caller
}

type rpcResult struct {
	code byte
	body []byte
	err  error
}

var callPool = sync.Pool{New: func() any { return &rpcCall{ch: make(chan rpcResult, 1)} }}

func (c *rpcConn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil
}

func (c *rpcConn) call(ctx context.Context, name string, body []byte) ([]byte, error) {
	call := callPool.Get().(*rpcCall)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		callPool.Put(call)
		return nil, &notSentError{err}
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = call
	c.mu.Unlock()

	var timeoutMs uint32
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			c.forget(id, call)
			return nil, context.DeadlineExceeded
		}
		timeoutMs = uint32(min(max(left.Milliseconds(), 1), int64(^uint32(0))))
	}
	var hdr [frameHeaderLen + 4 + 1]byte
	binary.BigEndian.PutUint32(hdr[0:4], uint32(1+8+4+1+len(name)+len(body)))
	hdr[4] = frameRequest
	binary.BigEndian.PutUint64(hdr[5:13], id)
	binary.BigEndian.PutUint32(hdr[13:17], timeoutMs)
	hdr[17] = byte(len(name))
	if err := c.w.write(hdr[:], []byte(name), body); err != nil {
		c.fail(err)
		// The result (a failure) is delivered through the channel by fail.
	}
	select {
	case r := <-call.ch:
		callPool.Put(call)
		if r.err != nil {
			// Written but never answered: the remote may have run it.
			return nil, fmt.Errorf("cluster: rpc %s to %s: %w: %w", name, c.addr, ErrOutcomeUnknown, r.err)
		}
		if r.code != codeOK {
			return nil, &RemoteError{Addr: c.addr, Code: r.code, Message: string(r.body)}
		}
		return r.body, nil
	case <-ctx.Done():
		c.forget(id, call)
		return nil, fmt.Errorf("cluster: rpc %s to %s: %w: %w", name, c.addr, ErrOutcomeUnknown, ctx.Err())
	}
}

// forget drops a call the caller gave up on. The call object only goes back
// to the pool if the reader had not already claimed it (it might still send).
func (c *rpcConn) forget(id uint64, call *rpcCall) {
	c.mu.Lock()
	_, still := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if still {
		callPool.Put(call)
	}
}

func (c *rpcConn) readLoop() {
	br := bufio.NewReaderSize(c.c, 32<<10)
	for {
		f, err := readFrame(br)
		if err != nil {
			c.fail(err)
			return
		}
		if f[0] != frameResponse || len(f) < 1+8+1 {
			c.fail(errors.New("malformed rpc response"))
			return
		}
		id := binary.BigEndian.Uint64(f[1:9])
		c.mu.Lock()
		call := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if call != nil {
			call.ch <- rpcResult{code: f[9], body: f[10:]}
		}
	}
}

// fail marks the connection dead and fails every pending call. Requests
// already written may or may not have run on the remote node, so these
// errors are not marked retryable.
func (c *rpcConn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	pending := c.pending
	c.pending = make(map[uint64]*rpcCall)
	c.mu.Unlock()
	for _, call := range pending {
		call.ch <- rpcResult{err: err}
	}
	c.m.closeConn(c.c)
}
