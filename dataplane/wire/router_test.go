package wire

import (
	"reflect"
	"testing"
	"time"
)

// The router's encoders, each read back by the controller's decoder (and
// the controller's encoders read back by the router's decoders).

func TestRouterSide_CreateTerminatorV2RoundTrips(t *testing.T) {
	in := &CreateTerminatorV2{Address: "t1", SessionToken: "s", Fingerprints: []string{"f"}, PeerData: map[uint32][]byte{1: []byte("x")},
		Cost: 7, Precedence: PrecedenceRequired, InstanceID: "i", InstanceSecret: []byte("sec"), APISessionToken: "a"}
	out, err := DecodeCreateTerminatorV2(EncodeCreateTerminatorV2(in))
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("got %+v, %v; want %+v", out, err, in)
	}
	id, res, msg, err := DecodeCreateTerminatorV2Response(CreateTerminatorV2Response("t1", TerminatorBusy, "slow down"))
	if err != nil || id != "t1" || res != TerminatorBusy || msg != "slow down" {
		t.Fatalf("response %q %d %q %v", id, res, msg, err)
	}
}

func TestRouterSide_HelloSubscribeLinksRoundTrip(t *testing.T) {
	h, err := DecodeClientHello(ClientHelloMsg("v1.7.2", "host-1", []string{"tls"}))
	if err != nil || h.Version != "v1.7.2" || h.Hostname != "host-1" || !reflect.DeepEqual(h.Protocols, []string{"tls"}) {
		t.Fatalf("client hello %+v %v", h, err)
	}
	sub := SubscribeRequest{CurrentIndex: 42, Duration: 360 * time.Second, Renew: true, TimelineID: "tl"}
	if got, err := DecodeSubscribe(Subscribe(sub)); err != nil || got != sub {
		t.Fatalf("subscribe %+v %v", got, err)
	}
	links := []RouterLink{{ID: "l1", DestRouterID: "r2", Protocol: "tls", DialAddress: "tls:127.0.0.1:1", Iteration: 3}}
	if got, err := DecodeRouterLinks(EncodeRouterLinks(links)); err != nil || !reflect.DeepEqual(got, links) {
		t.Fatalf("links %+v %v", got, err)
	}
}

func TestRouterSide_ValidateTerminatorsRouteAndDataStateRoundTrip(t *testing.T) {
	refs := []TerminatorRef{{ID: "a", Binding: "edge", Address: "a"}, {ID: "b", Binding: "edge", Address: "b"}}
	if got, err := DecodeValidateTerminatorsV2(ValidateTerminatorsV2(refs, false)); err != nil || !reflect.DeepEqual(got, refs) {
		t.Fatalf("validate request %+v %v", got, err)
	}
	states := map[string]RouterTerminatorState{"a": {Valid: true}, "b": {Reason: InvalidUnknownTerminator, Detail: "gone"}}
	if got, err := DecodeValidateTerminatorsV2Response(ValidateTerminatorsV2Response(states)); err != nil || !reflect.DeepEqual(got, states) {
		t.Fatalf("validate response %+v %v", got, err)
	}
	if id, attempt, err := DecodeRoute(Route("c1", 1, &Egress{Binding: "edge"}, nil, 5, nil)); err != nil || id != "c1" || attempt != 1 {
		t.Fatalf("route %q %d %v", id, attempt, err)
	}
	full, err := DecodeDataStateSummary(DataState([][]byte{{}, {}}, 9, "tl"), true)
	if err != nil || full != (DataStateSummary{Events: 2, Index: 9, Timeline: "tl"}) {
		t.Fatalf("data state %+v %v", full, err)
	}
	set, err := DecodeDataStateSummary(ChangeSet(11, false, [][]byte{{}}), false)
	if err != nil || set != (DataStateSummary{Events: 1, Index: 11}) {
		t.Fatalf("change set %+v %v", set, err)
	}
	if md := RouterMetadata(CapLinkManagement); len(md) != 3 {
		t.Fatalf("router metadata %x", md)
	}
}
