package wire

import (
	"reflect"
	"testing"
)

func TestUsage_RoundTrip(t *testing.T) {
	in := []UsageCounter{{IntervalStartUTC: 1737145920, IntervalLength: 1, Buckets: map[string]UsageBucket{
		"c1": {Values: map[string]uint64{"ingress.rx": 1000, "ingress.tx": 250}, Tags: map[string]string{"clientId": "i1", "serviceId": "s1", "hostId": "h1"}},
		"c2": {Values: map[string]uint64{"fabric.tx": 7}, Tags: map[string]string{}},
	}}}
	src, out, err := DecodeUsage(EncodeUsage("router-a", in))
	if err != nil || src != "router-a" || !reflect.DeepEqual(out, in) {
		t.Fatalf("decoded %q %+v, %v; want %+v", src, out, err, in)
	}
}

func TestUsage_OtherMetricsLeft(t *testing.T) {
	// a histogram (8) beside the usage: only the usage is read
	b := append(EncodeUsage("r", nil), buf(nil).msg(8, buf(nil).str(1, "link.l1.latency"))...)
	src, out, err := DecodeUsage(b)
	if err != nil || src != "r" || len(out) != 0 {
		t.Fatalf("got %q %v %v", src, out, err)
	}
}

func FuzzUsage(f *testing.F) {
	f.Add(EncodeUsage("router-a", []UsageCounter{{IntervalStartUTC: 60, IntervalLength: 60, Buckets: map[string]UsageBucket{
		"c1": {Values: map[string]uint64{"ingress.rx": 1}, Tags: map[string]string{"clientId": "x"}}}}}))
	f.Add([]byte{0x5a, 0x04, 0x1a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		src, counters, err := DecodeUsage(b)
		if err != nil {
			return
		}
		// what decodes encodes and decodes to the same
		src2, again, err := DecodeUsage(EncodeUsage(src, counters))
		if err != nil || src2 != src || len(again) != len(counters) {
			t.Fatalf("re-decoding: %q %v %v", src2, again, err)
		}
	})
}
