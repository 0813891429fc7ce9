package ctrlchan

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Options tune an accepted channel. Zero fields take the defaults.
type Options struct {
	// HeartbeatInterval is how often this side sends a heartbeat (on an
	// outgoing message or in a heartbeat message of its own); 10 s.
	HeartbeatInterval time.Duration
	// CheckInterval is how often the heartbeat state is checked; 1 s.
	CheckInterval time.Duration
	// UnresponsiveTimeout closes a channel whose peer has not answered a
	// heartbeat for this long; 30 s.
	UnresponsiveTimeout time.Duration
	// WriteTimeout bounds one write to the connection and a Send's wait for
	// room in the queue; 10 s.
	WriteTimeout time.Duration
	// QueueSize is the number of messages waiting to be written; 256.
	QueueSize int
	// UrgentQueueSize is the number of Urgent messages waiting to be
	// written; 4096. A peer that lets more wait is closed at once: an
	// Urgent send never waits.
	UrgentQueueSize int
	// MaxBodySize is the largest message body this side reads; a bigger
	// frame closes the channel. MaxBodySize (16 MiB) by default: a router
	// sends nothing near it. A router's side takes more: the full data
	// model of a million identities is about 40 MB in one message.
	MaxBodySize int
}

func (o *Options) defaults() {
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = 10 * time.Second
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = time.Second
	}
	if o.UnresponsiveTimeout <= 0 {
		o.UnresponsiveTimeout = 30 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 256
	}
	if o.UrgentQueueSize <= 0 {
		o.UrgentQueueSize = 4096
	}
	if o.MaxBodySize <= 0 {
		o.MaxBodySize = MaxBodySize
	}
}

// Handler handles a received message that is not a reply to a request of
// this side. It runs on the channel's reader: one message at a time, in
// order. Work that waits (a Raft write, a request to the peer) belongs on
// a goroutine of its own.
type Handler func(ch *Channel, m *Message)

// ErrClosed is returned by sends and requests on a closed channel.
var ErrClosed = errors.New("ctrlchan: channel closed")

// Channel is an accepted channel: a connection past its hello.
type Channel struct {
	conn     net.Conn
	opts     Options
	handlers map[int32]Handler
	// Unhandled sees every message with no handler and no waiting request.
	unhandled Handler

	seq atomic.Int32
	out chan *Message
	// poke wakes the writer to answer a heartbeat when nothing else is queued.
	poke chan struct{}
	// urgent are the Urgent messages waiting, written before any of out;
	// urged wakes the writer for them.
	urgentMu sync.Mutex
	urgent   []*Message
	urged    chan struct{}

	mu      sync.Mutex
	waiters map[int32]chan *Message

	lastHeartbeatTx atomic.Int64 // unix ns of the last heartbeat sent
	awaitingSince   atomic.Int64 // unix ns of the oldest unanswered heartbeat, 0 = none
	pendingResponse atomic.Int64 // the peer's heartbeat to answer, 0 = none
	latency         atomic.Int64 // ns, from the last answered heartbeat
	lastRx          atomic.Int64 // unix ns of the last message read

	closeOnce sync.Once
	closed    chan struct{}
	errMu     sync.Mutex
	err       error
}

// ReadHello reads the dialer's hello, which must come before deadline. The
// hello's parts are held to MaxHelloPart.
func ReadHello(conn net.Conn, deadline time.Time) (*Message, error) {
	if err := conn.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	defer conn.SetReadDeadline(time.Time{})
	m, err := ReadMessage(conn, MaxHelloPart, MaxHelloPart)
	if err != nil {
		return nil, err
	}
	if m.ContentType != ContentHello || m.Sequence != HelloSequence {
		return nil, fmt.Errorf("ctrlchan: first message is content type %d sequence %d, not a hello", m.ContentType, m.Sequence)
	}
	return m, nil
}

// Refuse answers hello with a failed result carrying reason, and closes conn.
func Refuse(conn net.Conn, hello *Message, reason string) {
	r := NewResult(false, reason)
	r.SetReplyTo(hello)
	_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = conn.Write(r.AppendFrame(nil))
	_ = conn.Close()
}

// Accept answers hello with a successful result carrying headers (this
// side's id, capabilities) and starts the channel's reader, writer and
// heartbeats. Messages of a content type in handlers go to that handler;
// the rest to unhandled (nil: dropped).
func Accept(conn net.Conn, hello *Message, headers Headers, opts Options, handlers map[int32]Handler, unhandled Handler) (*Channel, error) {
	return AcceptThen(conn, hello, headers, opts, handlers, unhandled, nil)
}

// AcceptThen is Accept that hands the channel to bind (when not nil)
// before its reader starts: a handler that needs the channel finds it.
func AcceptThen(conn net.Conn, hello *Message, headers Headers, opts Options, handlers map[int32]Handler, unhandled Handler, bind func(*Channel)) (*Channel, error) {
	opts.defaults()
	r := NewResult(true, "")
	for k, v := range headers {
		r.Headers[k] = v
	}
	r.SetReplyTo(hello)
	_ = conn.SetWriteDeadline(time.Now().Add(opts.WriteTimeout))
	if _, err := conn.Write(r.AppendFrame(nil)); err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Time{})
	return start(conn, opts, handlers, unhandled, bind), nil
}

// start makes the channel of conn, whose hello is done, and starts its
// reader, writer and heartbeats (bind, when not nil, sees it first).
func start(conn net.Conn, opts Options, handlers map[int32]Handler, unhandled Handler, bind func(*Channel)) *Channel {
	ch := &Channel{conn: conn, opts: opts, handlers: handlers, unhandled: unhandled,
		out: make(chan *Message, opts.QueueSize), poke: make(chan struct{}, 1), urged: make(chan struct{}, 1),
		waiters: map[int32]chan *Message{}, closed: make(chan struct{})}
	now := time.Now().UnixNano()
	ch.lastRx.Store(now)
	ch.lastHeartbeatTx.Store(now)
	if bind != nil {
		bind(ch)
	}
	go ch.readLoop()
	go ch.writeLoop()
	go ch.pulse()
	return ch
}

// Done is closed once the channel is.
func (ch *Channel) Done() <-chan struct{} { return ch.closed }

// Err is why the channel closed (nil while open).
func (ch *Channel) Err() error {
	ch.errMu.Lock()
	defer ch.errMu.Unlock()
	return ch.err
}

// Conn is the channel's connection (for its TLS state and addresses).
func (ch *Channel) Conn() net.Conn { return ch.conn }

// Latency is the round trip of the last answered heartbeat (0 before one).
func (ch *Channel) Latency() time.Duration { return time.Duration(ch.latency.Load()) }

// CloseWith closes the channel, recording why (the first reason wins).
func (ch *Channel) CloseWith(err error) {
	ch.closeOnce.Do(func() {
		ch.errMu.Lock()
		ch.err = err
		ch.errMu.Unlock()
		close(ch.closed)
		_ = ch.conn.Close()
	})
}

// Close closes the channel.
func (ch *Channel) Close() { ch.CloseWith(ErrClosed) }

// Send queues m with the next sequence number. A Standard message waits
// for room in the queue at most the write timeout (a peer that does not
// read for that long is closed); an Urgent one never waits.
func (ch *Channel) Send(m *Message) error {
	m.Sequence = ch.seq.Add(1)
	return ch.enqueue(m)
}

// Reply sends m as the reply to req.
func (ch *Channel) Reply(req, m *Message) error {
	m.SetReplyTo(req)
	return ch.Send(m)
}

// Request sends m and waits for the peer's reply to it, or ctx's end.
func (ch *Channel) Request(ctx context.Context, m *Message) (*Message, error) {
	m.Sequence = ch.seq.Add(1)
	wait := make(chan *Message, 1)
	ch.mu.Lock()
	ch.waiters[m.Sequence] = wait
	ch.mu.Unlock()
	defer func() {
		ch.mu.Lock()
		delete(ch.waiters, m.Sequence)
		ch.mu.Unlock()
	}()
	if err := ch.enqueue(m); err != nil {
		return nil, err
	}
	select {
	case r := <-wait:
		return r, nil
	case <-ch.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (ch *Channel) enqueue(m *Message) error {
	if m.Headers == nil {
		m.Headers = Headers{}
	}
	select {
	case <-ch.closed:
		return ErrClosed
	default:
	}
	if m.Priority == Urgent {
		return ch.enqueueUrgent(m)
	}
	select {
	case ch.out <- m:
		return nil
	case <-ch.closed:
		return ErrClosed
	default:
	}
	t := time.NewTimer(ch.opts.WriteTimeout)
	defer t.Stop()
	select {
	case ch.out <- m:
		return nil
	case <-ch.closed:
		return ErrClosed
	case <-t.C:
		err := fmt.Errorf("ctrlchan: the peer read nothing for %s", ch.opts.WriteTimeout)
		ch.CloseWith(err)
		return err
	}
}

// enqueueUrgent queues m ahead of the Standard messages, without waiting.
func (ch *Channel) enqueueUrgent(m *Message) error {
	ch.urgentMu.Lock()
	if n := len(ch.urgent); n >= ch.opts.UrgentQueueSize {
		ch.urgentMu.Unlock()
		err := fmt.Errorf("ctrlchan: the peer let %d urgent messages wait", n)
		ch.CloseWith(err)
		return err
	}
	ch.urgent = append(ch.urgent, m)
	ch.urgentMu.Unlock()
	select {
	case ch.urged <- struct{}{}:
	default:
	}
	return nil
}

// takeUrgent returns the Urgent messages waiting, emptying their queue.
func (ch *Channel) takeUrgent() []*Message {
	ch.urgentMu.Lock()
	defer ch.urgentMu.Unlock()
	ms := ch.urgent
	ch.urgent = nil
	return ms
}

func (ch *Channel) readLoop() {
	r := bufio.NewReaderSize(ch.conn, 32<<10)
	for {
		m, err := ReadMessage(r, MaxHeadersSize, ch.opts.MaxBodySize)
		if err != nil {
			ch.CloseWith(fmt.Errorf("read: %w", err))
			return
		}
		now := time.Now().UnixNano()
		ch.lastRx.Store(now)
		if v, ok := m.Headers.Uint64(HeaderHeartbeat); ok {
			if v != 0 {
				ch.pendingResponse.Store(int64(v))
				select {
				case ch.poke <- struct{}{}:
				default:
				}
			}
		}
		if v, ok := m.Headers.Uint64(HeaderHeartbeatResponse); ok {
			if d := now - int64(v); d >= 0 && d < int64(time.Hour) {
				ch.latency.Store(d)
			}
			ch.awaitingSince.Store(0)
		}
		ch.dispatch(m)
	}
}

func (ch *Channel) dispatch(m *Message) {
	if rf, ok := m.ReplyFor(); ok {
		ch.mu.Lock()
		w := ch.waiters[rf]
		delete(ch.waiters, rf)
		ch.mu.Unlock()
		if w != nil {
			w <- m
			return
		}
	}
	switch m.ContentType {
	case ContentHeartbeat:
		return // its headers were read above
	case ContentPing:
		_ = ch.Reply(m, NewResult(true, ""))
		return
	case ContentLatency:
		_ = ch.Reply(m, &Message{ContentType: ContentLatencyResponse, Headers: Headers{}, Body: m.Body})
		return
	}
	if h := ch.handlers[m.ContentType]; h != nil {
		h(ch, m)
	} else if ch.unhandled != nil {
		ch.unhandled(ch, m)
	}
}

// stamp adds the heartbeat headers to an outgoing message.
func (ch *Channel) stamp(m *Message) {
	if m.ContentType == ContentRaw {
		return
	}
	now := time.Now().UnixNano()
	if now-ch.lastHeartbeatTx.Load() > int64(ch.opts.HeartbeatInterval) {
		m.Headers.PutUint64(HeaderHeartbeat, uint64(now))
		ch.lastHeartbeatTx.Store(now)
		ch.awaitingSince.CompareAndSwap(0, now)
	}
	if v := ch.pendingResponse.Swap(0); v != 0 {
		m.Headers.PutUint64(HeaderHeartbeatResponse, uint64(v))
	}
}

// bodyPart is the most of a message body written under one write deadline.
const bodyPart = 1 << 20

// maxKeptFrame is the largest buffer of frame heads a channel's writer
// keeps for the next message.
const maxKeptFrame = 64 << 10

func (ch *Channel) writeLoop() {
	w := bufio.NewWriterSize(ch.conn, 32<<10)
	buf := make([]byte, 0, 4096)
	write := func(m *Message) bool {
		ch.stamp(m)
		buf = m.appendHead(buf[:0])
		_, err := w.Write(buf)
		if err == nil {
			// The body from the message itself: a big one (a router's
			// full data model, shared by every router that takes it)
			// goes past w's buffer to the connection, never copied. It
			// is written a part at a time, each with WriteTimeout: a
			// peer taking 40 MB at a few MB/s is slow, not gone.
			for body := m.Body; err == nil && len(body) > 0; {
				part := body[:min(len(body), bodyPart)]
				if len(m.Body) > bodyPart {
					_ = ch.conn.SetWriteDeadline(time.Now().Add(ch.opts.WriteTimeout))
				}
				_, err = w.Write(part)
				body = body[len(part):]
			}
		}
		if cap(buf) > maxKeptFrame {
			// Large headers are not kept for the channel's life.
			buf = make([]byte, 0, 4096)
		}
		if err != nil {
			ch.CloseWith(fmt.Errorf("write: %w", err))
			return false
		}
		return true
	}
	// urgent writes the Urgent messages waiting: before each Standard one.
	urgent := func() bool {
		for _, m := range ch.takeUrgent() {
			if !write(m) {
				return false
			}
		}
		return true
	}
	for {
		select {
		case <-ch.closed:
			return
		case <-ch.urged:
			_ = ch.conn.SetWriteDeadline(time.Now().Add(ch.opts.WriteTimeout))
			if !urgent() {
				return
			}
		case m := <-ch.out:
			_ = ch.conn.SetWriteDeadline(time.Now().Add(ch.opts.WriteTimeout))
			if !urgent() || !write(m) {
				return
			}
			for more := true; more; {
				select {
				case m := <-ch.out:
					if !urgent() || !write(m) {
						return
					}
				default:
					if !urgent() {
						return
					}
					more = false
				}
			}
		case <-ch.poke:
			if ch.pendingResponse.Load() == 0 {
				continue
			}
			_ = ch.conn.SetWriteDeadline(time.Now().Add(ch.opts.WriteTimeout))
			m := NewMessage(ContentHeartbeat, nil)
			m.Sequence = ch.seq.Add(1)
			if !write(m) {
				return
			}
		}
		if err := w.Flush(); err != nil {
			ch.CloseWith(fmt.Errorf("write: %w", err))
			return
		}
	}
}

// pulse sends a heartbeat when none went out for an interval and closes a
// channel whose peer stopped answering them.
func (ch *Channel) pulse() {
	t := time.NewTicker(ch.opts.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ch.closed:
			return
		case tick := <-t.C:
			now := tick.UnixNano()
			if since := ch.awaitingSince.Load(); since != 0 && now-since > int64(ch.opts.UnresponsiveTimeout) {
				ch.CloseWith(fmt.Errorf("ctrlchan: no heartbeat answered for %s", time.Duration(now-since).Round(time.Second)))
				return
			}
			if now-ch.lastHeartbeatTx.Load() > int64(ch.opts.HeartbeatInterval) {
				_ = ch.Send(NewMessage(ContentHeartbeat, nil))
			}
		}
	}
}
