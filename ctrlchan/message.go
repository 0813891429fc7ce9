// Package ctrlchan speaks the control-channel protocol that OpenZiti routers
// use with their controller: the V2 frame (a magic number, four little-endian
// int32s, the headers as key/length/value triples, the body), the hello and
// its result, heartbeats both ways, pings, and requests matched with their
// replies by the ReplyFor header.
//
// It is written from the protocol's facts (magic numbers, header keys,
// content types), not from OpenZiti's code; the oracle test module
// (integration/ziti) checks it against OpenZiti's own channel package.
package ctrlchan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Channel header keys (0-127 belong to the channel itself; 128-255 are
// copied from a request into its reply).
const (
	HeaderConnectionID      = 0
	HeaderReplyFor          = 1
	HeaderResultSuccess     = 2
	HeaderHelloVersion      = 4
	HeaderHeartbeat         = 5
	HeaderHeartbeatResponse = 6
	HeaderType              = 7
	HeaderID                = 8
	HeaderIsGrouped         = 9

	reflectedFirst = 128
	reflectedLast  = 255
)

// Channel content types.
const (
	ContentHello           = 0
	ContentPing            = 1
	ContentResult          = 2
	ContentLatency         = 3
	ContentLatencyResponse = 4
	ContentHeartbeat       = 5
	ContentRaw             = 6
)

// HelloSequence is the sequence number of the dialer's hello; its result
// replies to it.
const HelloSequence = -1

// frameHead is the fixed part of a V2 frame: magic, content type,
// sequence, headers length, body length.
const frameHead = 20

var magicV2 = [4]byte{0x03, 0x06, 0x09, 0x0c}

// Limits on what a peer may make this side allocate. A hello is small
// (OpenZiti refuses one over 4192 bytes of headers or body); other messages
// carry at most a router's state (terminators, circuit ids, metrics).
const (
	MaxHelloPart   = 4192
	MaxHeadersSize = 1 << 20
	MaxBodySize    = 16 << 20
)

// ErrBadMagic is returned for a frame that does not start with the V2 magic number.
var ErrBadMagic = errors.New("ctrlchan: not a channel V2 frame (bad magic number)")

// Headers are a message's headers by key.
type Headers map[int32][]byte

// Message is one frame.
type Message struct {
	ContentType int32
	Sequence    int32
	Headers     Headers
	Body        []byte
	// Priority is how this side queues it for sending (not on the wire).
	Priority Priority
}

// Priority orders a message in its channel's send queue, as
// openziti/channel's priorities do: an Urgent message (a route, an unroute,
// a fault) overtakes the Standard ones queued before it (a large data
// model among them), and its send never waits for room.
type Priority uint8

// The priorities.
const (
	Standard Priority = iota
	Urgent
)

// NewMessage returns a message of content type ct with body b and no headers.
func NewMessage(ct int32, b []byte) *Message {
	return &Message{ContentType: ct, Headers: Headers{}, Body: b}
}

// NewResult returns a channel result: success or not, with a text.
func NewResult(ok bool, text string) *Message {
	m := NewMessage(ContentResult, []byte(text))
	m.Headers.PutBool(HeaderResultSuccess, ok)
	return m
}

// ReplyFor is the sequence this message replies to, and whether it is a reply.
func (m *Message) ReplyFor() (int32, bool) {
	v, ok := m.Headers[HeaderReplyFor]
	if !ok || len(v) != 4 {
		return 0, false
	}
	return int32(binary.LittleEndian.Uint32(v)), true
}

// SetReplyTo makes m the reply to req: its ReplyFor header, and req's
// reflected headers (128-255) copied over.
func (m *Message) SetReplyTo(req *Message) {
	m.Headers.PutUint32(HeaderReplyFor, uint32(req.Sequence))
	for k, v := range req.Headers {
		if k >= reflectedFirst && k <= reflectedLast {
			m.Headers[k] = v
		}
	}
}

// Result reads a channel result: its success header and text.
func (m *Message) Result() (ok bool, text string) {
	ok, _ = m.Headers.Bool(HeaderResultSuccess)
	return ok, string(m.Body)
}

// PutBool sets key to one byte, 1 or 0.
func (h Headers) PutBool(key int32, v bool) {
	b := byte(0)
	if v {
		b = 1
	}
	h[key] = []byte{b}
}

// Bool reads key as a boolean (a first byte of 1), and whether it is present.
func (h Headers) Bool(key int32) (bool, bool) {
	v, ok := h[key]
	return ok && len(v) > 0 && v[0] == 1, ok
}

// PutUint32 sets key to v, little-endian.
func (h Headers) PutUint32(key int32, v uint32) { h[key] = binary.LittleEndian.AppendUint32(nil, v) }

// Uint32 reads a four-byte key.
func (h Headers) Uint32(key int32) (uint32, bool) {
	v, ok := h[key]
	if !ok || len(v) != 4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(v), true
}

// PutUint64 sets key to v, little-endian.
func (h Headers) PutUint64(key int32, v uint64) { h[key] = binary.LittleEndian.AppendUint64(nil, v) }

// Uint64 reads an eight-byte key.
func (h Headers) Uint64(key int32) (uint64, bool) {
	v, ok := h[key]
	if !ok || len(v) != 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(v), true
}

// PutString sets key to the bytes of s.
func (h Headers) PutString(key int32, s string) { h[key] = []byte(s) }

// String reads key as a string.
func (h Headers) String(key int32) (string, bool) {
	v, ok := h[key]
	return string(v), ok
}

// AppendFrame appends m's V2 frame to b. Headers are written in key order,
// so a message always encodes to the same bytes.
func (m *Message) AppendFrame(b []byte) []byte {
	return append(m.appendHead(b), m.Body...)
}

// appendHead appends m's frame up to its body: the fixed part and the
// headers. A channel writes the body after it from m.Body itself, so a body
// shared by many channels (one full data model sent to every router) is
// never copied per channel.
func (m *Message) appendHead(b []byte) []byte {
	keys := make([]int32, 0, len(m.Headers))
	hlen := 0
	for k, v := range m.Headers {
		keys = append(keys, k)
		hlen += 8 + len(v)
	}
	slices.Sort(keys)
	b = append(b, magicV2[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(m.ContentType))
	b = binary.LittleEndian.AppendUint32(b, uint32(m.Sequence))
	b = binary.LittleEndian.AppendUint32(b, uint32(hlen))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Body)))
	for _, k := range keys {
		v := m.Headers[k]
		b = binary.LittleEndian.AppendUint32(b, uint32(k))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return b
}

// ReadMessage reads one frame from r. A frame whose headers or body are
// larger than the limits is refused before anything is allocated for it.
func ReadMessage(r io.Reader, maxHeaders, maxBody int) (*Message, error) {
	var head [frameHead]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	if [4]byte(head[:4]) != magicV2 {
		return nil, ErrBadMagic
	}
	hlen := binary.LittleEndian.Uint32(head[12:16])
	blen := binary.LittleEndian.Uint32(head[16:20])
	if uint64(hlen) > uint64(maxHeaders) || uint64(blen) > uint64(maxBody) {
		return nil, fmt.Errorf("ctrlchan: frame too large (headers %d bytes, body %d; at most %d and %d)", hlen, blen, maxHeaders, maxBody)
	}
	data := make([]byte, int(hlen)+int(blen))
	if _, err := io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	headers, err := decodeHeaders(data[:hlen])
	if err != nil {
		return nil, err
	}
	return &Message{
		ContentType: int32(binary.LittleEndian.Uint32(head[4:8])),
		Sequence:    int32(binary.LittleEndian.Uint32(head[8:12])),
		Headers:     headers,
		Body:        data[hlen:],
	}, nil
}

// decodeHeaders reads key/length/value triples filling b exactly. A later
// duplicate key wins, as in OpenZiti's decoder.
func decodeHeaders(b []byte) (Headers, error) {
	h := Headers{}
	for len(b) > 0 {
		if len(b) < 8 {
			return nil, errors.New("ctrlchan: truncated header")
		}
		k := int32(binary.LittleEndian.Uint32(b))
		n := binary.LittleEndian.Uint32(b[4:])
		if uint64(n) > uint64(len(b)-8) {
			return nil, fmt.Errorf("ctrlchan: header %d claims %d bytes, %d left", k, n, len(b)-8)
		}
		h[k] = b[8 : 8+n : 8+n]
		b = b[8+n:]
	}
	return h, nil
}
