package ctrlchan

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// openPair opens a channel from a to b: b accepts the hello (or refuses it
// with refuse set) with handlers of its own.
func openPair(t *testing.T, refuse bool, handlers map[int32]Handler) (*Channel, Headers, error) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	accepted := make(chan *Channel, 1)
	go func() {
		hello, err := ReadHello(b, time.Now().Add(5*time.Second))
		if err != nil || string(hello.Body) != "r1" || string(hello.Headers[HeaderHelloVersion]) != "v1" {
			b.Close()
			return
		}
		if refuse {
			Refuse(b, hello, "no such router")
			return
		}
		h := Headers{}
		h.PutString(HeaderID, "ctrl-1")
		ch, err := Accept(b, hello, h, Options{}, handlers, nil)
		if err == nil {
			t.Cleanup(ch.Close)
			accepted <- ch
		}
	}()
	ch, hdr, err := Open(a, "r1", Headers{HeaderHelloVersion: []byte("v1")}, time.Now().Add(5*time.Second), Options{}, nil, nil)
	if ch != nil {
		t.Cleanup(ch.Close)
	}
	return ch, hdr, err
}

func TestOpen_SendsTheHelloAndSpeaksRequestsOnTheOpenedChannel(t *testing.T) {
	echo := map[int32]Handler{100: func(ch *Channel, m *Message) { _ = ch.Reply(m, NewMessage(101, m.Body)) }}
	ch, hdr, err := openPair(t, false, echo)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := hdr.String(HeaderID); id != "ctrl-1" {
		t.Fatalf("the result's id header is %q, want ctrl-1", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := ch.Request(ctx, NewMessage(100, []byte("ping")))
	if err != nil || r.ContentType != 101 || string(r.Body) != "ping" {
		t.Fatalf("reply %+v, %v", r, err)
	}
}

func TestOpen_RefusedHelloIsErrRefusedWithItsText(t *testing.T) {
	ch, _, err := openPair(t, true, nil)
	if ch != nil || !errors.Is(err, ErrRefused) || err.Error() != "ctrlchan: the hello was refused: no such router" {
		t.Fatalf("channel %v, error %v", ch, err)
	}
}
