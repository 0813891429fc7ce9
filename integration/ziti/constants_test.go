package ziti

import (
	"testing"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"

	"github.com/openziti/channel/v4"
	"github.com/openziti/ziti/common/capabilities"
	"github.com/openziti/ziti/common/pb/ctrl_pb"
	"github.com/openziti/ziti/common/pb/edge_ctrl_pb"
)

// constCase is one of edgectl's protocol constants and OpenZiti's value for it.
type constCase struct {
	name       string
	got, want  int64
	zitiSymbol string
}

func checkConsts(t *testing.T, cases []constCase) {
	t.Helper()
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %d, but OpenZiti's %s = %d", c.name, c.got, c.zitiSymbol, c.want)
		}
	}
}

func TestConstants_ChannelHeadersAndContentTypes(t *testing.T) {
	checkConsts(t, []constCase{
		{"ctrlchan.HeaderConnectionID", ctrlchan.HeaderConnectionID, channel.ConnectionIdHeader, "channel.ConnectionIdHeader"},
		{"ctrlchan.HeaderReplyFor", ctrlchan.HeaderReplyFor, channel.ReplyForHeader, "channel.ReplyForHeader"},
		{"ctrlchan.HeaderResultSuccess", ctrlchan.HeaderResultSuccess, channel.ResultSuccessHeader, "channel.ResultSuccessHeader"},
		{"ctrlchan.HeaderHelloVersion", ctrlchan.HeaderHelloVersion, channel.HelloVersionHeader, "channel.HelloVersionHeader"},
		{"ctrlchan.HeaderHeartbeat", ctrlchan.HeaderHeartbeat, channel.HeartbeatHeader, "channel.HeartbeatHeader"},
		{"ctrlchan.HeaderHeartbeatResponse", ctrlchan.HeaderHeartbeatResponse, channel.HeartbeatResponseHeader, "channel.HeartbeatResponseHeader"},
		{"ctrlchan.HeaderType", ctrlchan.HeaderType, channel.TypeHeader, "channel.TypeHeader"},
		{"ctrlchan.HeaderID", ctrlchan.HeaderID, channel.IdHeader, "channel.IdHeader"},
		{"ctrlchan.HeaderIsGrouped", ctrlchan.HeaderIsGrouped, channel.IsGroupedHeader, "channel.IsGroupedHeader"},

		{"ctrlchan.ContentHello", ctrlchan.ContentHello, channel.ContentTypeHelloType, "channel.ContentTypeHelloType"},
		{"ctrlchan.ContentPing", ctrlchan.ContentPing, channel.ContentTypePingType, "channel.ContentTypePingType"},
		{"ctrlchan.ContentResult", ctrlchan.ContentResult, channel.ContentTypeResultType, "channel.ContentTypeResultType"},
		{"ctrlchan.ContentLatency", ctrlchan.ContentLatency, channel.ContentTypeLatencyType, "channel.ContentTypeLatencyType"},
		{"ctrlchan.ContentLatencyResponse", ctrlchan.ContentLatencyResponse, channel.ContentTypeLatencyResponseType, "channel.ContentTypeLatencyResponseType"},
		{"ctrlchan.ContentHeartbeat", ctrlchan.ContentHeartbeat, channel.ContentTypeHeartbeat, "channel.ContentTypeHeartbeat"},
		{"ctrlchan.ContentRaw", ctrlchan.ContentRaw, channel.ContentTypeRaw, "channel.ContentTypeRaw"},

		{"ctrlchan.HelloSequence", ctrlchan.HelloSequence, channel.HelloSequence, "channel.HelloSequence"},
	})
}

func TestConstants_EdgeContentTypes(t *testing.T) {
	e := func(ct edge_ctrl_pb.ContentType) int64 { return int64(ct) }
	checkConsts(t, []constCase{
		{"wire.ServerHelloType", wire.ServerHelloType, e(edge_ctrl_pb.ContentType_ServerHelloType), "edge_ctrl_pb.ContentType_ServerHelloType"},
		{"wire.ClientHelloType", wire.ClientHelloType, e(edge_ctrl_pb.ContentType_ClientHelloType), "edge_ctrl_pb.ContentType_ClientHelloType"},
		{"wire.ErrorType", wire.ErrorType, e(edge_ctrl_pb.ContentType_ErrorType), "edge_ctrl_pb.ContentType_ErrorType"},
		{"wire.SessionRemovedType", wire.SessionRemovedType, e(edge_ctrl_pb.ContentType_SessionRemovedType), "edge_ctrl_pb.ContentType_SessionRemovedType"},
		{"wire.APISessionAddedType", wire.APISessionAddedType, e(edge_ctrl_pb.ContentType_ApiSessionAddedType), "edge_ctrl_pb.ContentType_ApiSessionAddedType"},
		{"wire.APISessionUpdatedType", wire.APISessionUpdatedType, e(edge_ctrl_pb.ContentType_ApiSessionUpdatedType), "edge_ctrl_pb.ContentType_ApiSessionUpdatedType"},
		{"wire.APISessionRemovedType", wire.APISessionRemovedType, e(edge_ctrl_pb.ContentType_ApiSessionRemovedType), "edge_ctrl_pb.ContentType_ApiSessionRemovedType"},
		{"wire.APISessionHeartbeatType", wire.APISessionHeartbeatType, e(edge_ctrl_pb.ContentType_ApiSessionHeartbeatType), "edge_ctrl_pb.ContentType_ApiSessionHeartbeatType"},
		{"wire.RequestClientReSyncType", wire.RequestClientReSyncType, e(edge_ctrl_pb.ContentType_RequestClientReSyncType), "edge_ctrl_pb.ContentType_RequestClientReSyncType"},
		{"wire.EnrollmentCertsResponseType", wire.EnrollmentCertsResponseType, e(edge_ctrl_pb.ContentType_EnrollmentCertsResponseType), "edge_ctrl_pb.ContentType_EnrollmentCertsResponseType"},
		{"wire.EnrollmentExtendRouterType", wire.EnrollmentExtendRouterType, e(edge_ctrl_pb.ContentType_EnrollmentExtendRouterRequestType), "edge_ctrl_pb.ContentType_EnrollmentExtendRouterRequestType"},
		{"wire.EnrollmentExtendRouterVerify", wire.EnrollmentExtendRouterVerify, e(edge_ctrl_pb.ContentType_EnrollmentExtendRouterVerifyRequestType), "edge_ctrl_pb.ContentType_EnrollmentExtendRouterVerifyRequestType"},
		{"wire.ConnectEventsType", wire.ConnectEventsType, e(edge_ctrl_pb.ContentType_ConnectEventsTypes), "edge_ctrl_pb.ContentType_ConnectEventsTypes"},
		{"wire.DataStateType", wire.DataStateType, e(edge_ctrl_pb.ContentType_DataStateType), "edge_ctrl_pb.ContentType_DataStateType"},
		{"wire.DataStateChangeSetType", wire.DataStateChangeSetType, e(edge_ctrl_pb.ContentType_DataStateChangeSetType), "edge_ctrl_pb.ContentType_DataStateChangeSetType"},
		{"wire.ValidateDataStateRequestType", wire.ValidateDataStateRequestType, e(edge_ctrl_pb.ContentType_ValidateDataStateRequestType), "edge_ctrl_pb.ContentType_ValidateDataStateRequestType"},
		{"wire.ValidateDataStateResponseType", wire.ValidateDataStateResponseType, e(edge_ctrl_pb.ContentType_ValidateDataStateResponseType), "edge_ctrl_pb.ContentType_ValidateDataStateResponseType"},
		{"wire.SubscribeToDataModelRequestType", wire.SubscribeToDataModelRequestType, e(edge_ctrl_pb.ContentType_SubscribeToDataModelRequestType), "edge_ctrl_pb.ContentType_SubscribeToDataModelRequestType"},
		{"wire.CurrentIndexMessageType", wire.CurrentIndexMessageType, e(edge_ctrl_pb.ContentType_CurrentIndexMessageType), "edge_ctrl_pb.ContentType_CurrentIndexMessageType"},

		// The content types OpenZiti's generated messages declare for themselves.
		{"wire.ValidateDataStateRequestType", wire.ValidateDataStateRequestType, int64((&edge_ctrl_pb.RouterDataModelValidateRequest{}).GetContentType()), "(*edge_ctrl_pb.RouterDataModelValidateRequest).GetContentType()"},
		{"wire.ValidateDataStateResponseType", wire.ValidateDataStateResponseType, int64((&edge_ctrl_pb.RouterDataModelValidateResponse{}).GetContentType()), "(*edge_ctrl_pb.RouterDataModelValidateResponse).GetContentType()"},
	})
}

func TestConstants_CtrlContentTypes(t *testing.T) {
	c := func(ct ctrl_pb.ContentType) int64 { return int64(ct) }
	checkConsts(t, []constCase{
		{"wire.MetricsType", wire.MetricsType, c(ctrl_pb.ContentType_MetricsType), "ctrl_pb.ContentType_MetricsType"},
		{"wire.InspectRequestType", wire.InspectRequestType, c(ctrl_pb.ContentType_InspectRequestType), "ctrl_pb.ContentType_InspectRequestType"},
		{"wire.InspectResponseType", wire.InspectResponseType, c(ctrl_pb.ContentType_InspectResponseType), "ctrl_pb.ContentType_InspectResponseType"},
		{"wire.CircuitConfirmationType", wire.CircuitConfirmationType, c(ctrl_pb.ContentType_CircuitConfirmationType), "ctrl_pb.ContentType_CircuitConfirmationType"},
		{"wire.RouterLinksType", wire.RouterLinksType, c(ctrl_pb.ContentType_RouterLinksType), "ctrl_pb.ContentType_RouterLinksType"},
		{"wire.UpdateCtrlAddressesType", wire.UpdateCtrlAddressesType, c(ctrl_pb.ContentType_UpdateCtrlAddressesType), "ctrl_pb.ContentType_UpdateCtrlAddressesType"},
		{"wire.UpdateRouterInterfacesType", wire.UpdateRouterInterfacesType, c(ctrl_pb.ContentType_UpdateRouterInterfaces), "ctrl_pb.ContentType_UpdateRouterInterfaces"},
		{"wire.LinkStateType", wire.LinkStateType, c(ctrl_pb.ContentType_LinkState), "ctrl_pb.ContentType_LinkState"},
		{"wire.AlertsType", wire.AlertsType, c(ctrl_pb.ContentType_AlertsType), "ctrl_pb.ContentType_AlertsType"},

		{"wire.UpdateCtrlAddressesType", wire.UpdateCtrlAddressesType, int64((&ctrl_pb.UpdateCtrlAddresses{}).GetContentType()), "(*ctrl_pb.UpdateCtrlAddresses).GetContentType()"},
		{"wire.CircuitConfirmationType", wire.CircuitConfirmationType, int64((&ctrl_pb.CircuitConfirmation{}).GetContentType()), "(*ctrl_pb.CircuitConfirmation).GetContentType()"},
		{"wire.RouterLinksType", wire.RouterLinksType, int64((&ctrl_pb.RouterLinks{}).GetContentType()), "(*ctrl_pb.RouterLinks).GetContentType()"},
		{"wire.InspectRequestType", wire.InspectRequestType, int64((&ctrl_pb.InspectRequest{}).GetContentType()), "(*ctrl_pb.InspectRequest).GetContentType()"},
		{"wire.InspectResponseType", wire.InspectResponseType, int64((&ctrl_pb.InspectResponse{}).GetContentType()), "(*ctrl_pb.InspectResponse).GetContentType()"},
		{"wire.UpdateRouterInterfacesType", wire.UpdateRouterInterfacesType, int64((&ctrl_pb.RouterInterfacesUpdate{}).GetContentType()), "(*ctrl_pb.RouterInterfacesUpdate).GetContentType()"},
		{"wire.LinkStateType", wire.LinkStateType, int64((&ctrl_pb.LinkStateUpdate{}).GetContentType()), "(*ctrl_pb.LinkStateUpdate).GetContentType()"},
		{"wire.AlertsType", wire.AlertsType, int64((&ctrl_pb.Alerts{}).GetContentType()), "(*ctrl_pb.Alerts).GetContentType()"},
	})
}

func TestConstants_HeadersAndCapabilities(t *testing.T) {
	checkConsts(t, []constCase{
		{"wire.ListenersHeader", wire.ListenersHeader, int64(ctrl_pb.ControlHeaders_ListenersHeader), "ctrl_pb.ControlHeaders_ListenersHeader"},
		{"wire.RouterMetadataHeader", wire.RouterMetadataHeader, int64(ctrl_pb.ControlHeaders_RouterMetadataHeader), "ctrl_pb.ControlHeaders_RouterMetadataHeader"},
		{"wire.CapabilitiesHeader", wire.CapabilitiesHeader, int64(ctrl_pb.ControlHeaders_CapabilitiesHeader), "ctrl_pb.ControlHeaders_CapabilitiesHeader"},
		{"wire.RouterDataModelHeader", wire.RouterDataModelHeader, int64(edge_ctrl_pb.Header_RouterDataModel), "edge_ctrl_pb.Header_RouterDataModel"},
		{"wire.RouterDataModelIndexHeader", wire.RouterDataModelIndexHeader, int64(edge_ctrl_pb.Header_RouterDataModelIndex), "edge_ctrl_pb.Header_RouterDataModelIndex"},
		// controller/env's, read from its source (this module does not build that package).
		{"wire.SyncStrategyTypeHeader", wire.SyncStrategyTypeHeader, zitiConst(t, "controller/env", "sync.go", "SyncStrategyTypeHeader"), "env.SyncStrategyTypeHeader"},
		{"wire.SyncStrategyStateHeader", wire.SyncStrategyStateHeader, zitiConst(t, "controller/env", "sync.go", "SyncStrategyStateHeader"), "env.SyncStrategyStateHeader"},

		{"wire.CapCreateTerminatorV2", wire.CapCreateTerminatorV2, int64(capabilities.ControllerCreateTerminatorV2), "capabilities.ControllerCreateTerminatorV2"},
		{"wire.CapSingleRouterLinkSource", wire.CapSingleRouterLinkSource, int64(capabilities.ControllerSingleRouterLinkSource), "capabilities.ControllerSingleRouterLinkSource"},
		{"wire.CapCreateCircuitV2", wire.CapCreateCircuitV2, int64(capabilities.ControllerCreateCircuitV2), "capabilities.ControllerCreateCircuitV2"},
		{"wire.CapRouterDataModel", wire.CapRouterDataModel, int64(capabilities.RouterDataModel), "capabilities.RouterDataModel"},
	})
}

func TestConstants_DataStateEnums(t *testing.T) {
	checkConsts(t, []constCase{
		{"wire.Create", int64(wire.Create), int64(edge_ctrl_pb.DataState_Create), "edge_ctrl_pb.DataState_Create"},
		{"wire.Update", int64(wire.Update), int64(edge_ctrl_pb.DataState_Update), "edge_ctrl_pb.DataState_Update"},
		{"wire.Delete", int64(wire.Delete), int64(edge_ctrl_pb.DataState_Delete), "edge_ctrl_pb.DataState_Delete"},

		{"wire.PrecedenceDefault", int64(wire.PrecedenceDefault), int64(edge_ctrl_pb.TerminatorPrecedence_Default), "edge_ctrl_pb.TerminatorPrecedence_Default"},
		{"wire.PrecedenceRequired", int64(wire.PrecedenceRequired), int64(edge_ctrl_pb.TerminatorPrecedence_Required), "edge_ctrl_pb.TerminatorPrecedence_Required"},
		{"wire.PrecedenceFailed", int64(wire.PrecedenceFailed), int64(edge_ctrl_pb.TerminatorPrecedence_Failed), "edge_ctrl_pb.TerminatorPrecedence_Failed"},

		{"wire.DialPolicy", int64(wire.DialPolicy), int64(edge_ctrl_pb.PolicyType_DialPolicy), "edge_ctrl_pb.PolicyType_DialPolicy"},
		{"wire.BindPolicy", int64(wire.BindPolicy), int64(edge_ctrl_pb.PolicyType_BindPolicy), "edge_ctrl_pb.PolicyType_BindPolicy"},

		{"wire.RelatedService", int64(wire.RelatedService), int64(edge_ctrl_pb.ServicePolicyRelatedEntityType_RelatedService), "edge_ctrl_pb.ServicePolicyRelatedEntityType_RelatedService"},
		{"wire.RelatedIdentity", int64(wire.RelatedIdentity), int64(edge_ctrl_pb.ServicePolicyRelatedEntityType_RelatedIdentity), "edge_ctrl_pb.ServicePolicyRelatedEntityType_RelatedIdentity"},
		{"wire.RelatedPostureCheck", int64(wire.RelatedPostureCheck), int64(edge_ctrl_pb.ServicePolicyRelatedEntityType_RelatedPostureCheck), "edge_ctrl_pb.ServicePolicyRelatedEntityType_RelatedPostureCheck"},

		{"wire.UsageJWTValidation", wire.UsageJWTValidation, int64(edge_ctrl_pb.DataState_PublicKey_JWTValidation), "edge_ctrl_pb.DataState_PublicKey_JWTValidation"},
		{"wire.UsageClientX509CertValidation", wire.UsageClientX509CertValidation, int64(edge_ctrl_pb.DataState_PublicKey_ClientX509CertValidation), "edge_ctrl_pb.DataState_PublicKey_ClientX509CertValidation"},
		{"wire.FormatX509CertDer", wire.FormatX509CertDer, int64(edge_ctrl_pb.DataState_PublicKey_X509CertDer), "edge_ctrl_pb.DataState_PublicKey_X509CertDer"},
		{"wire.FormatPKIXPublicKey", wire.FormatPKIXPublicKey, int64(edge_ctrl_pb.DataState_PublicKey_PKIXPublicKey), "edge_ctrl_pb.DataState_PublicKey_PKIXPublicKey"},
	})
}
