package wire

import (
	"math"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// The link decoders read what a router sends (its hello's listeners, a
// VerifyRouter, its RouterLinks and Metrics): whatever the bytes, a value
// or an error, never a panic. (integration/ziti checks them against
// OpenZiti's generated code.)

func FuzzListeners(f *testing.F) {
	l := buf(nil).str(1, "tls:127.0.0.1:6004").str(2, "tls").strs(3, []string{"c"}).strs(4, []string{"default", "g"}).str(5, "lo")
	f.Add([]byte(buf(nil).msg(1, l).msg(1, nil).msg(1, buf(nil).str(1, "tls:h:1"))))
	f.Add([]byte(buf(nil).msg(1, l).uint(2, 7)))
	f.Add([]byte{0x0a, 0x03, 0x0a, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		ls, err := DecodeListeners(b)
		if err != nil {
			return
		}
		// A listener's raw bytes, sent on to peers, read back the same.
		for _, l := range ls {
			again, err := DecodeListeners(buf(nil).msg(1, l.Raw))
			if err != nil || len(again) != 1 {
				t.Fatalf("raw %x read back as %v, %v", l.Raw, again, err)
			}
			again[0].Raw, l.Raw = nil, nil
			if !reflect.DeepEqual(again[0], l) {
				t.Fatalf("raw read back as %+v, was %+v", again[0], l)
			}
		}
	})
}

func FuzzVerifyRouter(f *testing.F) {
	f.Add([]byte(buf(nil).str(1, "r-1").strs(2, []string{"0123456789abcdef0123456789abcdef01234567", "ff"})))
	f.Add([]byte(buf(nil).uint(1, 3).str(2, "")))
	f.Add([]byte{0x12, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = DecodeVerifyRouter(b)
	})
}

func FuzzRouterLinks(f *testing.F) {
	link := buf(nil).str(1, "link-1").str(2, "r-2").str(3, "tls").strs(4, []string{"x"}).str(5, "tls:127.0.0.1:6005").uint(6, 3).
		msg(7, buf(nil).uint(1, 2).msg(2, buf(nil).str(1, "payload").str(2, "a").str(3, "b")))
	f.Add([]byte(buf(nil).msg(1, link).msg(1, nil)))
	f.Add([]byte(buf(nil).msg(1, buf(nil).uint(6, math.MaxUint64))))
	f.Add([]byte{0x0a, 0x02, 0x30})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeRouterLinks(b)
	})
}

func FuzzMetrics(f *testing.F) {
	hist := func(mean float64) []byte {
		h := protowire.AppendTag(nil, 1, protowire.VarintType)
		h = protowire.AppendVarint(h, 6)
		h = protowire.AppendTag(h, 3, protowire.Fixed64Type)
		h = protowire.AppendFixed64(h, math.Float64bits(mean))
		h = protowire.AppendTag(h, 5, protowire.Fixed64Type)
		return protowire.AppendFixed64(h, math.Float64bits(2.5))
	}
	m := buf(nil).str(1, "ev").str(2, "router-a").strMap(4, map[string]string{"k": "v"}).
		msg(8, buf(nil).str(1, "link.l1.latency").msg(2, hist(1234567.875))).
		msg(8, buf(nil).str(1, "link.l1.queue_time").msg(2, hist(250000))).
		msg(8, buf(nil).str(1, "empty")).uint(12, 1)
	f.Add([]byte(m))
	f.Add([]byte(buf(nil).msg(8, buf(nil).str(1, "x").msg(2, []byte{0x19, 1, 2, 3}))))
	f.Add([]byte{0x42, 0x04, 0x12, 0x02, 0x19, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = DecodeMetrics(b)
	})
}

func FuzzLinkStateUpdate(f *testing.F) {
	f.Add([]byte(buf(nil).str(1, "link-1").uint(2, 4).msg(3, buf(nil).uint(1, 9).msg(2, buf(nil).str(1, "payload").str(2, "a").str(3, "b")))))
	f.Add([]byte(buf(nil).msg(3, buf(nil).msg(2, nil).msg(2, nil))))
	f.Add([]byte{0x1a, 0x02, 0x12, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeLinkStateUpdate(b)
	})
}
