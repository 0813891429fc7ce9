package ziti

import (
	"testing"

	"edgectl/dataplane/wire"

	"github.com/openziti/sdk-golang/pb/edge_client_pb"
	"github.com/openziti/ziti/common/pb/ctrl_pb"
	"github.com/openziti/ziti/common/pb/edge_ctrl_pb"
)

// The terminators: an SDK host's create, update, remove and health
// requests through its router, the answers, the router's own removals and
// the controller's validation.

func TestConstants_Terminators(t *testing.T) {
	e := func(ct edge_ctrl_pb.ContentType) int64 { return int64(ct) }
	c := func(ct ctrl_pb.ContentType) int64 { return int64(ct) }
	checkConsts(t, []constCase{
		{"wire.UpdateTerminatorRequestType", wire.UpdateTerminatorRequestType, e(edge_ctrl_pb.ContentType_UpdateTerminatorRequestType), "edge_ctrl_pb.ContentType_UpdateTerminatorRequestType"},
		{"wire.UpdateTerminatorResponseType", wire.UpdateTerminatorResponseType, e(edge_ctrl_pb.ContentType_UpdateTerminatorResponseType), "edge_ctrl_pb.ContentType_UpdateTerminatorResponseType"},
		{"wire.RemoveTerminatorRequestType", wire.RemoveTerminatorRequestType, e(edge_ctrl_pb.ContentType_RemoveTerminatorRequestType), "edge_ctrl_pb.ContentType_RemoveTerminatorRequestType"},
		{"wire.RemoveTerminatorResponseType", wire.RemoveTerminatorResponseType, e(edge_ctrl_pb.ContentType_RemoveTerminatorResponseType), "edge_ctrl_pb.ContentType_RemoveTerminatorResponseType"},
		{"wire.HealthEventType", wire.HealthEventType, e(edge_ctrl_pb.ContentType_HealthEventType), "edge_ctrl_pb.ContentType_HealthEventType"},
		{"wire.CreateTerminatorV2RequestType", wire.CreateTerminatorV2RequestType, e(edge_ctrl_pb.ContentType_CreateTerminatorV2RequestType), "edge_ctrl_pb.ContentType_CreateTerminatorV2RequestType"},
		{"wire.CreateTerminatorV2ResponseType", wire.CreateTerminatorV2ResponseType, e(edge_ctrl_pb.ContentType_CreateTerminatorV2ResponseType), "edge_ctrl_pb.ContentType_CreateTerminatorV2ResponseType"},
		{"wire.RemoveTerminatorsRequestType", wire.RemoveTerminatorsRequestType, c(ctrl_pb.ContentType_RemoveTerminatorsRequestType), "ctrl_pb.ContentType_RemoveTerminatorsRequestType"},
		{"wire.ValidateTerminatorsV2RequestType", wire.ValidateTerminatorsV2RequestType, c(ctrl_pb.ContentType_ValidateTerminatorsV2RequestType), "ctrl_pb.ContentType_ValidateTerminatorsV2RequestType"},
		{"wire.ValidateTerminatorsV2ResponseType", wire.ValidateTerminatorsV2ResponseType, c(ctrl_pb.ContentType_ValidateTerminatorsV2ResponseType), "ctrl_pb.ContentType_ValidateTerminatorsV2ResponseType"},

		// The content types OpenZiti's generated messages declare for themselves.
		{"wire.UpdateTerminatorRequestType", wire.UpdateTerminatorRequestType, int64((&edge_ctrl_pb.UpdateTerminatorRequest{}).GetContentType()), "(*edge_ctrl_pb.UpdateTerminatorRequest).GetContentType()"},
		{"wire.RemoveTerminatorRequestType", wire.RemoveTerminatorRequestType, int64((&edge_ctrl_pb.RemoveTerminatorRequest{}).GetContentType()), "(*edge_ctrl_pb.RemoveTerminatorRequest).GetContentType()"},
		{"wire.HealthEventType", wire.HealthEventType, int64((&edge_ctrl_pb.HealthEventRequest{}).GetContentType()), "(*edge_ctrl_pb.HealthEventRequest).GetContentType()"},
		{"wire.CreateTerminatorV2RequestType", wire.CreateTerminatorV2RequestType, int64((&edge_ctrl_pb.CreateTerminatorV2Request{}).GetContentType()), "(*edge_ctrl_pb.CreateTerminatorV2Request).GetContentType()"},
		{"wire.CreateTerminatorV2ResponseType", wire.CreateTerminatorV2ResponseType, int64((&edge_ctrl_pb.CreateTerminatorV2Response{}).GetContentType()), "(*edge_ctrl_pb.CreateTerminatorV2Response).GetContentType()"},
		{"wire.RemoveTerminatorsRequestType", wire.RemoveTerminatorsRequestType, int64((&ctrl_pb.RemoveTerminatorsRequest{}).GetContentType()), "(*ctrl_pb.RemoveTerminatorsRequest).GetContentType()"},
		{"wire.ValidateTerminatorsV2RequestType", wire.ValidateTerminatorsV2RequestType, int64((&ctrl_pb.ValidateTerminatorsV2Request{}).GetContentType()), "(*ctrl_pb.ValidateTerminatorsV2Request).GetContentType()"},
		{"wire.ErrorType", wire.ErrorType, int64((&edge_ctrl_pb.Error{}).GetContentType()), "(*edge_ctrl_pb.Error).GetContentType()"},

		{"wire.TerminatorCreated", wire.TerminatorCreated, int64(edge_ctrl_pb.CreateTerminatorResult_Success), "edge_ctrl_pb.CreateTerminatorResult_Success"},
		{"wire.TerminatorIDConflict", wire.TerminatorIDConflict, int64(edge_ctrl_pb.CreateTerminatorResult_FailedIdConflict), "edge_ctrl_pb.CreateTerminatorResult_FailedIdConflict"},
		{"wire.TerminatorFailed", wire.TerminatorFailed, int64(edge_ctrl_pb.CreateTerminatorResult_FailedOther), "edge_ctrl_pb.CreateTerminatorResult_FailedOther"},
		{"wire.TerminatorBusy", wire.TerminatorBusy, int64(edge_ctrl_pb.CreateTerminatorResult_FailedBusy), "edge_ctrl_pb.CreateTerminatorResult_FailedBusy"},
		{"wire.TerminatorInvalidSession", wire.TerminatorInvalidSession, int64(edge_ctrl_pb.CreateTerminatorResult_FailedInvalidSession), "edge_ctrl_pb.CreateTerminatorResult_FailedInvalidSession"},

		// An edge error's code: its header and values (the dial's errors too).
		{"wire.ErrorCodeHeader", wire.ErrorCodeHeader, int64(edge_client_pb.HeaderId_ErrorCode), "edge_client_pb.HeaderId_ErrorCode"},
		{"wire.ErrInternal", wire.ErrInternal, int64(edge_client_pb.Error_Internal), "edge_client_pb.Error_Internal"},
		{"wire.ErrInvalidAPISession", wire.ErrInvalidAPISession, int64(edge_client_pb.Error_InvalidApiSession), "edge_client_pb.Error_InvalidApiSession"},
		{"wire.ErrInvalidSession", wire.ErrInvalidSession, int64(edge_client_pb.Error_InvalidSession), "edge_client_pb.Error_InvalidSession"},
		{"wire.ErrWrongSessionType", wire.ErrWrongSessionType, int64(edge_client_pb.Error_WrongSessionType), "edge_client_pb.Error_WrongSessionType"},
		{"wire.ErrInvalidEdgeRouterForSession", wire.ErrInvalidEdgeRouterForSession, int64(edge_client_pb.Error_InvalidEdgeRouterForSession), "edge_client_pb.Error_InvalidEdgeRouterForSession"},
		{"wire.ErrInvalidService", wire.ErrInvalidService, int64(edge_client_pb.Error_InvalidService), "edge_client_pb.Error_InvalidService"},
		{"wire.ErrInvalidTerminator", wire.ErrInvalidTerminator, int64(edge_client_pb.Error_InvalidTerminator), "edge_client_pb.Error_InvalidTerminator"},
		{"wire.ErrInvalidPrecedence", wire.ErrInvalidPrecedence, int64(edge_client_pb.Error_InvalidPrecedence), "edge_client_pb.Error_InvalidPrecedence"},
		{"wire.ErrInvalidCost", wire.ErrInvalidCost, int64(edge_client_pb.Error_InvalidCost), "edge_client_pb.Error_InvalidCost"},
		{"wire.ErrEncryptionDataMissing", wire.ErrEncryptionDataMissing, int64(edge_client_pb.Error_EncryptionDataMissing), "edge_client_pb.Error_EncryptionDataMissing"},
	})
}

func TestDecode_TerminatorRequests(t *testing.T) {
	got, err := wire.DecodeCreateTerminatorV2(marshal(t, withUnknown(&edge_ctrl_pb.CreateTerminatorV2Request{
		Address: "hosted:abc", SessionToken: "session-token", Fingerprints: []string{"fp-1", "fp-2"},
		PeerData: map[uint32][]byte{3: []byte("public key"), 1 << 31: {}}, Cost: 65535, Precedence: edge_ctrl_pb.TerminatorPrecedence_Required,
		InstanceId: "instance-1", InstanceSecret: []byte{0, 1, 2}, ApiSessionToken: "api-token",
	})))
	checkDecoded(t, "CreateTerminatorV2Request", got, &wire.CreateTerminatorV2{
		Address: "hosted:abc", SessionToken: "session-token", Fingerprints: []string{"fp-1", "fp-2"},
		PeerData: map[uint32][]byte{3: []byte("public key"), 1 << 31: nil}, Cost: 65535, Precedence: wire.PrecedenceRequired,
		InstanceID: "instance-1", InstanceSecret: []byte{0, 1, 2}, APISessionToken: "api-token",
	}, err)

	tr, err := wire.DecodeTerminatorRequest(wire.UpdateTerminatorRequestType, marshal(t, withUnknown(&edge_ctrl_pb.UpdateTerminatorRequest{
		SessionToken: "session-token", Fingerprints: []string{"fp-1"}, TerminatorId: "t-1", Cost: 7,
		Precedence: edge_ctrl_pb.TerminatorPrecedence_Failed, UpdatePrecedence: true, UpdateCost: true, ApiSessionToken: "api-token"})))
	checkDecoded(t, "UpdateTerminatorRequest", tr, &wire.TerminatorRequest{SessionToken: "session-token", Fingerprints: []string{"fp-1"},
		TerminatorID: "t-1", Cost: 7, Precedence: wire.PrecedenceFailed, UpdatePrecedence: true, UpdateCost: true, APISessionToken: "api-token"}, err)

	tr, err = wire.DecodeTerminatorRequest(wire.RemoveTerminatorRequestType, marshal(t, withUnknown(&edge_ctrl_pb.RemoveTerminatorRequest{
		SessionToken: "session-token", Fingerprints: []string{"fp-1", "fp-2"}, TerminatorId: "t-1", ApiSessionToken: "api-token"})))
	checkDecoded(t, "RemoveTerminatorRequest", tr, &wire.TerminatorRequest{SessionToken: "session-token", Fingerprints: []string{"fp-1", "fp-2"},
		TerminatorID: "t-1", APISessionToken: "api-token"}, err)

	tr, err = wire.DecodeTerminatorRequest(wire.HealthEventType, marshal(t, withUnknown(&edge_ctrl_pb.HealthEventRequest{
		SessionToken: "session-token", TerminatorId: "t-1", CheckPassed: true, ApiSessionToken: "api-token"})))
	checkDecoded(t, "HealthEventRequest", tr, &wire.TerminatorRequest{SessionToken: "session-token", TerminatorID: "t-1",
		CheckPassed: true, APISessionToken: "api-token"}, err)

	ids, err := wire.DecodeRemoveTerminators(marshal(t, withUnknown(&ctrl_pb.RemoveTerminatorsRequest{TerminatorIds: []string{"t-1", "", "t-3"}})))
	checkDecoded(t, "RemoveTerminatorsRequest", ids, []string{"t-1", "", "t-3"}, err)

	ids, err = wire.DecodeCircuitConfirmation(marshal(t, withUnknown(&ctrl_pb.CircuitConfirmation{CircuitIds: []string{"c-1", "c-2"},
		IdleTimes: map[string]int64{"c-1": 1500}})))
	checkDecoded(t, "CircuitConfirmation", ids, []string{"c-1", "c-2"}, err)
}

func TestEncode_TerminatorAnswersAndValidation(t *testing.T) {
	checkEncoded(t, "CreateTerminatorV2Response", wire.CreateTerminatorV2Response("t-1", wire.TerminatorInvalidSession, "invalid session"),
		&edge_ctrl_pb.CreateTerminatorV2Response{TerminatorId: "t-1", Result: edge_ctrl_pb.CreateTerminatorResult_FailedInvalidSession, Msg: "invalid session"})
	checkEncoded(t, "CreateTerminatorV2Response, created", wire.CreateTerminatorV2Response("t-1", wire.TerminatorCreated, ""),
		&edge_ctrl_pb.CreateTerminatorV2Response{TerminatorId: "t-1"})
	checkEncoded(t, "ValidateTerminatorsV2Request",
		wire.ValidateTerminatorsV2([]wire.TerminatorRef{{ID: "t-1", Binding: "edge", Address: "hosted:abc"}, {}}, true),
		&ctrl_pb.ValidateTerminatorsV2Request{Terminators: []*ctrl_pb.Terminator{{Id: "t-1", Binding: "edge", Address: "hosted:abc"}, {}}, FixInvalid: true})
}
