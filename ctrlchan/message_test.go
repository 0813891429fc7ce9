package ctrlchan

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"testing"
)

func TestAppendFrame_GoldenBytes(t *testing.T) {
	m := &Message{ContentType: 2, Sequence: 7, Headers: Headers{HeaderResultSuccess: {1}, HeaderReplyFor: {0xff, 0xff, 0xff, 0xff}}, Body: []byte("ok")}
	got := hex.EncodeToString(m.AppendFrame(nil))
	want := "0306090c" + "02000000" + "07000000" + "15000000" + "02000000" +
		"01000000" + "04000000" + "ffffffff" + // ReplyFor -1, keys in order
		"02000000" + "01000000" + "01" + // ResultSuccess true
		"6f6b"
	if got != want {
		t.Fatalf("frame\n got %s\nwant %s", got, want)
	}
}

func TestReadMessage_RoundTrip(t *testing.T) {
	m := NewMessage(20000, []byte("body"))
	m.Sequence = -1
	m.Headers.PutUint64(HeaderHeartbeat, 1<<40)
	m.Headers.PutString(HeaderID, "router-1")
	m.Headers[1000] = nil
	got, err := ReadMessage(bytes.NewReader(m.AppendFrame(nil)), MaxHeadersSize, MaxBodySize)
	if err != nil {
		t.Fatal(err)
	}
	if got.ContentType != m.ContentType || got.Sequence != m.Sequence || !bytes.Equal(got.Body, m.Body) {
		t.Fatalf("got %+v, want %+v", got, m)
	}
	if v, _ := got.Headers.Uint64(HeaderHeartbeat); v != 1<<40 {
		t.Fatalf("heartbeat header %d", v)
	}
	if v, _ := got.Headers.String(HeaderID); v != "router-1" {
		t.Fatalf("id header %q", v)
	}
	if v, ok := got.Headers[1000]; !ok || len(v) != 0 {
		t.Fatalf("empty header lost: %v %v", v, ok)
	}
}

func TestReadMessage_RefusesWhatItCannotTrust(t *testing.T) {
	ok := NewMessage(1, []byte("x")).AppendFrame(nil)
	big := append([]byte(nil), ok...)
	big[16] = 0xff // body length 255+: over a limit of 100
	badHeader := NewMessage(1, nil)
	badHeader.Headers[5] = []byte{1, 2, 3}
	hb := badHeader.AppendFrame(nil)
	hb[24] = 200 // the header's length now runs past the headers
	for name, c := range map[string]struct {
		frame []byte
		want  error
	}{
		"bad magic":           {append([]byte{9, 9, 9, 9}, ok[4:]...), ErrBadMagic},
		"truncated head":      {ok[:10], io.ErrUnexpectedEOF},
		"truncated body":      {ok[:len(ok)-1], io.ErrUnexpectedEOF},
		"over the body limit": {big, nil},
		"header past the end": {hb, nil},
	} {
		_, err := ReadMessage(bytes.NewReader(c.frame), 100, 100)
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: err %v, want %v", name, err, c.want)
		}
	}
}

func TestSetReplyTo_ReflectsOnlyTheReflectedRange(t *testing.T) {
	req := NewMessage(1, nil)
	req.Sequence = 42
	req.Headers[128] = []byte("trace")
	req.Headers[255] = []byte("x")
	req.Headers[256] = []byte("no")
	req.Headers[8] = []byte("no")
	r := NewResult(true, "")
	r.SetReplyTo(req)
	if rf, ok := r.ReplyFor(); !ok || rf != 42 {
		t.Fatalf("reply for %d %v", rf, ok)
	}
	want := Headers{HeaderResultSuccess: {1}, HeaderReplyFor: {42, 0, 0, 0}, 128: []byte("trace"), 255: []byte("x")}
	if !reflect.DeepEqual(r.Headers, want) {
		t.Fatalf("headers %v, want %v", r.Headers, want)
	}
}

// FuzzReadMessage: no input makes the decoder panic or allocate past its
// limits, and whatever it accepts encodes back to a frame it reads the same.
func FuzzReadMessage(f *testing.F) {
	m := NewMessage(20001, []byte{0x0a, 0x03, 'a', 'b', 'c'})
	m.Headers.PutUint64(HeaderHeartbeat, 99)
	f.Add(m.AppendFrame(nil))
	f.Add(NewResult(false, "no").AppendFrame(nil))
	f.Add([]byte{3, 6, 9, 12, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ReadMessage(bytes.NewReader(b), 1<<16, 1<<16)
		if err != nil {
			return
		}
		again, err := ReadMessage(bytes.NewReader(got.AppendFrame(nil)), 1<<16, 1<<16)
		if err != nil {
			t.Fatalf("re-encoded frame unreadable: %v", err)
		}
		if again.ContentType != got.ContentType || again.Sequence != got.Sequence || !bytes.Equal(again.Body, got.Body) || len(again.Headers) != len(got.Headers) {
			t.Fatalf("round trip changed the message: %+v -> %+v", got, again)
		}
		for k, v := range got.Headers {
			if !bytes.Equal(again.Headers[k], v) {
				t.Fatalf("header %d: %x -> %x", k, v, again.Headers[k])
			}
		}
	})
}
