package ctrlchan

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// peer is the dialing side of a test channel, speaking the frames by hand.
type peer struct {
	t    *testing.T
	conn net.Conn
	in   chan *Message
}

func (p *peer) send(m *Message) {
	p.t.Helper()
	if _, err := p.conn.Write(m.AppendFrame(nil)); err != nil {
		p.t.Fatalf("peer write: %v", err)
	}
}

// next returns the next message that is not a bare heartbeat, failing
// after 10 s (generous: a 4 MiB message under the race detector on a
// loaded machine takes over a second).
func (p *peer) next() *Message {
	p.t.Helper()
	for {
		select {
		case m, ok := <-p.in:
			if !ok {
				p.t.Fatal("the channel closed")
			}
			if m.ContentType != ContentHeartbeat {
				return m
			}
		case <-time.After(10 * time.Second):
			p.t.Fatal("no message within 10 s")
		}
	}
}

// open accepts a channel over a loopback pipe after a hello from the peer,
// with the given options and handlers; answer, when set, answers every
// heartbeat the peer reads.
func open(t *testing.T, opts Options, handlers map[int32]Handler, answer bool) (*Channel, *peer) {
	t.Helper()
	a, b := net.Pipe()
	p := &peer{t: t, conn: b, in: make(chan *Message, 64)}
	go func() {
		defer close(p.in)
		for {
			m, err := ReadMessage(b, MaxHeadersSize, MaxBodySize)
			if err != nil {
				return
			}
			if v, ok := m.Headers.Uint64(HeaderHeartbeat); ok && answer {
				hb := NewMessage(ContentHeartbeat, nil)
				hb.Headers.PutUint64(HeaderHeartbeatResponse, v)
				go func() { _, _ = b.Write(hb.AppendFrame(nil)) }()
			}
			p.in <- m
		}
	}()
	hello := NewMessage(ContentHello, []byte("router-1"))
	hello.Sequence = HelloSequence
	go func() { _, _ = b.Write(hello.AppendFrame(nil)) }()
	got, err := ReadHello(a, time.Now().Add(time.Second))
	if err != nil || string(got.Body) != "router-1" {
		t.Fatalf("hello: %v %q", err, got.Body)
	}
	h := Headers{}
	h.PutString(HeaderID, "ctrl-1")
	ch, err := Accept(a, got, h, opts, handlers, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close(); _ = b.Close() })
	r := p.next()
	if ok, _ := r.Result(); !ok || r.ContentType != ContentResult {
		t.Fatalf("hello result: %+v", r)
	}
	if rf, ok := r.ReplyFor(); !ok || rf != HelloSequence {
		t.Fatalf("the result replies to %d %v", rf, ok)
	}
	if id, _ := r.Headers.String(HeaderID); id != "ctrl-1" {
		t.Fatalf("the result's id header %q", id)
	}
	return ch, p
}

func TestChannel_HandlersRequestsRepliesAndPings(t *testing.T) {
	echo := map[int32]Handler{1000: func(ch *Channel, m *Message) {
		_ = ch.Reply(m, NewMessage(1001, append([]byte("echo:"), m.Body...)))
	}}
	ch, p := open(t, Options{}, echo, true)

	req := NewMessage(1000, []byte("hi"))
	req.Sequence = 7
	req.Headers[130] = []byte("trace") // reflected into the reply
	p.send(req)
	r := p.next()
	if rf, _ := r.ReplyFor(); r.ContentType != 1001 || string(r.Body) != "echo:hi" || rf != 7 || string(r.Headers[130]) != "trace" {
		t.Fatalf("reply %+v", r)
	}

	ping := NewMessage(ContentPing, nil)
	ping.Sequence = 8
	p.send(ping)
	if r := p.next(); r.ContentType != ContentResult {
		t.Fatalf("ping answered with %+v", r)
	}

	done := make(chan *Message, 1)
	go func() {
		m, err := ch.Request(context.Background(), NewMessage(2000, []byte("q")))
		if err != nil {
			t.Error(err)
		}
		done <- m
	}()
	q := p.next()
	a := NewMessage(2001, []byte("a"))
	a.Headers.PutUint32(HeaderReplyFor, uint32(q.Sequence))
	p.send(a)
	select {
	case m := <-done:
		if m == nil || m.ContentType != 2001 {
			t.Fatalf("request answered with %+v", m)
		}
	case <-time.After(time.Second):
		t.Fatal("the request got no answer")
	}
}

func TestChannel_HeartbeatsKeepAnAnsweringPeerAndCloseASilentOne(t *testing.T) {
	opts := Options{HeartbeatInterval: 20 * time.Millisecond, CheckInterval: 5 * time.Millisecond, UnresponsiveTimeout: 150 * time.Millisecond}
	ch, _ := open(t, opts, nil, true)
	deadline := time.Now().Add(2 * time.Second)
	for ch.Latency() == 0 && time.Now().Before(deadline) {
		select {
		case <-ch.Done():
			t.Fatalf("an answering peer was closed: %v", ch.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if ch.Latency() == 0 {
		t.Fatal("no heartbeat was answered")
	}
	select {
	case <-ch.Done():
		t.Fatalf("an answering peer was closed: %v", ch.Err())
	case <-time.After(300 * time.Millisecond): // twice the unresponsive timeout: it must still be open
	}

	silent, _ := open(t, opts, nil, false)
	select {
	case <-silent.Done():
		if !strings.Contains(silent.Err().Error(), "no heartbeat answered") {
			t.Fatalf("closed for %v", silent.Err())
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a peer that never answers was not closed")
	}
}

func TestChannel_AnsweringThePeersHeartbeats(t *testing.T) {
	_, p := open(t, Options{}, nil, true)
	hb := NewMessage(ContentHeartbeat, nil)
	hb.Sequence = 3
	hb.Headers.PutUint64(HeaderHeartbeat, 123456789)
	p.send(hb)
	deadline := time.After(time.Second)
	for {
		select {
		case m := <-p.in:
			if v, ok := m.Headers.Uint64(HeaderHeartbeatResponse); ok {
				if v != 123456789 {
					t.Fatalf("heartbeat answered with %d", v)
				}
				return
			}
		case <-deadline:
			t.Fatal("the peer's heartbeat was not answered")
		}
	}
}

func TestChannel_APeerThatStopsReadingIsClosed(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	hello := NewMessage(ContentHello, []byte("r"))
	hello.Sequence = HelloSequence
	go func() {
		_, _ = b.Write(hello.AppendFrame(nil))
		_, _ = ReadMessage(b, MaxHeadersSize, MaxBodySize) // the result, then nothing more is read
	}()
	got, err := ReadHello(a, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := Accept(a, got, nil, Options{WriteTimeout: 50 * time.Millisecond, QueueSize: 1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sendErr error
	for i := 0; i < 100 && sendErr == nil; i++ {
		sendErr = ch.Send(NewMessage(1, make([]byte, 1024)))
	}
	if sendErr == nil {
		t.Fatal("sends to a peer that reads nothing never failed")
	}
	select {
	case <-ch.Done():
	case <-time.After(time.Second):
		t.Fatal("the channel was not closed")
	}
}

func TestReadHello_RefusesWhatIsNotAHello(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	m := NewMessage(ContentPing, nil)
	go func() { _, _ = b.Write(m.AppendFrame(nil)) }()
	if _, err := ReadHello(a, time.Now().Add(time.Second)); err == nil || !strings.Contains(err.Error(), "not a hello") {
		t.Fatalf("a ping as the first message: %v", err)
	}
	c, d := net.Pipe()
	defer c.Close()
	defer d.Close()
	_, err := ReadHello(c, time.Now().Add(20*time.Millisecond))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("no hello before the deadline: %v", err)
	}
}

// stalled accepts a channel whose peer reads only when told: the returned
// function reads the next message (its content type and body length).
func stalled(t *testing.T, opts Options) (*Channel, func() *Message) {
	t.Helper()
	ch, b := acceptRaw(t, opts)
	return ch, func() *Message {
		t.Helper()
		for {
			m, err := ReadMessage(b, MaxHeadersSize, MaxBodySize)
			if err != nil {
				t.Fatalf("peer read: %v", err)
			}
			if m.ContentType != ContentHeartbeat {
				return m
			}
		}
	}
}

// acceptRaw accepts a channel and returns it with the peer's end of the
// connection, past the hello's result.
func acceptRaw(t *testing.T, opts Options) (*Channel, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { _ = b.Close() })
	hello := NewMessage(ContentHello, []byte("r"))
	hello.Sequence = HelloSequence
	go func() { _, _ = b.Write(hello.AppendFrame(nil)) }()
	got, err := ReadHello(a, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan *Message, 1)
	go func() {
		m, _ := ReadMessage(b, MaxHeadersSize, MaxBodySize)
		results <- m
	}()
	ch, err := Accept(a, got, nil, opts, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Close)
	if r := <-results; r == nil || r.ContentType != ContentResult {
		t.Fatalf("hello result %+v", r)
	}
	return ch, b
}

func TestChannel_UrgentMessagesOvertakeAndNeverWait(t *testing.T) {
	ch, read := stalled(t, Options{QueueSize: 2, WriteTimeout: time.Minute})
	// One large message in the writer (the peer reads nothing yet), two
	// queued behind it: the queue is full.
	for i := 0; i < 3; i++ {
		if err := ch.Send(NewMessage(100+int32(i), make([]byte, 256<<10))); err != nil {
			t.Fatal(err)
		}
	}
	sent := make(chan error, 2)
	go func() {
		for _, ct := range []int32{200, 201} {
			u := NewMessage(ct, []byte("route"))
			u.Priority = Urgent
			sent <- ch.Send(u)
		}
	}()
	for i := 0; i < 2; i++ {
		select {
		case err := <-sent:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("an urgent send waited for room behind a full queue")
		}
	}
	var order []int32
	for i := 0; i < 5; i++ {
		order = append(order, read().ContentType)
	}
	// The urgent ones come before the queued ones, in the order sent; the
	// first large message may be written before them (when the writer had
	// taken it) or after.
	if want, alt := []int32{100, 200, 201, 101, 102}, []int32{200, 201, 100, 101, 102}; !slices.Equal(order, want) && !slices.Equal(order, alt) {
		t.Fatalf("order %v, want %v or %v", order, want, alt)
	}
}

func TestChannel_APeerLettingTooManyUrgentMessagesWaitIsClosed(t *testing.T) {
	ch, _ := stalled(t, Options{UrgentQueueSize: 3, WriteTimeout: time.Minute})
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		u := NewMessage(200, make([]byte, 64<<10))
		u.Priority = Urgent
		err = ch.Send(u)
	}
	if err == nil || !strings.Contains(err.Error(), "urgent messages wait") {
		t.Fatalf("urgent sends to a peer that reads nothing: %v", err)
	}
	select {
	case <-ch.Done():
	case <-time.After(time.Second):
		t.Fatal("the channel was not closed")
	}
}

// TestChannel_ABigMessageSentIsNotKept: a channel that sent a big message
// (a router's full data model) keeps no buffer of its size, or a node with
// many routers would hold a copy of the model per router.
func TestChannel_ABigMessageSentIsNotKept(t *testing.T) {
	const channels, size = 16, 4 << 20
	var (
		chans []*Channel
		peers []*peer
	)
	for range channels {
		ch, p := open(t, Options{}, nil, true)
		chans, peers = append(chans, ch), append(peers, p)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i, p := range peers {
		if err := chans[i].Send(NewMessage(1000, make([]byte, size))); err != nil {
			t.Fatal(err)
		}
		if m := p.next(); len(m.Body) != size {
			t.Fatalf("the peer read %d bytes", len(m.Body))
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > channels*size/2 {
		t.Fatalf("the heap grew by %d MiB after %d channels each sent %d MiB: the channels keep their frames", grew>>20, channels, size>>20)
	}
}

// TestChannel_ABodySharedByManyChannelsIsNotCopied: one body sent on many
// channels (a full data model to every router) is written from the message
// itself; only the frame head is built per channel.
func TestChannel_ABodySharedByManyChannelsIsNotCopied(t *testing.T) {
	const channels, size = 8, 4 << 20
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i * 7)
	}
	got := make([]byte, size)
	var chans []*Channel
	var reads []func() int32
	for range channels {
		ch, peer := acceptRaw(t, Options{})
		chans = append(chans, ch)
		reads = append(reads, func() int32 {
			// The frame read by hand into got: the peer allocates nothing.
			for {
				var head [frameHead]byte
				if _, err := io.ReadFull(peer, head[:]); err != nil {
					t.Fatalf("peer read: %v", err)
				}
				ct := int32(binary.LittleEndian.Uint32(head[4:8]))
				hlen := int64(binary.LittleEndian.Uint32(head[12:16]))
				blen := int(binary.LittleEndian.Uint32(head[16:20]))
				if _, err := io.CopyN(io.Discard, peer, hlen); err != nil {
					t.Fatalf("peer read: %v", err)
				}
				if ct == ContentHeartbeat {
					if _, err := io.CopyN(io.Discard, peer, int64(blen)); err != nil {
						t.Fatalf("peer read: %v", err)
					}
					continue
				}
				if blen != size {
					t.Fatalf("a body of %d bytes", blen)
				}
				if _, err := io.ReadFull(peer, got); err != nil {
					t.Fatalf("peer read: %v", err)
				}
				return ct
			}
		})
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i, ch := range chans {
		if err := ch.Send(NewMessage(1000, body)); err != nil {
			t.Fatal(err)
		}
		if ct := reads[i](); ct != 1000 || !bytes.Equal(got, body) {
			t.Fatalf("channel %d: content type %d, the body differs: %v", i, ct, !bytes.Equal(got, body))
		}
		clear(got)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size {
		t.Fatalf("%d channels sending one body of %d MiB allocated %d MiB: the body is copied per channel", channels, size>>20, alloc>>20)
	}
}

// TestChannel_MaxBodySizeIsWhatItReads: a frame over the default limit
// closes the channel; with a larger MaxBodySize (a router's side, taking a
// full data model of a million identities) it is read.
func TestChannel_MaxBodySizeIsWhatItReads(t *testing.T) {
	const size = MaxBodySize + 1
	for _, c := range []struct {
		max  int
		read bool
	}{{0, false}, {64 << 20, true}} {
		got := make(chan int, 1)
		a, b := net.Pipe()
		t.Cleanup(func() { _ = b.Close() })
		hello := NewMessage(ContentHello, []byte("r"))
		hello.Sequence = HelloSequence
		go func() {
			_, _ = b.Write(hello.AppendFrame(nil))
			_, _ = ReadMessage(b, MaxHeadersSize, MaxBodySize) // the hello's result
			_, _ = b.Write(NewMessage(1000, make([]byte, size)).AppendFrame(nil))
			_, _ = io.Copy(io.Discard, b)
		}()
		h, err := ReadHello(a, time.Now().Add(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ch, err := Accept(a, h, nil, Options{MaxBodySize: c.max}, map[int32]Handler{1000: func(_ *Channel, m *Message) { got <- len(m.Body) }}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ch.Close)
		select {
		case n := <-got:
			if !c.read || n != size {
				t.Fatalf("MaxBodySize %d: read a body of %d bytes", c.max, n)
			}
		case <-ch.Done():
			if c.read {
				t.Fatalf("MaxBodySize %d: closed", c.max)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("MaxBodySize %d: neither read nor closed", c.max)
		}
	}
}

// TestChannel_ASlowPeerTakesABigBodyPartByPart: a body bigger than one
// write part gets WriteTimeout per part, not for the whole: a peer reading
// 4 MiB at 2.5 MiB/s (1.6 s) under a 1 s WriteTimeout is slow, not gone.
func TestChannel_ASlowPeerTakesABigBodyPartByPart(t *testing.T) {
	const size = 4 << 20
	ch, b := acceptRaw(t, Options{WriteTimeout: time.Second})
	if err := ch.Send(NewMessage(1000, make([]byte, size))); err != nil {
		t.Fatal(err)
	}
	slow := readerFunc(func(p []byte) (int, error) {
		time.Sleep(100 * time.Millisecond) // the peer's pace, not a wait for a condition
		return b.Read(p[:min(len(p), 256<<10)])
	})
	for {
		m, err := ReadMessage(slow, MaxHeadersSize, MaxBodySize)
		if err != nil {
			t.Fatalf("the slow peer's read: %v (the channel: %v)", err, ch.Err())
		}
		if m.ContentType == 1000 {
			if len(m.Body) != size {
				t.Fatalf("a body of %d bytes", len(m.Body))
			}
			return
		}
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
