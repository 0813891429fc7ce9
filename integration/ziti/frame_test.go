package ziti

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"edgectl/ctrlchan"

	"github.com/openziti/channel/v4"
)

// readByZiti reads ctrlchan's frame of m with OpenZiti's channel.ReadV2.
func readByZiti(t *testing.T, m *ctrlchan.Message) *channel.Message {
	t.Helper()
	frame := m.AppendFrame(nil)
	r := bytes.NewReader(frame)
	got, err := channel.ReadV2(r)
	if err != nil {
		t.Fatalf("channel.ReadV2 refused ctrlchan's frame: %v", err)
	}
	if r.Len() != 0 {
		t.Fatalf("channel.ReadV2 left %d of ctrlchan's %d frame bytes unread", r.Len(), len(frame))
	}
	return got
}

// readByCtrlchan reads OpenZiti's frame of m with ctrlchan.ReadMessage.
func readByCtrlchan(t *testing.T, m *channel.Message) *ctrlchan.Message {
	t.Helper()
	frame, err := channel.MarshalV2(m)
	if err != nil {
		t.Fatalf("channel.MarshalV2: %v", err)
	}
	r := bytes.NewReader(frame)
	got, err := ctrlchan.ReadMessage(r, ctrlchan.MaxHeadersSize, ctrlchan.MaxBodySize)
	if err != nil {
		t.Fatalf("ctrlchan.ReadMessage refused OpenZiti's frame: %v", err)
	}
	if r.Len() != 0 {
		t.Fatalf("ctrlchan.ReadMessage left %d of OpenZiti's %d frame bytes unread", r.Len(), len(frame))
	}
	return got
}

// headerDiff describes how two header sets differ, "" if they do not.
func headerDiff(want, got map[int32][]byte) string {
	var diffs []string
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("header %d missing (want %x)", k, v))
		case !bytes.Equal(g, v):
			diffs = append(diffs, fmt.Sprintf("header %d = %x, want %x", k, g, v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected header %d = %x", k, v))
		}
	}
	slices.Sort(diffs)
	return fmt.Sprint(diffs)[1 : len(fmt.Sprint(diffs))-1]
}

// sameMessage fails t unless OpenZiti's z and ctrlchan's c carry the same
// content type, sequence, headers and body.
func sameMessage(t *testing.T, what string, c *ctrlchan.Message, z *channel.Message) {
	t.Helper()
	if z.ContentType != c.ContentType {
		t.Errorf("%s: content type: OpenZiti %d, ctrlchan %d", what, z.ContentType, c.ContentType)
	}
	if z.Sequence() != c.Sequence {
		t.Errorf("%s: sequence: OpenZiti %d, ctrlchan %d", what, z.Sequence(), c.Sequence)
	}
	if d := headerDiff(c.Headers, z.Headers); d != "" {
		t.Errorf("%s: headers (OpenZiti's relative to ctrlchan's): %s", what, d)
	}
	if !bytes.Equal(z.Body, c.Body) {
		t.Errorf("%s: body: OpenZiti %d bytes %.64x, ctrlchan %d bytes %.64x", what, len(z.Body), z.Body, len(c.Body), c.Body)
	}
	// The reply-for value each side decodes. OpenZiti reports a message
	// without the header as replying to -1 (and IsReply() is false for a
	// reply to -1, the hello's sequence); ctrlchan reports it as no reply.
	zr := z.ReplyFor()
	cr, cok := c.ReplyFor()
	if !cok {
		cr = -1
	}
	if zr != cr {
		t.Errorf("%s: reply for: OpenZiti %d, ctrlchan %d (header present %v)", what, zr, cr, cok)
	}
}

// body returns n deterministic bytes.
func body(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}

func ctrlchanCases() map[string]*ctrlchan.Message {
	hello := ctrlchan.NewMessage(ctrlchan.ContentHello, []byte("router-1"))
	hello.Sequence = ctrlchan.HelloSequence
	hello.Headers.PutString(ctrlchan.HeaderHelloVersion, "v1.7.2|rev|date|linux|amd64")
	hello.Headers[12] = []byte{0x10}

	req := ctrlchan.NewMessage(20000, []byte("req"))
	req.Sequence = 77
	req.Headers[128] = []byte("trace-id")
	req.Headers[1024] = []byte{1}
	refused := ctrlchan.NewResult(false, "router-1 is not enrolled")
	refused.SetReplyTo(req)
	refused.Sequence = 3

	empty := &ctrlchan.Message{ContentType: ctrlchan.ContentHeartbeat, Sequence: 4}

	big := ctrlchan.NewMessage(20500, body(1<<20+17))
	big.Sequence = math.MaxInt32
	big.Headers.PutBool(1024, true)
	big.Headers.PutUint64(1025, math.MaxUint64-1)
	big.Headers[1000] = nil
	big.Headers[1001] = []byte{}
	big.Headers[65535] = body(300)
	big.Headers[0] = []byte("conn-id")

	minSeq := ctrlchan.NewMessage(ctrlchan.ContentRaw, []byte{0})
	minSeq.Sequence = math.MinInt32
	minSeq.Headers.PutUint32(ctrlchan.HeaderReplyFor, math.MaxUint32)

	negType := ctrlchan.NewMessage(-5, []byte("negative content type"))
	negType.Sequence = -2

	return map[string]*ctrlchan.Message{
		"hello":                       hello,
		"refused result":              refused,
		"no headers, no body":         empty,
		"1 MiB body, many headers":    big,
		"min sequence, max reply-for": minSeq,
		"negative content type":       negType,
		"ping":                        {ContentType: ctrlchan.ContentPing, Sequence: 1, Headers: ctrlchan.Headers{}},
	}
}

func TestFrame_CtrlchanToOpenZiti(t *testing.T) {
	for name, m := range ctrlchanCases() {
		t.Run(name, func(t *testing.T) {
			sameMessage(t, name, m, readByZiti(t, m))
		})
	}
}

func TestFrame_OpenZitiToCtrlchan(t *testing.T) {
	hello := channel.NewHello("router-1", map[int32][]byte{
		channel.HelloVersionHeader: []byte("v1.7.2|rev|date|linux|amd64"),
		12:                         {0x10},
	})
	hello.SetSequence(channel.HelloSequence)

	req := channel.NewMessage(20001, []byte("request"))
	req.SetSequence(99)
	req.Headers[128] = []byte("trace")
	req.Headers[255] = []byte("last reflected")
	reply := channel.NewResult(true, "")
	reply.ReplyTo(req)
	reply.SetSequence(12)

	big := channel.NewMessage(20501, body(2<<20+3))
	big.SetSequence(math.MaxInt32)
	big.PutUint64Header(channel.HeartbeatHeader, 1<<62+5)
	big.PutUint64Header(channel.HeartbeatResponseHeader, 0)
	big.Headers[1000] = nil
	big.Headers[70000] = body(1000)

	empty := channel.NewMessage(channel.ContentTypeHeartbeat, nil)
	empty.SetSequence(0)

	cases := map[string]*channel.Message{
		"hello":                    hello,
		"result replying to 99":    reply,
		"2 MiB body, many headers": big,
		"no headers, no body":      empty,
		"min sequence, raw content": func() *channel.Message {
			m := channel.NewMessage(channel.ContentTypeRaw, []byte("x"))
			m.SetSequence(math.MinInt32)
			return m
		}(),
	}
	for name, z := range cases {
		t.Run(name, func(t *testing.T) {
			c := readByCtrlchan(t, z)
			// MarshalV2 wrote the ReplyFor header of a reply into z's headers, so z now
			// holds exactly what went on the wire.
			sameMessage(t, name, c, z)
		})
	}
}

// A frame with one header or none has only one encoding: both sides must
// produce the same bytes.
func TestFrame_SameBytes(t *testing.T) {
	type pair struct {
		c *ctrlchan.Message
		z *channel.Message
	}
	zm := func(ct int32, seq int32, b []byte, h map[int32][]byte) *channel.Message {
		m := channel.NewMessage(ct, b)
		m.SetSequence(seq)
		for k, v := range h {
			m.Headers[k] = v
		}
		return m
	}
	cases := map[string]pair{
		"hello": {
			&ctrlchan.Message{ContentType: 0, Sequence: -1, Headers: ctrlchan.Headers{4: []byte("v1.7.2")}, Body: []byte("router-1")},
			zm(0, -1, []byte("router-1"), map[int32][]byte{4: []byte("v1.7.2")}),
		},
		"empty": {
			&ctrlchan.Message{ContentType: 5, Sequence: 9, Headers: ctrlchan.Headers{}},
			zm(5, 9, nil, nil),
		},
		"result true": {
			ctrlchan.NewResult(true, "ok"),
			func() *channel.Message { m := channel.NewResult(true, "ok"); m.SetSequence(0); return m }(),
		},
		"result false": {
			ctrlchan.NewResult(false, "refused"),
			func() *channel.Message { m := channel.NewResult(false, "refused"); m.SetSequence(0); return m }(),
		},
	}
	for name, p := range cases {
		zb, err := channel.MarshalV2(p.z)
		if err != nil {
			t.Fatal(err)
		}
		if cb := p.c.AppendFrame(nil); !bytes.Equal(cb, zb) {
			t.Errorf("%s: ctrlchan frame %x, OpenZiti frame %x", name, cb, zb)
		}
	}
}

func TestFrame_TypedHeaders_OpenZitiToCtrlchan(t *testing.T) {
	z := channel.NewMessage(20000, nil)
	z.SetSequence(5)
	z.PutUint64Header(channel.HeartbeatHeader, math.MaxUint64)
	z.PutUint64Header(channel.HeartbeatResponseHeader, 0)
	z.PutUint64Header(1025, 1<<40+7)
	z.PutUint32Header(channel.ReplyForHeader, 0xfffffffe)
	z.PutUint32Header(1100, 12345)
	z.PutBoolHeader(channel.ResultSuccessHeader, true)
	z.PutBoolHeader(1024, false)
	z.PutByteHeader(1026, 1)
	z.PutStringHeader(channel.IdHeader, "ctrl-1")
	z.PutStringHeader(1101, "")
	z.PutStringHeader(1102, "ünïcode ✓")

	c := readByCtrlchan(t, z)
	h := c.Headers
	wantHeader(t, "Uint64", h.Uint64, ctrlchan.HeaderHeartbeat, math.MaxUint64)
	wantHeader(t, "Uint64", h.Uint64, ctrlchan.HeaderHeartbeatResponse, 0)
	wantHeader(t, "Uint64", h.Uint64, 1025, 1<<40+7)
	wantHeader(t, "Uint32", h.Uint32, ctrlchan.HeaderReplyFor, 0xfffffffe)
	wantHeader(t, "Uint32", h.Uint32, 1100, 12345)
	wantHeader(t, "Bool", h.Bool, ctrlchan.HeaderResultSuccess, true)
	wantHeader(t, "Bool", h.Bool, 1024, false)
	wantHeader(t, "Bool", h.Bool, 1026, true) // OpenZiti's byte header 1 is a true bool on both sides
	wantHeader(t, "String", h.String, ctrlchan.HeaderID, "ctrl-1")
	wantHeader(t, "String", h.String, 1101, "")
	wantHeader(t, "String", h.String, 1102, "ünïcode ✓")
	if rf, ok := c.ReplyFor(); !ok || rf != -2 {
		t.Errorf("ctrlchan ReplyFor() = %d, %v; OpenZiti put reply-for header 0xfffffffe (-2)", rf, ok)
	}
	if zr := z.ReplyFor(); zr != -2 {
		t.Errorf("OpenZiti ReplyFor() = %d, want -2", zr)
	}
	if ok, text := c.Result(); !ok || text != "" {
		t.Errorf("ctrlchan Result() = %v, %q", ok, text)
	}
	if _, ok := h.Uint64(9999); ok {
		t.Error("ctrlchan Uint64 of an absent header reports it present")
	}
}

func TestFrame_TypedHeaders_CtrlchanToOpenZiti(t *testing.T) {
	c := ctrlchan.NewMessage(20001, []byte("x"))
	c.Sequence = 6
	c.Headers.PutUint64(ctrlchan.HeaderHeartbeat, math.MaxUint64)
	c.Headers.PutUint64(ctrlchan.HeaderHeartbeatResponse, 0)
	c.Headers.PutUint64(1025, 1<<40+7)
	c.Headers.PutUint32(ctrlchan.HeaderReplyFor, 41)
	c.Headers.PutUint32(1100, math.MaxUint32)
	c.Headers.PutBool(ctrlchan.HeaderResultSuccess, false)
	c.Headers.PutBool(1024, true)
	c.Headers.PutString(ctrlchan.HeaderID, "ctrl-1")
	c.Headers.PutString(ctrlchan.HeaderHelloVersion, "v1.7.2|rev|date|linux|amd64")
	c.Headers.PutString(1101, "")

	z := readByZiti(t, c)
	if v, ok := z.GetUint64Header(channel.HeartbeatHeader); !ok || v != math.MaxUint64 {
		t.Errorf("OpenZiti GetUint64Header(heartbeat) = %d, %v", v, ok)
	}
	if v, ok := z.GetUint64Header(channel.HeartbeatResponseHeader); !ok || v != 0 {
		t.Errorf("OpenZiti GetUint64Header(heartbeat response) = %d, %v", v, ok)
	}
	if v, ok := z.GetUint64Header(1025); !ok || v != 1<<40+7 {
		t.Errorf("OpenZiti GetUint64Header(1025) = %d, %v", v, ok)
	}
	if v, ok := z.GetUint32Header(channel.ReplyForHeader); !ok || v != 41 {
		t.Errorf("OpenZiti GetUint32Header(reply for) = %d, %v", v, ok)
	}
	if v, ok := z.GetUint32Header(1100); !ok || v != math.MaxUint32 {
		t.Errorf("OpenZiti GetUint32Header(1100) = %d, %v", v, ok)
	}
	if v, ok := z.GetBoolHeader(channel.ResultSuccessHeader); !ok || v {
		t.Errorf("OpenZiti GetBoolHeader(result success) = %v, %v; want false, true", v, ok)
	}
	if v, ok := z.GetBoolHeader(1024); !ok || !v {
		t.Errorf("OpenZiti GetBoolHeader(1024) = %v, %v; want true, true", v, ok)
	}
	if v, ok := z.GetByteHeader(1024); !ok || v != 1 {
		t.Errorf("OpenZiti GetByteHeader(1024) = %d, %v; want 1", v, ok)
	}
	if v, ok := z.GetStringHeader(channel.IdHeader); !ok || v != "ctrl-1" {
		t.Errorf("OpenZiti GetStringHeader(id) = %q, %v", v, ok)
	}
	if v, ok := z.GetStringHeader(channel.HelloVersionHeader); !ok || v != "v1.7.2|rev|date|linux|amd64" {
		t.Errorf("OpenZiti GetStringHeader(hello version) = %q, %v", v, ok)
	}
	if v, ok := z.GetStringHeader(1101); !ok || v != "" {
		t.Errorf("OpenZiti GetStringHeader(1101) = %q, %v", v, ok)
	}
	if !z.IsReply() || !z.IsReplyingTo(41) || z.ReplyFor() != 41 {
		t.Errorf("OpenZiti sees reply for %d (is reply %v), want 41", z.ReplyFor(), z.IsReply())
	}
	res := channel.UnmarshalResult(z)
	if res.Success || res.Message != "x" {
		t.Errorf("OpenZiti UnmarshalResult = %+v", res)
	}
}

// Bool headers that are not exactly one byte of 1: both sides read them the same way.
func TestFrame_BoolHeaderEdgeCases(t *testing.T) {
	for _, v := range [][]byte{{}, {0}, {1}, {2}, {1, 0}, {0, 1}, {0xff}} {
		c := ctrlchan.NewMessage(1, nil)
		c.Headers[2] = v
		z := readByZiti(t, c)
		zv, zok := z.GetBoolHeader(2)
		cv, cok := c.Headers.Bool(2)
		if zv != cv || zok != cok {
			t.Errorf("bool header %x: OpenZiti %v,%v; ctrlchan %v,%v", v, zv, zok, cv, cok)
		}
	}
}

// Replies: the headers OpenZiti's ReplyTo reflects from a request (128-255)
// are the ones ctrlchan's SetReplyTo reflects. (Negative keys are left out:
// no OpenZiti component uses them.)
func TestFrame_ReplyReflection(t *testing.T) {
	keys := []int32{0, 1, 2, 8, 100, 127, 128, 129, 200, 254, 255, 256, 383, 384, 511, 1000, 1024, 2000, 65535 + 128}
	zreq := channel.NewMessage(20000, nil)
	zreq.SetSequence(1234)
	creq := ctrlchan.NewMessage(20000, nil)
	creq.Sequence = 1234
	for _, k := range keys {
		v := []byte(fmt.Sprintf("value-%d", k))
		zreq.Headers[k] = v
		creq.Headers[k] = v
	}

	zrep := channel.NewMessage(20001, []byte("reply"))
	zrep.ReplyTo(zreq)
	zrep.SetSequence(1)
	crep := ctrlchan.NewMessage(20001, []byte("reply"))
	crep.SetReplyTo(creq)
	crep.Sequence = 1

	fromZiti := readByCtrlchan(t, zrep)
	fromCtrlchan := readByZiti(t, crep)
	if d := headerDiff(fromZiti.Headers, fromCtrlchan.Headers); d != "" {
		t.Errorf("reply headers, ctrlchan's relative to OpenZiti's: %s", d)
	}
	if rf, ok := fromZiti.ReplyFor(); !ok || rf != 1234 {
		t.Errorf("ctrlchan reads OpenZiti's reply as replying to %d (%v)", rf, ok)
	}
	if !fromCtrlchan.IsReplyingTo(1234) {
		t.Errorf("OpenZiti reads ctrlchan's reply as replying to %d", fromCtrlchan.ReplyFor())
	}
}

// A frame that repeats a header key: both keep the later value.
func TestFrame_DuplicateHeaderKey(t *testing.T) {
	var hdr []byte
	for _, v := range []string{"first", "second"} {
		hdr = binary.LittleEndian.AppendUint32(hdr, ctrlchan.HeaderID)
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(v)))
		hdr = append(hdr, v...)
	}
	frame := []byte{3, 6, 9, 12}
	frame = binary.LittleEndian.AppendUint32(frame, 7)
	frame = binary.LittleEndian.AppendUint32(frame, 8)
	frame = binary.LittleEndian.AppendUint32(frame, uint32(len(hdr)))
	frame = binary.LittleEndian.AppendUint32(frame, 2)
	frame = append(append(frame, hdr...), "hi"...)

	z, err := channel.ReadV2(bytes.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ctrlchan.ReadMessage(bytes.NewReader(frame), ctrlchan.MaxHeadersSize, ctrlchan.MaxBodySize)
	if err != nil {
		t.Fatal(err)
	}
	sameMessage(t, "duplicate key", c, z)
	if v, _ := c.Headers.String(ctrlchan.HeaderID); v != "second" {
		t.Errorf("ctrlchan kept %q", v)
	}
}

// Frames that OpenZiti refuses, ctrlchan refuses too.
func TestFrame_BothRefuse(t *testing.T) {
	good := ctrlchan.NewMessage(1, []byte("body"))
	good.Headers.PutString(8, "id")
	ok := good.AppendFrame(nil)
	badMagic := append([]byte{3, 6, 9, 13}, ok[4:]...)
	shortHeader := append([]byte(nil), ok...)
	shortHeader[24] = 0xff // header value length past the headers section
	truncHeaders := append([]byte(nil), ok...)
	binary.LittleEndian.PutUint32(truncHeaders[12:], 5) // headers section shorter than one key/length pair
	binary.LittleEndian.PutUint32(truncHeaders[16:], uint32(len(ok)-20-5))
	for name, frame := range map[string][]byte{
		"bad magic":            badMagic,
		"header past section":  shortHeader,
		"headers section < 8":  truncHeaders,
		"truncated frame head": ok[:12],
		"truncated frame body": ok[:len(ok)-1],
		"empty":                nil,
	} {
		_, zerr := channel.ReadV2(bytes.NewReader(frame))
		_, cerr := ctrlchan.ReadMessage(bytes.NewReader(frame), ctrlchan.MaxHeadersSize, ctrlchan.MaxBodySize)
		if zerr == nil {
			t.Errorf("%s: OpenZiti accepted the frame (test case is wrong)", name)
		}
		if cerr == nil {
			t.Errorf("%s: OpenZiti refuses the frame (%v), ctrlchan accepted it", name, zerr)
		}
	}
}

// wantHeader checks that ctrlchan's getter (named as) reads header k as the
// value OpenZiti put there.
func wantHeader[T comparable](t *testing.T, as string, get func(int32) (T, bool), k int32, want T) {
	t.Helper()
	if v, ok := get(k); !ok || v != want {
		t.Errorf("ctrlchan %s(%d) = %#v, %v; OpenZiti put %#v", as, k, v, ok, want)
	}
}
