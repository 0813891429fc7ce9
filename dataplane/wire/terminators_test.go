package wire

import (
	"errors"
	"reflect"
	"testing"
)

// encodeCreateTerminatorV2 is a router's CreateTerminatorV2Request, written
// as edge_ctrl_pb does (integration/ziti reads the decoder against
// OpenZiti's generated code).
func encodeCreateTerminatorV2(r CreateTerminatorV2) []byte {
	return buf(nil).str(1, r.Address).str(2, r.SessionToken).strs(3, r.Fingerprints).peerData(4, r.PeerData).
		uint(5, uint64(r.Cost)).uint(6, uint64(r.Precedence)).str(7, r.InstanceID).bytes(8, r.InstanceSecret).
		str(9, r.APISessionToken)
}

// encodeTerminatorRequest is a router's UpdateTerminatorRequest,
// RemoveTerminatorRequest or HealthEventRequest, by content type.
func encodeTerminatorRequest(contentType int32, r TerminatorRequest) []byte {
	b := buf(nil).str(1, r.SessionToken).strs(2, r.Fingerprints).str(3, r.TerminatorID)
	switch contentType {
	case UpdateTerminatorRequestType:
		return b.uint(4, uint64(r.Cost)).uint(5, uint64(r.Precedence)).boolean(6, r.UpdatePrecedence).
			boolean(7, r.UpdateCost).str(8, r.APISessionToken)
	case RemoveTerminatorRequestType:
		return b.str(4, r.APISessionToken)
	case HealthEventType:
		return b.boolean(4, r.CheckPassed).str(5, r.APISessionToken)
	}
	panic("not a terminator request type")
}

var terminatorRequestTypes = []int32{UpdateTerminatorRequestType, RemoveTerminatorRequestType, HealthEventType}

// checkTruncations decodes every prefix of a good message b: none panics,
// and the one that cuts the last field's value short is an error.
func checkTruncations(t *testing.T, what string, b []byte, decode func([]byte) error) {
	t.Helper()
	for n := range len(b) {
		err := decode(b[:n])
		if n == len(b)-1 && err == nil {
			t.Errorf("%s cut one byte short decodes without an error", what)
		}
	}
	// A length past the end of the message.
	if err := decode([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}); err == nil {
		t.Errorf("%s: a field longer than the message decodes without an error", what)
	}
}

func TestDecodeCreateTerminatorV2_RoundTrips(t *testing.T) {
	want := &CreateTerminatorV2{
		Address: "hosted:abc", SessionToken: "session-token", Fingerprints: []string{"fp-1", "fp-2"},
		PeerData: map[uint32][]byte{1: []byte("one"), 4096: {0, 1, 2}}, Cost: 42, Precedence: PrecedenceRequired,
		InstanceID: "instance-1", InstanceSecret: []byte{9, 8, 7}, APISessionToken: "api-session-token",
	}
	b := encodeCreateTerminatorV2(*want)
	got, err := DecodeCreateTerminatorV2(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, want)
	}
	got, err = DecodeCreateTerminatorV2(nil)
	if err != nil || !reflect.DeepEqual(got, &CreateTerminatorV2{PeerData: map[uint32][]byte{}}) {
		t.Fatalf("the empty request decoded as %+v, %v", got, err)
	}
	checkTruncations(t, "CreateTerminatorV2Request", b, func(b []byte) error { _, err := DecodeCreateTerminatorV2(b); return err })
	// A peer data entry that is not a message.
	if _, err := DecodeCreateTerminatorV2(buf(nil).msg(4, []byte{0x12, 0x05, 'a'})); err == nil {
		t.Error("a broken peer data entry decodes without an error")
	}
}

func TestDecodeCreateTerminatorV2_BoundsRepeatedFields(t *testing.T) {
	var fps, peer buf
	for i := 0; i <= MaxRepeated; i++ {
		fps = fps.str(3, "f")
		peer = peer.msg(4, buf(nil).uint(1, uint64(i)))
	}
	if _, err := DecodeCreateTerminatorV2(fps); !errors.Is(err, ErrTooMany) {
		t.Errorf("%d fingerprints: %v", MaxRepeated+1, err)
	}
	if _, err := DecodeCreateTerminatorV2(peer); !errors.Is(err, ErrTooMany) {
		t.Errorf("%d peer data entries: %v", MaxRepeated+1, err)
	}
}

func TestDecodeTerminatorRequest_RoundTripsEachType(t *testing.T) {
	common := TerminatorRequest{SessionToken: "session-token", Fingerprints: []string{"fp-1"}, TerminatorID: "t-1", APISessionToken: "api-token"}
	update := common
	update.Cost, update.Precedence, update.UpdateCost, update.UpdatePrecedence = 7, PrecedenceFailed, true, true
	health := common
	health.CheckPassed = true
	for ct, want := range map[int32]TerminatorRequest{UpdateTerminatorRequestType: update, RemoveTerminatorRequestType: common, HealthEventType: health} {
		b := encodeTerminatorRequest(ct, want)
		got, err := DecodeTerminatorRequest(ct, b)
		if err != nil || !reflect.DeepEqual(*got, want) {
			t.Errorf("type %d decoded %+v, %v; want %+v", ct, got, err, want)
		}
		checkTruncations(t, "a terminator request", b, func(b []byte) error { _, err := DecodeTerminatorRequest(ct, b); return err })
	}
	// A field's number means what the request's type says: field 4 is the
	// remove request's API session token, not a cost.
	got, err := DecodeTerminatorRequest(RemoveTerminatorRequestType, encodeTerminatorRequest(UpdateTerminatorRequestType, update))
	if err != nil || got.Cost != 0 || got.UpdateCost || got.APISessionToken != "" {
		t.Errorf("an update read as a remove request: %+v, %v", got, err)
	}
}

func TestDecodeRemoveTerminators_RoundTrips(t *testing.T) {
	b := buf(nil).strs(1, []string{"t-1", "", "t-3"})
	got, err := DecodeRemoveTerminators(b)
	if err != nil || !reflect.DeepEqual(got, []string{"t-1", "", "t-3"}) {
		t.Fatalf("decoded %q, %v", got, err)
	}
	checkTruncations(t, "RemoveTerminatorsRequest", b, func(b []byte) error { _, err := DecodeRemoveTerminators(b); return err })
	var many buf
	for i := 0; i <= MaxRepeated; i++ {
		many = many.str(1, "t")
	}
	if _, err := DecodeRemoveTerminators(many); !errors.Is(err, ErrTooMany) {
		t.Errorf("%d terminator ids: %v", MaxRepeated+1, err)
	}
}
