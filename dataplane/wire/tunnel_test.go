package wire

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// A router's tunnel requests, written as edge_ctrl_pb does (integration/ziti
// reads the decoders and the answers against OpenZiti's generated code).

func encodeCreateTunnelTerminatorV2(r CreateTunnelTerminatorV2) []byte {
	return buf(nil).str(1, r.ServiceID).str(2, r.Address).peerData(3, r.PeerData).uint(4, uint64(r.Cost)).
		uint(5, uint64(r.Precedence)).str(6, r.InstanceID).bytes(7, r.InstanceSecret).uint(8, uint64(r.StartTime))
}

func encodeCreateTunnelCircuitV2(r CreateTunnelCircuitV2) []byte {
	return buf(nil).str(1, r.ServiceName).str(2, r.TerminatorInstanceID).peerData(3, r.PeerData)
}

func encodeUpdateTunnelTerminator(r UpdateTunnelTerminator) []byte {
	return buf(nil).str(1, r.TerminatorID).uint(2, uint64(r.Cost)).uint(3, uint64(r.Precedence)).
		boolean(4, r.UpdatePrecedence).boolean(5, r.UpdateCost)
}

func TestDecodeCreateTunnelTerminatorV2_RoundTrips(t *testing.T) {
	want := &CreateTunnelTerminatorV2{ServiceID: "svc-1", Address: "t-1", PeerData: map[uint32][]byte{3: []byte("key"), 1 << 31: nil},
		Cost: math.MaxUint32, Precedence: PrecedenceFailed, InstanceID: "i-1", InstanceSecret: []byte{1, 2}, StartTime: 1765100000123}
	b := encodeCreateTunnelTerminatorV2(*want)
	got, err := DecodeCreateTunnelTerminatorV2(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, want)
	}
	// A negative start time (a clock before 1970) is a 10-byte varint.
	neg := &CreateTunnelTerminatorV2{PeerData: map[uint32][]byte{}, StartTime: -5}
	if got, err := DecodeCreateTunnelTerminatorV2(encodeCreateTunnelTerminatorV2(*neg)); err != nil || !reflect.DeepEqual(got, neg) {
		t.Fatalf("a negative start time decoded as %+v, %v", got, err)
	}
	if got, err := DecodeCreateTunnelTerminatorV2(nil); err != nil || !reflect.DeepEqual(got, &CreateTunnelTerminatorV2{PeerData: map[uint32][]byte{}}) {
		t.Fatalf("the empty request decoded as %+v, %v", got, err)
	}
	checkTruncations(t, "CreateTunnelTerminatorRequestV2", b, func(b []byte) error { _, err := DecodeCreateTunnelTerminatorV2(b); return err })
	if _, err := DecodeCreateTunnelTerminatorV2(buf(nil).msg(3, []byte{0x12, 0x05, 'a'})); err == nil {
		t.Error("a broken peer data entry decodes without an error")
	}
}

func TestDecodeCreateTunnelCircuitV2_RoundTrips(t *testing.T) {
	want := &CreateTunnelCircuitV2{ServiceName: "echo", TerminatorInstanceID: "i-1", PeerData: map[uint32][]byte{3: []byte("key"), 10: {0}}}
	b := encodeCreateTunnelCircuitV2(*want)
	got, err := DecodeCreateTunnelCircuitV2(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, want)
	}
	checkTruncations(t, "CreateTunnelCircuitV2Request", b, func(b []byte) error { _, err := DecodeCreateTunnelCircuitV2(b); return err })
}

func TestDecodeUpdateTunnelTerminator_RoundTrips(t *testing.T) {
	want := &UpdateTunnelTerminator{TerminatorID: "t-1", Cost: 70000, Precedence: PrecedenceRequired, UpdatePrecedence: true, UpdateCost: true}
	b := encodeUpdateTunnelTerminator(*want)
	got, err := DecodeUpdateTunnelTerminator(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, want)
	}
	checkTruncations(t, "UpdateTunnelTerminatorRequest", b, func(b []byte) error { _, err := DecodeUpdateTunnelTerminator(b); return err })
}

func TestTunnelDecoders_BoundPeerData(t *testing.T) {
	var peer buf
	for i := 0; i <= MaxRepeated; i++ {
		peer = peer.msg(3, buf(nil).uint(1, uint64(i)))
	}
	if _, err := DecodeCreateTunnelTerminatorV2(peer); !errors.Is(err, ErrTooMany) {
		t.Errorf("terminator: %d peer data entries: %v, want ErrTooMany", MaxRepeated+1, err)
	}
	if _, err := DecodeCreateTunnelCircuitV2(peer); !errors.Is(err, ErrTooMany) {
		t.Errorf("circuit: %d peer data entries: %v, want ErrTooMany", MaxRepeated+1, err)
	}
}

// The answers, read back field by field.
func TestTunnelAnswers_Encode(t *testing.T) {
	fields := func(b []byte) map[protowire.Number][]any {
		out := map[protowire.Number][]any{}
		if err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
			if raw != nil {
				out[num] = append(out[num], string(raw))
			} else {
				out[num] = append(out[num], v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := fields(CreateTunnelTerminatorV2Response("t-1", -1, TerminatorFailed, "no"))
	want := map[protowire.Number][]any{1: {"t-1"}, 2: {uint64(math.MaxUint64)}, 3: {uint64(TerminatorFailed)}, 4: {"no"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CreateTunnelTerminatorResponseV2: %v, want %v", got, want)
	}
	if b := CreateTunnelTerminatorV2Response("", 0, TerminatorCreated, ""); len(b) != 0 {
		t.Errorf("an empty success is %x, want no bytes (proto3 defaults left out)", b)
	}
	b := CreateTunnelCircuitV2Response("c-1", "ingress", map[uint32][]byte{7: []byte("b"), 3: []byte("a")}, map[string]string{"z": "1", "a": "2"})
	again := CreateTunnelCircuitV2Response("c-1", "ingress", map[uint32][]byte{3: []byte("a"), 7: []byte("b")}, map[string]string{"a": "2", "z": "1"})
	if string(b) != string(again) {
		t.Error("the circuit answer's bytes depend on map order")
	}
	got = fields(b)
	if got[1][0] != "c-1" || got[2][0] != "ingress" || len(got[3]) != 2 || len(got[4]) != 2 {
		t.Errorf("CreateTunnelCircuitV2Response fields: %v", got)
	}
	pd := map[uint32][]byte{}
	if err := addPeerData(pd, []byte(got[3][0].(string))); err != nil || string(pd[3]) != "a" {
		t.Errorf("the first peer data entry reads %v, %v", pd, err)
	}
}

func FuzzTunnelRequests(f *testing.F) {
	f.Add([]byte(encodeCreateTunnelTerminatorV2(CreateTunnelTerminatorV2{ServiceID: "s", Address: "a", PeerData: map[uint32][]byte{3: {1}}, Cost: 3, StartTime: -1})))
	f.Add([]byte(encodeCreateTunnelCircuitV2(CreateTunnelCircuitV2{ServiceName: "echo", PeerData: map[uint32][]byte{1: nil}})))
	f.Add([]byte(encodeUpdateTunnelTerminator(UpdateTunnelTerminator{TerminatorID: "t", UpdateCost: true, Cost: 9})))
	f.Add([]byte{0x1a, 0x03, 0x12, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := DecodeCreateTunnelTerminatorV2(b); err == nil {
			// What decodes encodes to bytes that decode the same.
			again, err := DecodeCreateTunnelTerminatorV2(encodeCreateTunnelTerminatorV2(*r))
			if err != nil || !reflect.DeepEqual(again, normalPeer(r)) {
				t.Fatalf("re-encoded %+v decodes as %+v, %v", r, again, err)
			}
		}
		if r, err := DecodeCreateTunnelCircuitV2(b); err == nil {
			again, err := DecodeCreateTunnelCircuitV2(encodeCreateTunnelCircuitV2(*r))
			if err != nil || again.ServiceName != r.ServiceName || again.TerminatorInstanceID != r.TerminatorInstanceID || len(again.PeerData) != len(r.PeerData) {
				t.Fatalf("re-encoded %+v decodes as %+v, %v", r, again, err)
			}
		}
		if r, err := DecodeUpdateTunnelTerminator(b); err == nil {
			again, err := DecodeUpdateTunnelTerminator(encodeUpdateTunnelTerminator(*r))
			if err != nil || !reflect.DeepEqual(again, r) {
				t.Fatalf("re-encoded %+v decodes as %+v, %v", r, again, err)
			}
		}
	})
}

// normalPeer is r as it reads back after encoding: empty peer data values
// and empty instance secrets are left out, so they read back as nil.
func normalPeer(r *CreateTunnelTerminatorV2) *CreateTunnelTerminatorV2 {
	n := *r
	n.PeerData = map[uint32][]byte{}
	for k, v := range r.PeerData {
		if len(v) == 0 {
			v = nil
		}
		n.PeerData[k] = v
	}
	if len(n.InstanceSecret) == 0 {
		n.InstanceSecret = nil
	}
	return &n
}
