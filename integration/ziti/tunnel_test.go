package ziti

import (
	"testing"

	"edgectl/dataplane/wire"

	"github.com/openziti/sdk-golang/pb/edge_client_pb"
	"github.com/openziti/ziti/common/pb/edge_ctrl_pb"
)

// A router's own tunneler (router/xgress_edge_tunnel_v2): its terminator,
// circuit, update and health messages, and the answers.

func TestConstants_Tunnel(t *testing.T) {
	e := func(ct edge_ctrl_pb.ContentType) int64 { return int64(ct) }
	checkConsts(t, []constCase{
		{"wire.CreateTunnelCircuitV2RequestType", wire.CreateTunnelCircuitV2RequestType, e(edge_ctrl_pb.ContentType_CreateTunnelCircuitV2RequestType), "edge_ctrl_pb.ContentType_CreateTunnelCircuitV2RequestType"},
		{"wire.CreateTunnelCircuitV2ResponseType", wire.CreateTunnelCircuitV2ResponseType, e(edge_ctrl_pb.ContentType_CreateTunnelCircuitV2ResponseType), "edge_ctrl_pb.ContentType_CreateTunnelCircuitV2ResponseType"},
		{"wire.UpdateTunnelTerminatorRequestType", wire.UpdateTunnelTerminatorRequestType, e(edge_ctrl_pb.ContentType_UpdateTunnelTerminatorRequestType), "edge_ctrl_pb.ContentType_UpdateTunnelTerminatorRequestType"},
		{"wire.UpdateTunnelTerminatorResponseType", wire.UpdateTunnelTerminatorResponseType, e(edge_ctrl_pb.ContentType_UpdateTunnelTerminatorResponseType), "edge_ctrl_pb.ContentType_UpdateTunnelTerminatorResponseType"},
		{"wire.TunnelHealthEventType", wire.TunnelHealthEventType, e(edge_ctrl_pb.ContentType_TunnelHealthEventType), "edge_ctrl_pb.ContentType_TunnelHealthEventType"},
		{"wire.CreateTunnelTerminatorRequestV2Type", wire.CreateTunnelTerminatorRequestV2Type, e(edge_ctrl_pb.ContentType_CreateTunnelTerminatorRequestV2Type), "edge_ctrl_pb.ContentType_CreateTunnelTerminatorRequestV2Type"},
		{"wire.CreateTunnelTerminatorResponseV2Type", wire.CreateTunnelTerminatorResponseV2Type, e(edge_ctrl_pb.ContentType_CreateTunnelTerminatorResponseV2Type), "edge_ctrl_pb.ContentType_CreateTunnelTerminatorResponseV2Type"},

		// The content types OpenZiti's generated messages declare for themselves.
		{"wire.CreateTunnelCircuitV2RequestType", wire.CreateTunnelCircuitV2RequestType, int64((&edge_ctrl_pb.CreateTunnelCircuitV2Request{}).GetContentType()), "(*edge_ctrl_pb.CreateTunnelCircuitV2Request).GetContentType()"},
		{"wire.CreateTunnelCircuitV2ResponseType", wire.CreateTunnelCircuitV2ResponseType, int64((&edge_ctrl_pb.CreateTunnelCircuitV2Response{}).GetContentType()), "(*edge_ctrl_pb.CreateTunnelCircuitV2Response).GetContentType()"},
		{"wire.UpdateTunnelTerminatorRequestType", wire.UpdateTunnelTerminatorRequestType, int64((&edge_ctrl_pb.UpdateTunnelTerminatorRequest{}).GetContentType()), "(*edge_ctrl_pb.UpdateTunnelTerminatorRequest).GetContentType()"},
		{"wire.CreateTunnelTerminatorRequestV2Type", wire.CreateTunnelTerminatorRequestV2Type, int64((&edge_ctrl_pb.CreateTunnelTerminatorRequestV2{}).GetContentType()), "(*edge_ctrl_pb.CreateTunnelTerminatorRequestV2).GetContentType()"},
		{"wire.CreateTunnelTerminatorResponseV2Type", wire.CreateTunnelTerminatorResponseV2Type, int64((&edge_ctrl_pb.CreateTunnelTerminatorResponseV2{}).GetContentType()), "(*edge_ctrl_pb.CreateTunnelTerminatorResponseV2).GetContentType()"},

		{"wire.TerminatorIDHeader", wire.TerminatorIDHeader, int64(edge_ctrl_pb.Header_TerminatorId), "edge_ctrl_pb.Header_TerminatorId"},
		{"wire.CheckPassedHeader", wire.CheckPassedHeader, int64(edge_ctrl_pb.Header_CheckPassed), "edge_ctrl_pb.Header_CheckPassed"},
		{"wire.PublicKeyPeerData", wire.PublicKeyPeerData, int64(edge_client_pb.HeaderId_PublicKey), "edge_client_pb.HeaderId_PublicKey"},
		{"wire.ErrTunnelingNotEnabled", wire.ErrTunnelingNotEnabled, int64(edge_client_pb.Error_TunnelingNotEnabled), "edge_client_pb.Error_TunnelingNotEnabled"},
		{"wire.ErrEncryptionDataMissing", wire.ErrEncryptionDataMissing, int64(edge_client_pb.Error_EncryptionDataMissing), "edge_client_pb.Error_EncryptionDataMissing"},
	})
}

func TestDecode_TunnelRequests(t *testing.T) {
	tt, err := wire.DecodeCreateTunnelTerminatorV2(marshal(t, withUnknown(&edge_ctrl_pb.CreateTunnelTerminatorRequestV2{
		ServiceId: "svc-1", Address: "t-1", PeerData: map[uint32][]byte{3: []byte("key"), 1 << 31: {}}, Cost: 65535,
		Precedence: edge_ctrl_pb.TerminatorPrecedence_Failed, InstanceId: "i-1", InstanceSecret: []byte{0, 1}, StartTime: 1765100000123,
	})))
	checkDecoded(t, "CreateTunnelTerminatorRequestV2", tt, &wire.CreateTunnelTerminatorV2{
		ServiceID: "svc-1", Address: "t-1", PeerData: map[uint32][]byte{3: []byte("key"), 1 << 31: nil}, Cost: 65535,
		Precedence: wire.PrecedenceFailed, InstanceID: "i-1", InstanceSecret: []byte{0, 1}, StartTime: 1765100000123,
	}, err)
	tt, err = wire.DecodeCreateTunnelTerminatorV2(marshal(t, &edge_ctrl_pb.CreateTunnelTerminatorRequestV2{StartTime: -2}))
	checkDecoded(t, "CreateTunnelTerminatorRequestV2, negative start", tt, &wire.CreateTunnelTerminatorV2{PeerData: map[uint32][]byte{}, StartTime: -2}, err)

	tc, err := wire.DecodeCreateTunnelCircuitV2(marshal(t, withUnknown(&edge_ctrl_pb.CreateTunnelCircuitV2Request{
		ServiceName: "echo", TerminatorInstanceId: "i-1", PeerData: map[uint32][]byte{3: []byte("key"), 1009: []byte("127.0.0.1:5")},
	})))
	checkDecoded(t, "CreateTunnelCircuitV2Request", tc, &wire.CreateTunnelCircuitV2{
		ServiceName: "echo", TerminatorInstanceID: "i-1", PeerData: map[uint32][]byte{3: []byte("key"), 1009: []byte("127.0.0.1:5")},
	}, err)

	tu, err := wire.DecodeUpdateTunnelTerminator(marshal(t, withUnknown(&edge_ctrl_pb.UpdateTunnelTerminatorRequest{
		TerminatorId: "t-1", Cost: 9, Precedence: edge_ctrl_pb.TerminatorPrecedence_Required, UpdatePrecedence: true, UpdateCost: true,
	})))
	checkDecoded(t, "UpdateTunnelTerminatorRequest", tu, &wire.UpdateTunnelTerminator{
		TerminatorID: "t-1", Cost: 9, Precedence: wire.PrecedenceRequired, UpdatePrecedence: true, UpdateCost: true,
	}, err)
}

func TestEncode_TunnelAnswers(t *testing.T) {
	checkEncoded(t, "CreateTunnelTerminatorResponseV2", wire.CreateTunnelTerminatorV2Response("t-1", 1765100000123, wire.TerminatorFailed, "invalid service"),
		&edge_ctrl_pb.CreateTunnelTerminatorResponseV2{TerminatorId: "t-1", StartTime: 1765100000123, Result: edge_ctrl_pb.CreateTerminatorResult_FailedOther, Msg: "invalid service"})
	checkEncoded(t, "CreateTunnelTerminatorResponseV2, created, negative start", wire.CreateTunnelTerminatorV2Response("t-1", -1, wire.TerminatorCreated, ""),
		&edge_ctrl_pb.CreateTunnelTerminatorResponseV2{TerminatorId: "t-1", StartTime: -1})
	checkEncoded(t, "CreateTunnelCircuitV2Response",
		wire.CreateTunnelCircuitV2Response("c-1", "ingress", map[uint32][]byte{3: []byte("host key"), 1010: nil}, map[string]string{"serviceId": "s", "clientId": "r"}),
		&edge_ctrl_pb.CreateTunnelCircuitV2Response{CircuitId: "c-1", Address: "ingress", PeerData: map[uint32][]byte{3: []byte("host key"), 1010: {}},
			Tags: map[string]string{"serviceId": "s", "clientId": "r"}})
	checkEncoded(t, "CreateTunnelCircuitV2Response, bare", wire.CreateTunnelCircuitV2Response("c-1", "", nil, nil),
		&edge_ctrl_pb.CreateTunnelCircuitV2Response{CircuitId: "c-1"})
}
