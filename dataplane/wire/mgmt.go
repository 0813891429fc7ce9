package wire

import (
	"encoding/json"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// The management channel (OpenZiti's mgmt_pb, common/pb/mgmt_pb/mgmt.proto):
// what `ziti fabric validate ...` sends over the Fabric API's websocket
// (api/wsapi.go), and the router inspection (ctrl_pb InspectRequest) one of
// them needs.

// Management channel content types (mgmt_pb.ContentType).
const (
	ValidateTerminatorsRequestType           = 10100
	ValidateTerminatorsResponseType          = 10101
	ValidateTerminatorsResultType            = 10102
	ValidateRouterLinksRequestType           = 10103
	ValidateRouterLinksResponseType          = 10104
	ValidateRouterLinksResultType            = 10105
	ValidateRouterSdkTerminatorsRequestType  = 10106
	ValidateRouterSdkTerminatorsResponseType = 10107
	ValidateRouterSdkTerminatorsResultType   = 10108
	ValidateRouterDataModelRequestType       = 10109
	ValidateRouterDataModelResponseType      = 10110
	ValidateRouterDataModelResultType        = 10111
)

// PingType is the channel's ping (channel.ContentTypePingType), answered
// with a Result.
const PingType = 1

// MgmtValidateRequest is any of the three validate requests: the router filter
// (ValidateTerminatorsRequest filter 1, ValidateRouterLinksRequest filter
// 1, ValidateRouterDataModelRequest routerFilter 1), fixInvalid or fix
// (field 2 of the first, 3 of the last), and validateCtrl (2 of the last).
type MgmtValidateRequest struct {
	Filter       string
	Fix          bool
	ValidateCtrl bool
}

// DecodeMgmtValidateRequest reads a validate request of content type ct.
func DecodeMgmtValidateRequest(ct int32, b []byte) (MgmtValidateRequest, error) {
	var r MgmtValidateRequest
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch {
		case num == 1:
			r.Filter = string(raw)
		case num == 2 && ct == ValidateTerminatorsRequestType:
			r.Fix = v != 0
		case num == 2 && ct == ValidateRouterDataModelRequestType:
			r.ValidateCtrl = v != 0
		case num == 3 && ct == ValidateRouterDataModelRequestType:
			r.Fix = v != 0
		}
		return nil
	})
	return r, err
}

// MgmtValidateResponse encodes the answer to a validate request: success
// 1, message 2, and the count of results that follow 3 (terminatorCount,
// routerCount, componentCount).
func MgmtValidateResponse(success bool, message string, count uint64) []byte {
	return buf(nil).boolean(1, success).str(2, message).uint(3, count)
}

// TerminatorState is mgmt_pb.TerminatorState.
type TerminatorState uint64

// The states of a validated terminator.
const (
	TerminatorValid                    TerminatorState = 0
	TerminatorUnknown                  TerminatorState = 1
	TerminatorInvalidUnknownBinding    TerminatorState = 2
	TerminatorInvalidUnknownTerminator TerminatorState = 3
	TerminatorInvalidBadState          TerminatorState = 4
)

// TerminatorDetail is mgmt_pb.TerminatorDetail: terminatorId 1, serviceId
// 2, serviceName 3, routerId 4, routerName 5, binding 6, address 7, hostId
// 8, createDate 9, state 10, fixed 11, detail 12.
type TerminatorDetail struct {
	TerminatorID, ServiceID, ServiceName, RouterID, RouterName string
	Binding, Address, HostID, CreateDate                       string
	State                                                      TerminatorState
	Fixed                                                      bool
	Detail                                                     string
}

// Encode encodes the detail.
func (d TerminatorDetail) Encode() []byte {
	return buf(nil).str(1, d.TerminatorID).str(2, d.ServiceID).str(3, d.ServiceName).str(4, d.RouterID).
		str(5, d.RouterName).str(6, d.Binding).str(7, d.Address).str(8, d.HostID).str(9, d.CreateDate).
		uint(10, uint64(d.State)).boolean(11, d.Fixed).str(12, d.Detail)
}

// LinkState is mgmt_pb.LinkState.
type LinkState uint64

// The states of a link as a node or a router has it.
const (
	LinkUnknown     LinkState = 0
	LinkEstablished LinkState = 1
	LinkPending     LinkState = 2
	LinkDialing     LinkState = 3
)

// RouterLinkDetail is mgmt_pb.RouterLinkDetail: linkId 1, ctrlState 2,
// routerState 3, destConnected 4, isValid 5, destRouterId 6, dialed 7,
// messages 8.
type RouterLinkDetail struct {
	LinkID        string
	CtrlState     LinkState
	RouterState   LinkState
	DestConnected bool
	IsValid       bool
	DestRouterID  string
	Dialed        bool
	Messages      []string
}

// Encode encodes the detail.
func (l RouterLinkDetail) Encode() []byte {
	return buf(nil).str(1, l.LinkID).uint(2, uint64(l.CtrlState)).uint(3, uint64(l.RouterState)).
		boolean(4, l.DestConnected).boolean(5, l.IsValid).str(6, l.DestRouterID).boolean(7, l.Dialed).strs(8, l.Messages)
}

// ResultDetail is a detail of a RouterResult.
type ResultDetail interface{ Encode() []byte }

// RouterResult is one router's result of a validation that compares each
// router's view with the node's (mgmt_pb.RouterLinkDetails,
// RouterSdkTerminatorsDetails): routerId 1, routerName 2, validateSuccess
// 3, message 4, and the details 5.
type RouterResult[D ResultDetail] struct {
	RouterID, RouterName string
	ValidateSuccess      bool
	Message              string
	Details              []D
}

// Encode encodes the result.
func (r RouterResult[D]) Encode() []byte {
	b := buf(nil).str(1, r.RouterID).str(2, r.RouterName).boolean(3, r.ValidateSuccess).str(4, r.Message)
	for _, d := range r.Details {
		b = b.msg(5, d.Encode())
	}
	return b
}

// RouterLinkDetails is mgmt_pb.RouterLinkDetails.
type RouterLinkDetails = RouterResult[RouterLinkDetail]

// RouterSdkTerminatorsDetails is mgmt_pb.RouterSdkTerminatorsDetails.
type RouterSdkTerminatorsDetails = RouterResult[RouterSdkTerminatorDetail]

// RouterDataModelDetails is mgmt_pb.RouterDataModelDetails: componentType
// 1 ("router" or "controller"), componentId 2, componentName 3,
// validateSuccess 4, errors 5.
type RouterDataModelDetails struct {
	ComponentType, ComponentID, ComponentName string
	ValidateSuccess                           bool
	Errors                                    []string
}

// Encode encodes the details.
func (d RouterDataModelDetails) Encode() []byte {
	return buf(nil).str(1, d.ComponentType).str(2, d.ComponentID).str(3, d.ComponentName).
		boolean(4, d.ValidateSuccess).strs(5, d.Errors)
}

// RouterSdkTerminatorDetail is mgmt_pb.RouterSdkTerminatorDetail:
// terminatorId 1, ctrlState 2, routerState 3, isValid 4, operationActive 5,
// createTime 6, lastAttempt 7.
type RouterSdkTerminatorDetail struct {
	TerminatorID    string
	CtrlState       TerminatorState
	RouterState     string
	IsValid         bool
	OperationActive bool
	CreateTime      string
	LastAttempt     string
}

// Encode encodes the detail.
func (t RouterSdkTerminatorDetail) Encode() []byte {
	return buf(nil).str(1, t.TerminatorID).uint(2, uint64(t.CtrlState)).str(3, t.RouterState).
		boolean(4, t.IsValid).boolean(5, t.OperationActive).str(6, t.CreateTime).str(7, t.LastAttempt)
}

// InspectedSdkTerminator is a terminator as a router's "sdk-terminators"
// inspection shows it (OpenZiti's common/inspect/terminator_inspections.go).
type InspectedSdkTerminator struct {
	ID              string `json:"id"`
	State           string `json:"state"`
	OperationActive bool   `json:"operationActive"`
	CreateTime      string `json:"createTime"`
	LastAttempt     string `json:"lastAttempt"`
}

// DecodeInspectedSdkTerminators reads the "sdk-terminators" inspection
// value ({"entries": [...], "errors": [...]}).
func DecodeInspectedSdkTerminators(value string) ([]InspectedSdkTerminator, []string, error) {
	var v struct {
		Entries []InspectedSdkTerminator `json:"entries"`
		Errors  []string                 `json:"errors"`
	}
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return nil, nil, err
	}
	if len(v.Entries) > MaxRepeated || len(v.Errors) > MaxRepeated {
		return nil, nil, ErrTooMany
	}
	return v.Entries, v.Errors, nil
}

// InspectRequest encodes ctrl_pb.InspectRequest: requestedValues 1.
func InspectRequest(values ...string) []byte { return buf(nil).strs(1, values) }

// InspectResponse is ctrl_pb.InspectResponse: success 1, errors 2, values
// 3 (InspectValue{name 1, value 2}).
type InspectResponse struct {
	Success bool
	Errors  []string
	Values  map[string]string
}

// DecodeInspectRequest reads the values an inspection asks for.
func DecodeInspectRequest(b []byte) ([]string, error) {
	var values []string
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		var err error
		if num == 1 {
			values, err = appendBounded(values, string(raw))
		}
		return err
	})
	return values, err
}

// EncodeInspectResponse encodes a router's inspection answer (in the
// order of names, for the same bytes each time).
func EncodeInspectResponse(r InspectResponse) []byte {
	b := buf(nil).boolean(1, r.Success).strs(2, r.Errors)
	names := make([]string, 0, len(r.Values))
	for name := range r.Values {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		b = b.msg(3, buf(nil).str(1, name).str(2, r.Values[name]))
	}
	return b
}

// DecodeInspectResponse reads a router's inspection answer.
func DecodeInspectResponse(b []byte) (InspectResponse, error) {
	r := InspectResponse{Values: map[string]string{}}
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		var err error
		switch num {
		case 1:
			r.Success = v != 0
		case 2:
			r.Errors, err = appendBounded(r.Errors, string(raw))
		case 3:
			if len(r.Values) >= MaxRepeated {
				return ErrTooMany
			}
			var name, value string
			err = Fields(raw, func(n protowire.Number, _ uint64, s []byte) error {
				switch n {
				case 1:
					name = string(s)
				case 2:
					value = string(s)
				}
				return nil
			})
			r.Values[name] = value
		}
		return err
	})
	return r, err
}

// InspectedLink is a link as a router's "links" inspection shows it
// (OpenZiti's common/inspect/links_inspections.go, JSON).
type InspectedLink struct {
	ID                 string `json:"id"`
	Dest               string `json:"dest"`
	Dialed             bool   `json:"dialed"`
	ConnStateIteration uint32 `json:"connStateIteration"`
	// Connections are the link's connections; OpenZiti writes their fields
	// without JSON names.
	Connections []struct{ Type, Source, Dest string } `json:"connections"`
}

// DecodeInspectedLinks reads the "links" inspection value: the router's
// links ({"links": [...]}).
func DecodeInspectedLinks(value string) ([]InspectedLink, error) {
	var v struct {
		Links []InspectedLink `json:"links"`
	}
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return nil, err
	}
	if len(v.Links) > MaxRepeated {
		return nil, ErrTooMany
	}
	return v.Links, nil
}

// The event stream of the management channel (`ziti fabric stream
// events`): a StreamEventsRequest is JSON ({"format": "json",
// "subscriptions": [{"type": "circuit", "options": {...}}]}), answered
// with a Result; each event then follows as a StreamEventsEvent whose body
// is the event's JSON, its namespace in the EventTypeHeader.
const (
	StreamEventsRequestType = 10040
	StreamEventsEventType   = 10041
	EventTypeHeader         = 10
)
