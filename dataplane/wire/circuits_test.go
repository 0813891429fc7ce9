package wire

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// encodeStringSlice is a router's string list header (CreateCircuitV2
// request's fingerprints), as OpenZiti's channel writes it.
func encodeStringSlice(ss []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(ss)))
	for _, s := range ss {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

func TestDecodeCircuitConfirmation_RoundTrips(t *testing.T) {
	b := buf(nil).strs(1, []string{"c-1", "c-2"}).uint(2, 9) // 2: a field it does not know
	got, err := DecodeCircuitConfirmation(b)
	if err != nil || !reflect.DeepEqual(got, []string{"c-1", "c-2"}) {
		t.Fatalf("decoded %q, %v", got, err)
	}
	b = buf(nil).strs(1, []string{"c-1", "c-2"})
	checkTruncations(t, "CircuitConfirmation", b, func(b []byte) error { _, err := DecodeCircuitConfirmation(b); return err })
	var many buf
	for i := 0; i <= MaxRepeated; i++ {
		many = many.str(1, "c")
	}
	if _, err := DecodeCircuitConfirmation(many); !errors.Is(err, ErrTooMany) {
		t.Errorf("%d circuit ids: %v", MaxRepeated+1, err)
	}
}

// The idle times of a confirmation (map<string, int64>, field 2), as
// OpenZiti's router sends them beside the ids.
func TestDecodeCircuitIdleTimes_ReadsTheMap(t *testing.T) {
	entry := func(id string, d time.Duration) []byte {
		e := protowire.AppendTag(nil, 1, protowire.BytesType)
		e = protowire.AppendString(e, id)
		e = protowire.AppendTag(e, 2, protowire.VarintType)
		return protowire.AppendVarint(e, uint64(d))
	}
	b := buf(nil).strs(1, []string{"c-1", "c-2"})
	for _, e := range [][]byte{entry("c-1", 4*time.Second), entry("c-2", 1500*time.Millisecond)} {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, e)
	}
	got, err := DecodeCircuitIdleTimes(b)
	if err != nil || !reflect.DeepEqual(got, map[string]time.Duration{"c-1": 4 * time.Second, "c-2": 1500 * time.Millisecond}) {
		t.Fatalf("decoded %v, %v", got, err)
	}
	if got, err := DecodeCircuitIdleTimes(buf(nil).strs(1, []string{"c-1"})); err != nil || len(got) != 0 {
		t.Fatalf("no idle times: %v, %v", got, err)
	}
	checkTruncations(t, "CircuitConfirmation", b, func(b []byte) error { _, err := DecodeCircuitIdleTimes(b); return err })
}

func TestDecodeStringSlice_RoundTripsAndRefusesShortOrLong(t *testing.T) {
	want := []string{"fp-1", "", "fp-3"}
	b := encodeStringSlice(want)
	got, err := DecodeStringSlice(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %q, %v", got, err)
	}
	for _, empty := range [][]byte{nil, encodeStringSlice(nil)} {
		if got, err := DecodeStringSlice(empty); err != nil || got != nil {
			t.Errorf("the empty list %x decoded as %q, %v", empty, got, err)
		}
	}
	for n := 1; n < len(b); n++ {
		if got, err := DecodeStringSlice(b[:n]); err == nil {
			t.Errorf("the list cut to %d bytes decoded as %q", n, got)
		}
	}
	if _, err := DecodeStringSlice(encodeStringSlice(make([]string, maxHeaderEntries+1))); err == nil {
		t.Errorf("a list of %d strings decoded", maxHeaderEntries+1)
	}
	// A string length past the end, and one that would wrap around.
	for _, l := range []uint32{5, 0xffffffff} {
		bad := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 1), l)
		if _, err := DecodeStringSlice(append(bad, "abcd"...)); err == nil {
			t.Errorf("a string of length %d in 4 bytes decoded", l)
		}
	}
}

func TestDecodeU32Map_RoundTripsAndRefusesShortOrLong(t *testing.T) {
	want := map[uint32][]byte{1: []byte("one"), 1 << 31: {0, 0xff}, 7: nil}
	b := EncodeU32Map(want)
	got, err := DecodeU32Map(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %v, %v", got, err)
	}
	if got, err := DecodeU32Map(nil); err != nil || got != nil {
		t.Errorf("the empty map decoded as %v, %v", got, err)
	}
	for n := 1; n < len(b); n++ {
		if got, err := DecodeU32Map(b[:n]); err == nil {
			t.Errorf("the map cut to %d bytes decoded as %v", n, got)
		}
	}
	big := map[uint32][]byte{}
	for k := range uint32(maxHeaderEntries + 1) {
		big[k] = nil
	}
	if _, err := DecodeU32Map(EncodeU32Map(big)); err == nil {
		t.Errorf("a map of %d entries decoded", maxHeaderEntries+1)
	}
	if _, err := DecodeU32Map(EncodeU32Map(map[uint32][]byte{1: make([]byte, maxHeaderEntryBytes+1)})); err == nil {
		t.Errorf("an entry of %d bytes decoded", maxHeaderEntryBytes+1)
	}
	if _, err := DecodeU32Map(EncodeU32Map(map[uint32][]byte{1: make([]byte, maxHeaderEntryBytes)})); err != nil {
		t.Errorf("an entry of %d bytes: %v", maxHeaderEntryBytes, err)
	}
}

func TestDecodeCreateCircuitV2Request_ReadsTheHeaders(t *testing.T) {
	h := map[int32][]byte{
		CreateCircuitReqSessionTokenHeader:         []byte("session-token"),
		CreateCircuitReqAPISessionTokenHeader:      []byte("api-token"),
		CreateCircuitReqTerminatorInstanceIDHeader: []byte("instance-1"),
		CreateCircuitReqFingerprintsHeader:         encodeStringSlice([]string{"fp-1", "fp-2"}),
		CreateCircuitPeerDataHeader:                EncodeU32Map(map[uint32][]byte{3: []byte("key")}),
	}
	got, err := DecodeCreateCircuitV2Request(h)
	want := &CreateCircuitV2Request{SessionToken: "session-token", APISessionToken: "api-token", TerminatorInstanceID: "instance-1",
		Fingerprints: []string{"fp-1", "fp-2"}, PeerData: map[uint32][]byte{3: []byte("key")}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, want)
	}
	for name, bad := range map[string]map[int32][]byte{
		"no session token":   {CreateCircuitReqAPISessionTokenHeader: []byte("api-token")},
		"cut fingerprints":   {CreateCircuitReqSessionTokenHeader: []byte("s"), CreateCircuitReqFingerprintsHeader: h[CreateCircuitReqFingerprintsHeader][:6]},
		"cut peer data":      {CreateCircuitReqSessionTokenHeader: []byte("s"), CreateCircuitPeerDataHeader: h[CreateCircuitPeerDataHeader][:9]},
		"a 3-byte list head": {CreateCircuitReqSessionTokenHeader: []byte("s"), CreateCircuitReqFingerprintsHeader: {1, 0, 0}},
	} {
		if got, err := DecodeCreateCircuitV2Request(bad); err == nil {
			t.Errorf("%s: decoded %+v", name, got)
		}
	}
}

func TestCreateCircuitV2Response_PeerDataOnlyWhenThereIsSome(t *testing.T) {
	h := CreateCircuitV2Response("c-1", "ingress-1", nil)
	if len(h) != 2 || string(h[CreateCircuitRespCircuitIDHeader]) != "c-1" || string(h[CreateCircuitRespAddressHeader]) != "ingress-1" {
		t.Fatalf("headers %q", h)
	}
	h = CreateCircuitV2Response("c-1", "ingress-1", map[uint32][]byte{3: []byte("key")})
	if m, err := DecodeU32Map(h[CreateCircuitPeerDataHeader]); err != nil || string(m[3]) != "key" {
		t.Fatalf("peer data %v, %v", m, err)
	}
}
