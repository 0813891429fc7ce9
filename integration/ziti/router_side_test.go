package ziti

import (
	"testing"
	"time"

	"edgectl/dataplane/wire"

	"github.com/openziti/ziti/common/pb/ctrl_pb"
	"github.com/openziti/ziti/common/pb/edge_ctrl_pb"
	"google.golang.org/protobuf/proto"
)

// The router's side of the messages (dataplane/wire/router.go, what the
// fleet tool's simulated routers send), read by OpenZiti's generated code,
// and OpenZiti's controller messages read by the router's decoders.

func TestEncode_RouterSideMessages(t *testing.T) {
	checkEncoded(t, "RouterMetadata", wire.RouterMetadata(wire.CapLinkManagement),
		&ctrl_pb.RouterMetadata{Capabilities: []ctrl_pb.RouterCapability{ctrl_pb.RouterCapability_LinkManagement}})
	checkEncoded(t, "ClientHello", wire.ClientHelloMsg("v1.7.2", "host-1", []string{"tls"}),
		&edge_ctrl_pb.ClientHello{Version: "v1.7.2", Hostname: "host-1", Protocols: []string{"tls"}})
	checkEncoded(t, "SubscribeToDataModelRequest",
		wire.Subscribe(wire.SubscribeRequest{CurrentIndex: 42, Duration: 360 * time.Second, Renew: true, TimelineID: "tl"}),
		&edge_ctrl_pb.SubscribeToDataModelRequest{CurrentIndex: 42, SubscriptionDurationSeconds: 360, Renew: true, TimelineId: "tl"})
	checkEncoded(t, "CreateTerminatorV2Request", wire.EncodeCreateTerminatorV2(&wire.CreateTerminatorV2{Address: "t1", SessionToken: "s",
		Fingerprints: []string{"fp"}, PeerData: map[uint32][]byte{1003: []byte("key")}, Cost: 7, Precedence: wire.PrecedenceRequired,
		InstanceID: "i", InstanceSecret: []byte("sec"), APISessionToken: "a"}),
		&edge_ctrl_pb.CreateTerminatorV2Request{Address: "t1", SessionToken: "s", Fingerprints: []string{"fp"},
			PeerData: map[uint32][]byte{1003: []byte("key")}, Cost: 7, Precedence: edge_ctrl_pb.TerminatorPrecedence_Required,
			InstanceId: "i", InstanceSecret: []byte("sec"), ApiSessionToken: "a"})
	checkEncoded(t, "RouterLinks", wire.EncodeRouterLinks([]wire.RouterLink{{ID: "l1", DestRouterID: "r2", Protocol: "tls", DialAddress: "tls:127.0.0.1:1", Iteration: 3}}),
		&ctrl_pb.RouterLinks{Links: []*ctrl_pb.RouterLinks_RouterLink{{Id: "l1", DestRouterId: "r2", LinkProtocol: "tls", DialAddress: "tls:127.0.0.1:1", Iteration: 3}}})
	checkEncoded(t, "ValidateTerminatorsV2Response", wire.ValidateTerminatorsV2Response(map[string]wire.RouterTerminatorState{
		"a": {Valid: true}, "b": {Reason: wire.InvalidUnknownTerminator, Detail: "gone"}}),
		&ctrl_pb.ValidateTerminatorsV2Response{States: map[string]*ctrl_pb.RouterTerminatorState{
			"a": {Valid: true}, "b": {Reason: ctrl_pb.TerminatorInvalidReason_UnknownTerminator, Detail: "gone"}}})
}

func TestDecode_RouterSideReadsOpenZitisMessages(t *testing.T) {
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	resp := must(proto.Marshal(&edge_ctrl_pb.CreateTerminatorV2Response{TerminatorId: "t1", Result: edge_ctrl_pb.CreateTerminatorResult_FailedBusy, Msg: "busy"}))
	if id, res, msg, err := wire.DecodeCreateTerminatorV2Response(resp); err != nil || id != "t1" || res != wire.TerminatorBusy || msg != "busy" {
		t.Errorf("CreateTerminatorV2Response read as %q %d %q %v", id, res, msg, err)
	}
	req := must(proto.Marshal(&ctrl_pb.ValidateTerminatorsV2Request{Terminators: []*ctrl_pb.Terminator{{Id: "a", Binding: "edge", Address: "a"}}}))
	if refs, err := wire.DecodeValidateTerminatorsV2(req); err != nil || len(refs) != 1 || refs[0] != (wire.TerminatorRef{ID: "a", Binding: "edge", Address: "a"}) {
		t.Errorf("ValidateTerminatorsV2Request read as %+v %v", refs, err)
	}
	route := must(proto.Marshal(&ctrl_pb.Route{CircuitId: "c1", Attempt: 2}))
	if id, attempt, err := wire.DecodeRoute(route); err != nil || id != "c1" || attempt != 2 {
		t.Errorf("Route read as %q %d %v", id, attempt, err)
	}
	full := must(proto.Marshal(&edge_ctrl_pb.DataState{Events: []*edge_ctrl_pb.DataState_Event{{}, {}}, EndIndex: 9, TimelineId: "tl"}))
	if s, err := wire.DecodeDataStateSummary(full, true); err != nil || s != (wire.DataStateSummary{Events: 2, Index: 9, Timeline: "tl"}) {
		t.Errorf("DataState read as %+v %v", s, err)
	}
	set := must(proto.Marshal(&edge_ctrl_pb.DataState_ChangeSet{Index: 11, Changes: []*edge_ctrl_pb.DataState_Event{{}}}))
	if s, err := wire.DecodeDataStateSummary(set, false); err != nil || s != (wire.DataStateSummary{Events: 1, Index: 11}) {
		t.Errorf("ChangeSet read as %+v %v", s, err)
	}
}
