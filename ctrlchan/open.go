package ctrlchan

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// ErrRefused is returned by Open when the peer answers the hello with a
// failed result.
var ErrRefused = errors.New("ctrlchan: the hello was refused")

// Open is the dialing side of a channel, as a router opens its control
// channel: it sends the hello (id in its body, headers as given) on conn,
// waits until deadline for the peer's result, and starts the channel. It
// returns the result's headers (the peer's id, version and capabilities).
// A failed result closes conn and returns ErrRefused with its text.
func Open(conn net.Conn, id string, headers Headers, deadline time.Time, opts Options, handlers map[int32]Handler, unhandled Handler) (*Channel, Headers, error) {
	opts.defaults()
	hello := NewMessage(ContentHello, []byte(id))
	for k, v := range headers {
		hello.Headers[k] = v
	}
	hello.Sequence = HelloSequence
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, nil, err
	}
	if _, err := conn.Write(hello.AppendFrame(nil)); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	res, err := ReadMessage(conn, MaxHeadersSize, MaxHelloPart)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	if rf, ok := res.ReplyFor(); !ok || rf != HelloSequence || res.ContentType != ContentResult {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("ctrlchan: the answer to the hello is content type %d, not its result", res.ContentType)
	}
	if ok, text := res.Result(); !ok {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("%w: %s", ErrRefused, text)
	}
	_ = conn.SetDeadline(time.Time{})
	return start(conn, opts, handlers, unhandled, nil), res.Headers, nil
}
