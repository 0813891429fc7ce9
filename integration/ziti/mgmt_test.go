package ziti

import (
	"encoding/json"
	"testing"

	"edgectl/dataplane/wire"

	"github.com/google/go-cmp/cmp"
	"github.com/openziti/ziti/common/inspect"
	"github.com/openziti/ziti/common/pb/ctrl_pb"
	"github.com/openziti/ziti/common/pb/mgmt_pb"
	"google.golang.org/protobuf/proto"
)

// The management channel's messages (dataplane/wire/mgmt.go): what `ziti
// fabric validate` sends, read by edgectl, and what edgectl answers, read by
// OpenZiti's generated code; and the router inspection of links.

func TestConstants_Mgmt(t *testing.T) {
	m := func(ct mgmt_pb.ContentType) int64 { return int64(ct) }
	checkConsts(t, []constCase{
		{"wire.ValidateTerminatorsRequestType", wire.ValidateTerminatorsRequestType, m(mgmt_pb.ContentType_ValidateTerminatorsRequestType), "mgmt_pb.ContentType_ValidateTerminatorsRequestType"},
		{"wire.ValidateTerminatorsResponseType", wire.ValidateTerminatorsResponseType, m(mgmt_pb.ContentType_ValidateTerminatorResponseType), "mgmt_pb.ContentType_ValidateTerminatorResponseType"},
		{"wire.ValidateTerminatorsResultType", wire.ValidateTerminatorsResultType, m(mgmt_pb.ContentType_ValidateTerminatorResultType), "mgmt_pb.ContentType_ValidateTerminatorResultType"},
		{"wire.ValidateRouterLinksRequestType", wire.ValidateRouterLinksRequestType, m(mgmt_pb.ContentType_ValidateRouterLinksRequestType), "mgmt_pb.ContentType_ValidateRouterLinksRequestType"},
		{"wire.ValidateRouterLinksResponseType", wire.ValidateRouterLinksResponseType, m(mgmt_pb.ContentType_ValidateRouterLinksResponseType), "mgmt_pb.ContentType_ValidateRouterLinksResponseType"},
		{"wire.ValidateRouterLinksResultType", wire.ValidateRouterLinksResultType, m(mgmt_pb.ContentType_ValidateRouterLinksResultType), "mgmt_pb.ContentType_ValidateRouterLinksResultType"},
		{"wire.ValidateRouterSdkTerminatorsRequestType", wire.ValidateRouterSdkTerminatorsRequestType, m(mgmt_pb.ContentType_ValidateRouterSdkTerminatorsRequestType), "mgmt_pb.ContentType_ValidateRouterSdkTerminatorsRequestType"},
		{"wire.ValidateRouterSdkTerminatorsResponseType", wire.ValidateRouterSdkTerminatorsResponseType, m(mgmt_pb.ContentType_ValidateRouterSdkTerminatorsResponseType), "mgmt_pb.ContentType_ValidateRouterSdkTerminatorsResponseType"},
		{"wire.ValidateRouterSdkTerminatorsResultType", wire.ValidateRouterSdkTerminatorsResultType, m(mgmt_pb.ContentType_ValidateRouterSdkTerminatorsResultType), "mgmt_pb.ContentType_ValidateRouterSdkTerminatorsResultType"},
		{"wire.ValidateRouterDataModelRequestType", wire.ValidateRouterDataModelRequestType, m(mgmt_pb.ContentType_ValidateRouterDataModelRequestType), "mgmt_pb.ContentType_ValidateRouterDataModelRequestType"},
		{"wire.ValidateRouterDataModelResponseType", wire.ValidateRouterDataModelResponseType, m(mgmt_pb.ContentType_ValidateRouterDataModelResponseType), "mgmt_pb.ContentType_ValidateRouterDataModelResponseType"},
		{"wire.ValidateRouterDataModelResultType", wire.ValidateRouterDataModelResultType, m(mgmt_pb.ContentType_ValidateRouterDataModelResultType), "mgmt_pb.ContentType_ValidateRouterDataModelResultType"},
		{"wire.InspectRequestType", wire.InspectRequestType, int64((&ctrl_pb.InspectRequest{}).GetContentType()), "(*ctrl_pb.InspectRequest).GetContentType()"},
		{"wire.InspectResponseType", wire.InspectResponseType, int64((&ctrl_pb.InspectResponse{}).GetContentType()), "(*ctrl_pb.InspectResponse).GetContentType()"},
		{"wire.ValidateTerminatorsV2ResponseType", wire.ValidateTerminatorsV2ResponseType, int64((&ctrl_pb.ValidateTerminatorsV2Response{}).GetContentType()), "(*ctrl_pb.ValidateTerminatorsV2Response).GetContentType()"},

		{"wire.TerminatorValid", int64(wire.TerminatorValid), int64(mgmt_pb.TerminatorState_Valid), "mgmt_pb.TerminatorState_Valid"},
		{"wire.TerminatorUnknown", int64(wire.TerminatorUnknown), int64(mgmt_pb.TerminatorState_Unknown), "mgmt_pb.TerminatorState_Unknown"},
		{"wire.TerminatorInvalidUnknownBinding", int64(wire.TerminatorInvalidUnknownBinding), int64(mgmt_pb.TerminatorState_InvalidUnknownBinding), "mgmt_pb.TerminatorState_InvalidUnknownBinding"},
		{"wire.TerminatorInvalidUnknownTerminator", int64(wire.TerminatorInvalidUnknownTerminator), int64(mgmt_pb.TerminatorState_InvalidUnknownTerminator), "mgmt_pb.TerminatorState_InvalidUnknownTerminator"},
		{"wire.TerminatorInvalidBadState", int64(wire.TerminatorInvalidBadState), int64(mgmt_pb.TerminatorState_InvalidBadState), "mgmt_pb.TerminatorState_InvalidBadState"},
		{"wire.InvalidUnknownBinding", wire.InvalidUnknownBinding, int64(ctrl_pb.TerminatorInvalidReason_UnknownBinding), "ctrl_pb.TerminatorInvalidReason_UnknownBinding"},
		{"wire.InvalidUnknownTerminator", wire.InvalidUnknownTerminator, int64(ctrl_pb.TerminatorInvalidReason_UnknownTerminator), "ctrl_pb.TerminatorInvalidReason_UnknownTerminator"},
		{"wire.InvalidBadState", wire.InvalidBadState, int64(ctrl_pb.TerminatorInvalidReason_BadState), "ctrl_pb.TerminatorInvalidReason_BadState"},
		{"wire.LinkEstablished", int64(wire.LinkEstablished), int64(mgmt_pb.LinkState_LinkEstablished), "mgmt_pb.LinkState_LinkEstablished"},
		{"wire.LinkUnknown", int64(wire.LinkUnknown), int64(mgmt_pb.LinkState_LinkUnknown), "mgmt_pb.LinkState_LinkUnknown"},
		{"wire.LinkPending", int64(wire.LinkPending), int64(mgmt_pb.LinkState_LinkPending), "mgmt_pb.LinkState_LinkPending"},
		{"wire.LinkDialing", int64(wire.LinkDialing), int64(mgmt_pb.LinkState_LinkDialing), "mgmt_pb.LinkState_LinkDialing"},
	})
}

func TestDecode_MgmtValidateRequests(t *testing.T) {
	for _, c := range []struct {
		ct   int32
		msg  proto.Message
		want wire.MgmtValidateRequest
	}{
		{wire.ValidateTerminatorsRequestType, &mgmt_pb.ValidateTerminatorsRequest{Filter: `binding="edge"`, FixInvalid: true}, wire.MgmtValidateRequest{Filter: `binding="edge"`, Fix: true}},
		{wire.ValidateRouterLinksRequestType, &mgmt_pb.ValidateRouterLinksRequest{Filter: `name="a"`}, wire.MgmtValidateRequest{Filter: `name="a"`}},
		{wire.ValidateRouterDataModelRequestType, &mgmt_pb.ValidateRouterDataModelRequest{RouterFilter: "true", ValidateCtrl: true, Fix: true}, wire.MgmtValidateRequest{Filter: "true", ValidateCtrl: true, Fix: true}},
		{wire.ValidateRouterDataModelRequestType, &mgmt_pb.ValidateRouterDataModelRequest{ValidateCtrl: true}, wire.MgmtValidateRequest{ValidateCtrl: true}},
	} {
		b, err := proto.Marshal(c.msg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := wire.DecodeMgmtValidateRequest(c.ct, b)
		if err != nil || got != c.want {
			t.Errorf("%T: %+v %v, want %+v", c.msg, got, err, c.want)
		}
	}
}

func TestEncode_MgmtValidateResults(t *testing.T) {
	checkEncoded(t, "ValidateTerminatorsResponse", wire.MgmtValidateResponse(true, "", 12),
		&mgmt_pb.ValidateTerminatorsResponse{Success: true, TerminatorCount: 12})
	checkEncoded(t, "ValidateRouterLinksResponse", wire.MgmtValidateResponse(false, "bad filter", 0),
		&mgmt_pb.ValidateRouterLinksResponse{Message: "bad filter"})
	checkEncoded(t, "ValidateRouterDataModelResponse", wire.MgmtValidateResponse(true, "", 4),
		&mgmt_pb.ValidateRouterDataModelResponse{Success: true, ComponentCount: 4})
	checkEncoded(t, "TerminatorDetail", wire.TerminatorDetail{TerminatorID: "t1", ServiceID: "s1", ServiceName: "echo", RouterID: "r1",
		RouterName: "router-a", Binding: "edge", Address: "hosted:x", HostID: "h1", CreateDate: "2026-11-27T13:00:00Z",
		State: wire.TerminatorInvalidUnknownTerminator, Fixed: true, Detail: "no such terminator"}.Encode(),
		&mgmt_pb.TerminatorDetail{TerminatorId: "t1", ServiceId: "s1", ServiceName: "echo", RouterId: "r1", RouterName: "router-a",
			Binding: "edge", Address: "hosted:x", HostId: "h1", CreateDate: "2026-11-27T13:00:00Z",
			State: mgmt_pb.TerminatorState_InvalidUnknownTerminator, Fixed: true, Detail: "no such terminator"})
	checkEncoded(t, "RouterLinkDetails", wire.RouterLinkDetails{RouterID: "r1", RouterName: "router-a", ValidateSuccess: true, Details: []wire.RouterLinkDetail{
		{LinkID: "l1", CtrlState: wire.LinkEstablished, RouterState: wire.LinkEstablished, DestConnected: true, IsValid: true, DestRouterID: "r2", Dialed: true},
		{LinkID: "l2", RouterState: wire.LinkEstablished, DestRouterID: "r3", Messages: []string{"m1", "m2"}},
	}}.Encode(), &mgmt_pb.RouterLinkDetails{RouterId: "r1", RouterName: "router-a", ValidateSuccess: true, LinkDetails: []*mgmt_pb.RouterLinkDetail{
		{LinkId: "l1", CtrlState: mgmt_pb.LinkState_LinkEstablished, RouterState: mgmt_pb.LinkState_LinkEstablished, DestConnected: true, IsValid: true, DestRouterId: "r2", Dialed: true},
		{LinkId: "l2", RouterState: mgmt_pb.LinkState_LinkEstablished, DestRouterId: "r3", Messages: []string{"m1", "m2"}},
	}})
	checkEncoded(t, "RouterDataModelDetails", wire.RouterDataModelDetails{ComponentType: "router", ComponentID: "r1", ComponentName: "router-a",
		Errors: []string{"identity id: i1 missing: gone"}}.Encode(),
		&mgmt_pb.RouterDataModelDetails{ComponentType: "router", ComponentId: "r1", ComponentName: "router-a", Errors: []string{"identity id: i1 missing: gone"}})
	checkEncoded(t, "InspectRequest", wire.InspectRequest("links"), &ctrl_pb.InspectRequest{RequestedValues: []string{"links"}})
	checkEncoded(t, "RouterSdkTerminatorsDetails", wire.RouterSdkTerminatorsDetails{RouterID: "r1", RouterName: "router-c", ValidateSuccess: true, Details: []wire.RouterSdkTerminatorDetail{
		{TerminatorID: "t1", CtrlState: wire.TerminatorValid, RouterState: "established", IsValid: true, OperationActive: true, CreateTime: "c", LastAttempt: "l"},
		{TerminatorID: "t2", CtrlState: wire.TerminatorUnknown, RouterState: "unknown"},
	}}.Encode(), &mgmt_pb.RouterSdkTerminatorsDetails{RouterId: "r1", RouterName: "router-c", ValidateSuccess: true, Details: []*mgmt_pb.RouterSdkTerminatorDetail{
		{TerminatorId: "t1", CtrlState: mgmt_pb.TerminatorState_Valid, RouterState: "established", IsValid: true, OperationActive: true, CreateTime: "c", LastAttempt: "l"},
		{TerminatorId: "t2", CtrlState: mgmt_pb.TerminatorState_Unknown, RouterState: "unknown"},
	}})
}

func TestDecode_RouterAnswersToValidations(t *testing.T) {
	b, _ := proto.Marshal(&ctrl_pb.ValidateTerminatorsV2Response{States: map[string]*ctrl_pb.RouterTerminatorState{
		"t1": {Valid: true, Detail: "ok", Marker: 3},
		"t2": {Reason: ctrl_pb.TerminatorInvalidReason_UnknownTerminator, Detail: "gone"},
		"t3": {Reason: ctrl_pb.TerminatorInvalidReason_BadState},
	}})
	states, err := wire.DecodeValidateTerminatorsV2Response(b)
	want := map[string]wire.RouterTerminatorState{"t1": {Valid: true, Detail: "ok"}, "t2": {Reason: wire.InvalidUnknownTerminator, Detail: "gone"}, "t3": {Reason: wire.InvalidBadState}}
	if err != nil || !cmp.Equal(states, want) {
		t.Fatalf("ValidateTerminatorsV2Response: %v %v, want %v", states, err, want)
	}

	links, _ := json.Marshal(&inspect.LinksInspectResult{Links: []*inspect.LinkInspectDetail{
		{Id: "l1", Dest: "r2", Dialed: true, ConnStateIteration: 4, Connections: []*inspect.LinkConnection{{Type: "payload", Source: "1.1.1.1:1", Dest: "2.2.2.2:2"}}},
		{Id: "l2", Dest: "r3"},
	}})
	b, _ = proto.Marshal(&ctrl_pb.InspectResponse{Success: true, Errors: []string{"e"}, Values: []*ctrl_pb.InspectResponse_InspectValue{{Name: "links", Value: string(links)}}})
	resp, err := wire.DecodeInspectResponse(b)
	if err != nil || !resp.Success || len(resp.Errors) != 1 || resp.Values["links"] != string(links) {
		t.Fatalf("InspectResponse: %+v %v", resp, err)
	}
	sdk, _ := json.Marshal(&inspect.SdkTerminatorInspectResult{Entries: []*inspect.SdkTerminatorInspectDetail{
		{Key: "t1", Id: "t1", State: "established", OperationActive: true, CreateTime: "c", LastAttempt: "l", Token: "x"},
	}, Errors: []string{"e1"}})
	entries, errs, err := wire.DecodeInspectedSdkTerminators(string(sdk))
	if err != nil || len(entries) != 1 || entries[0] != (wire.InspectedSdkTerminator{ID: "t1", State: "established", OperationActive: true, CreateTime: "c", LastAttempt: "l"}) ||
		len(errs) != 1 {
		t.Fatalf("inspected sdk terminators: %+v %v %v", entries, errs, err)
	}
	got, err := wire.DecodeInspectedLinks(resp.Values["links"])
	if err != nil || len(got) != 2 || got[0].ID != "l1" || got[0].Dest != "r2" || !got[0].Dialed || got[0].ConnStateIteration != 4 ||
		len(got[0].Connections) != 1 || got[0].Connections[0].Type != "payload" || got[0].Connections[0].Source != "1.1.1.1:1" ||
		got[0].Connections[0].Dest != "2.2.2.2:2" || got[1].ID != "l2" || got[1].Dialed {
		t.Fatalf("inspected links: %+v %v", got, err)
	}
}

// The fleet's routers answer inspections as OpenZiti's do: our request
// decoder reads ctrl_pb.InspectRequest, our response encoder writes what
// ctrl_pb.InspectResponse reads.
func TestInspect_FleetRoutersAnswerAsOpenZitisDo(t *testing.T) {
	b, _ := proto.Marshal(&ctrl_pb.InspectRequest{RequestedValues: []string{"links", "router-circuits"}})
	values, err := wire.DecodeInspectRequest(b)
	if err != nil || !cmp.Equal(values, []string{"links", "router-circuits"}) {
		t.Fatalf("InspectRequest: %v %v", values, err)
	}
	var resp ctrl_pb.InspectResponse
	if err := proto.Unmarshal(wire.EncodeInspectResponse(wire.InspectResponse{Success: true, Errors: []string{"e"},
		Values: map[string]string{"links": `{"links":[]}`, "a": "b"}}), &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.Success || len(resp.Errors) != 1 || resp.Errors[0] != "e" || len(resp.Values) != 2 ||
		resp.Values[0].Name != "a" || resp.Values[0].Value != "b" || resp.Values[1].Name != "links" || resp.Values[1].Value != `{"links":[]}` {
		t.Fatalf("InspectResponse as OpenZiti reads it: %+v", &resp)
	}
}
