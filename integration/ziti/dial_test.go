package ziti

import (
	"testing"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"

	"github.com/openziti/sdk-golang/pb/edge_client_pb"
	"github.com/openziti/ziti/common/ctrl_msg"
	"github.com/openziti/ziti/common/pb/edge_ctrl_pb"
)

// The dial: a router's CreateCircuitV2Request (all in headers), the
// controller's answer or error, and the route results on the way.

func TestConstants_Dial(t *testing.T) {
	e := func(ct edge_ctrl_pb.ContentType) int64 { return int64(ct) }
	checkConsts(t, []constCase{
		{"wire.CreateCircuitV2RequestType", wire.CreateCircuitV2RequestType, e(edge_ctrl_pb.ContentType_CreateCircuitV2RequestType), "edge_ctrl_pb.ContentType_CreateCircuitV2RequestType"},
		{"wire.CreateCircuitV2ResponseType", wire.CreateCircuitV2ResponseType, e(edge_ctrl_pb.ContentType_CreateCircuitV2ResponseType), "edge_ctrl_pb.ContentType_CreateCircuitV2ResponseType"},
		{"wire.CreateCircuitV2RequestType", wire.CreateCircuitV2RequestType, int64((&ctrl_msg.CreateCircuitRequest{}).ToMessage().ContentType), "(*ctrl_msg.CreateCircuitRequest).ToMessage().ContentType"},
		{"wire.CreateCircuitV2ResponseType", wire.CreateCircuitV2ResponseType, int64((&ctrl_msg.CreateCircuitResponse{}).ToMessage().ContentType), "(*ctrl_msg.CreateCircuitResponse).ToMessage().ContentType"},
		{"wire.RouteResultType", wire.RouteResultType, ctrl_msg.RouteResultType, "ctrl_msg.RouteResultType"},

		{"wire.CreateCircuitPeerDataHeader", wire.CreateCircuitPeerDataHeader, ctrl_msg.CreateCircuitPeerDataHeader, "ctrl_msg.CreateCircuitPeerDataHeader"},
		{"wire.PublicKeyPeerData", wire.PublicKeyPeerData, int64(edge_client_pb.HeaderId_PublicKey), "edge_client_pb.HeaderId_PublicKey"},
		{"wire.CreateCircuitReqSessionTokenHeader", wire.CreateCircuitReqSessionTokenHeader, ctrl_msg.CreateCircuitReqSessionTokenHeader, "ctrl_msg.CreateCircuitReqSessionTokenHeader"},
		{"wire.CreateCircuitReqFingerprintsHeader", wire.CreateCircuitReqFingerprintsHeader, ctrl_msg.CreateCircuitReqFingerprintsHeader, "ctrl_msg.CreateCircuitReqFingerprintsHeader"},
		{"wire.CreateCircuitReqTerminatorInstanceIDHeader", wire.CreateCircuitReqTerminatorInstanceIDHeader, ctrl_msg.CreateCircuitReqTerminatorInstanceIdHeader, "ctrl_msg.CreateCircuitReqTerminatorInstanceIdHeader"},
		{"wire.CreateCircuitReqAPISessionTokenHeader", wire.CreateCircuitReqAPISessionTokenHeader, ctrl_msg.CreateCircuitReqApiSessionTokenHeader, "ctrl_msg.CreateCircuitReqApiSessionTokenHeader"},
		{"wire.CreateCircuitRespCircuitIDHeader", wire.CreateCircuitRespCircuitIDHeader, ctrl_msg.CreateCircuitRespCircuitId, "ctrl_msg.CreateCircuitRespCircuitId"},
		{"wire.CreateCircuitRespAddressHeader", wire.CreateCircuitRespAddressHeader, ctrl_msg.CreateCircuitRespAddress, "ctrl_msg.CreateCircuitRespAddress"},
		{"wire.CreateCircuitRespTagsHeader", wire.CreateCircuitRespTagsHeader, ctrl_msg.CreateCircuitRespTagsHeader, "ctrl_msg.CreateCircuitRespTagsHeader"},

		{"wire.RouteResultAttemptHeader", wire.RouteResultAttemptHeader, ctrl_msg.RouteResultAttemptHeader, "ctrl_msg.RouteResultAttemptHeader"},
		{"wire.RouteResultSuccessHeader", wire.RouteResultSuccessHeader, ctrl_msg.RouteResultSuccessHeader, "ctrl_msg.RouteResultSuccessHeader"},
		{"wire.RouteResultErrorHeader", wire.RouteResultErrorHeader, ctrl_msg.RouteResultErrorHeader, "ctrl_msg.RouteResultErrorHeader"},
		{"wire.RouteResultErrorCodeHeader", wire.RouteResultErrorCodeHeader, ctrl_msg.RouteResultErrorCodeHeader, "ctrl_msg.RouteResultErrorCodeHeader"},
		{"wire.TerminatorLocalAddressHeader", wire.TerminatorLocalAddressHeader, ctrl_msg.TerminatorLocalAddressHeader, "ctrl_msg.TerminatorLocalAddressHeader"},
		{"wire.TerminatorRemoteAddressHeader", wire.TerminatorRemoteAddressHeader, ctrl_msg.TerminatorRemoteAddressHeader, "ctrl_msg.TerminatorRemoteAddressHeader"},
		{"wire.InitiatorLocalAddressHeader", wire.InitiatorLocalAddressHeader, ctrl_msg.InitiatorLocalAddressHeader, "ctrl_msg.InitiatorLocalAddressHeader"},
		{"wire.InitiatorRemoteAddressHeader", wire.InitiatorRemoteAddressHeader, ctrl_msg.InitiatorRemoteAddressHeader, "ctrl_msg.InitiatorRemoteAddressHeader"},

		{"wire.RouteErrGeneric", wire.RouteErrGeneric, ctrl_msg.ErrorTypeGeneric, "ctrl_msg.ErrorTypeGeneric"},
		{"wire.RouteErrInvalidTerminator", wire.RouteErrInvalidTerminator, ctrl_msg.ErrorTypeInvalidTerminator, "ctrl_msg.ErrorTypeInvalidTerminator"},
		{"wire.RouteErrMisconfiguredTerminator", wire.RouteErrMisconfiguredTerminator, ctrl_msg.ErrorTypeMisconfiguredTerminator, "ctrl_msg.ErrorTypeMisconfiguredTerminator"},
		{"wire.RouteErrDialTimedOut", wire.RouteErrDialTimedOut, ctrl_msg.ErrorTypeDialTimedOut, "ctrl_msg.ErrorTypeDialTimedOut"},
		{"wire.RouteErrConnectionRefused", wire.RouteErrConnectionRefused, ctrl_msg.ErrorTypeConnectionRefused, "ctrl_msg.ErrorTypeConnectionRefused"},

		{"wire.CircuitIDHeader", wire.CircuitIDHeader, int64(edge_client_pb.HeaderId_CircuitId), "edge_client_pb.HeaderId_CircuitId"},
	})
}

func TestDial_OpenZitiRequestReadByEdgectl(t *testing.T) {
	z := &ctrl_msg.CreateCircuitRequest{ApiSessionToken: "api-token", SessionToken: "session-token", Fingerprints: []string{"fp-1", "", "fp-3"},
		TerminatorInstanceId: "instance-1", PeerData: map[uint32][]byte{3: []byte("public key"), 1 << 31: {}}}
	m := readByCtrlchan(t, z.ToMessage())
	if m.ContentType != wire.CreateCircuitV2RequestType {
		t.Fatalf("content type %d", m.ContentType)
	}
	got, err := wire.DecodeCreateCircuitV2Request(m.Headers)
	checkDecoded(t, "CreateCircuitV2Request", got, &wire.CreateCircuitV2Request{SessionToken: "session-token", APISessionToken: "api-token",
		Fingerprints: []string{"fp-1", "", "fp-3"}, TerminatorInstanceID: "instance-1", PeerData: map[uint32][]byte{3: []byte("public key"), 1 << 31: nil}}, err)

	// The least a router sends: a session token.
	got, err = wire.DecodeCreateCircuitV2Request(readByCtrlchan(t, (&ctrl_msg.CreateCircuitRequest{SessionToken: "s"}).ToMessage()).Headers)
	checkDecoded(t, "CreateCircuitV2Request with a session token only", got, &wire.CreateCircuitV2Request{SessionToken: "s"}, err)

	// OpenZiti's controller refuses a dial without a session token; so does edgectl.
	noToken := (&ctrl_msg.CreateCircuitRequest{ApiSessionToken: "api-token"}).ToMessage()
	if _, err := ctrl_msg.DecodeCreateCircuitRequest(noToken); err == nil {
		t.Fatal("OpenZiti takes a dial without a session token; edgectl's refusal is no longer OpenZiti's")
	}
	if got, err := wire.DecodeCreateCircuitV2Request(readByCtrlchan(t, noToken).Headers); err == nil {
		t.Errorf("a dial without a session token decoded as %+v", got)
	}
}

func TestDial_EdgectlAnswerReadByOpenZiti(t *testing.T) {
	for name, peer := range map[string]map[uint32][]byte{"with peer data": {3: []byte("public key"), 1026: []byte("x")}, "without": nil} {
		m := ctrlchan.NewMessage(wire.CreateCircuitV2ResponseType, nil)
		m.Headers = wire.CreateCircuitV2Response("circuit-1", "ingress-token", peer)
		got, err := ctrl_msg.DecodeCreateCircuitResponse(readByZiti(t, m))
		checkDecoded(t, "CreateCircuitV2Response "+name, got,
			&ctrl_msg.CreateCircuitResponse{CircuitId: "circuit-1", Address: "ingress-token", PeerData: peer}, err)
	}

	// A refused dial: an edge error with its code and the circuit's id.
	m := ctrlchan.NewMessage(wire.ErrorType, []byte("invalid session"))
	m.Headers.PutUint32(wire.ErrorCodeHeader, wire.ErrInvalidSession)
	m.Headers.PutString(wire.CircuitIDHeader, "circuit-1")
	z := readByZiti(t, m)
	code, _ := z.GetUint32Header(int32(edge_client_pb.HeaderId_ErrorCode))
	circuit, _ := z.GetStringHeader(int32(edge_client_pb.HeaderId_CircuitId))
	if z.ContentType != int32(edge_ctrl_pb.ContentType_ErrorType) || code != uint32(edge_client_pb.Error_InvalidSession) || circuit != "circuit-1" {
		t.Errorf("OpenZiti reads the refusal as type %d, code %d, circuit %q", z.ContentType, code, circuit)
	}
}

func TestDial_OpenZitiRouteResultsReadByEdgectl(t *testing.T) {
	ok := readByCtrlchan(t, ctrl_msg.NewRouteResultSuccessMsg("circuit-1", 2))
	attempt, _ := ok.Headers.Uint32(wire.RouteResultAttemptHeader)
	if _, success := ok.Headers[wire.RouteResultSuccessHeader]; ok.ContentType != wire.RouteResultType || string(ok.Body) != "circuit-1" || attempt != 2 || !success {
		t.Errorf("a successful route result reads as type %d, circuit %q, attempt %d, success %v", ok.ContentType, ok.Body, attempt, success)
	}

	z := ctrl_msg.NewRouteResultFailedMessage("circuit-1", 1, "no terminator")
	z.PutByteHeader(ctrl_msg.RouteResultErrorCodeHeader, ctrl_msg.ErrorTypeInvalidTerminator)
	failed := readByCtrlchan(t, z)
	attempt, _ = failed.Headers.Uint32(wire.RouteResultAttemptHeader)
	reason, _ := failed.Headers.String(wire.RouteResultErrorHeader)
	code := failed.Headers[wire.RouteResultErrorCodeHeader]
	if _, success := failed.Headers[wire.RouteResultSuccessHeader]; success || attempt != 1 || reason != "no terminator" ||
		len(code) != 1 || code[0] != wire.RouteErrInvalidTerminator {
		t.Errorf("a failed route result reads as success %v, attempt %d, reason %q, code %v", success, attempt, reason, code)
	}
}
