// Package wire encodes and decodes the protobuf messages of OpenZiti's
// control plane that edgectl exchanges with routers (edge_ctrl_pb and
// ctrl_pb of github.com/openziti/ziti v1.7.2), field by field with
// protowire: the field numbers and enum values are protocol facts, the
// code is edgectl's own. The dial (CreateCircuitV2) is carried in headers,
// not in a protobuf body: its header keys and header codecs are here too.
// The oracle module (integration/ziti) round-trips every message through
// OpenZiti's generated code or its header codecs.
//
// Encoders omit proto3 defaults (empty strings, zero numbers, false), as
// OpenZiti's do, and write map entries and repeated fields in a fixed order
// so that a message always has the same bytes. Decoders skip fields they do
// not know and bound every repeated field (MaxRepeated).
package wire

import (
	"errors"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
)

// Content types (edge_ctrl_pb.ContentType and ctrl_pb.ContentType).
const (
	ServerHelloType                 = 20000
	ClientHelloType                 = 20001
	ErrorType                       = 20002
	SessionRemovedType              = 20102
	APISessionAddedType             = 20200
	APISessionUpdatedType           = 20201
	APISessionRemovedType           = 20202
	APISessionHeartbeatType         = 20203
	RequestClientReSyncType         = 20204
	EnrollmentCertsResponseType     = 20301
	EnrollmentExtendRouterType      = 20302
	EnrollmentExtendRouterVerify    = 20303
	ConnectEventsType               = 20415
	DataStateType                   = 20500
	DataStateChangeSetType          = 20501
	ValidateDataStateRequestType    = 20503
	ValidateDataStateResponseType   = 20504
	SubscribeToDataModelRequestType = 20505
	CurrentIndexMessageType         = 20506

	MetricsType                = 1007
	InspectRequestType         = 1013
	InspectResponseType        = 1014
	CircuitConfirmationType    = 1034
	RouterLinksType            = 1035
	UpdateCtrlAddressesType    = 1037
	UpdateRouterInterfacesType = 1052
	LinkStateType              = 1053
	AlertsType                 = 1054
)

// Header keys.
const (
	// ListenersHeader, RouterMetadataHeader and CapabilitiesHeader are
	// ctrl_pb.ControlHeaders, in hellos.
	ListenersHeader      = 10
	RouterMetadataHeader = 11
	CapabilitiesHeader   = 12
	// SyncStrategyTypeHeader and SyncStrategyStateHeader carry the API
	// session sync's strategy ("instant") and its JSON state.
	SyncStrategyTypeHeader  = 1013
	SyncStrategyStateHeader = 1014
	// RouterDataModelHeader (bool) and RouterDataModelIndexHeader (uint64)
	// are edge_ctrl_pb.Header.
	RouterDataModelHeader      = 1024
	RouterDataModelIndexHeader = 1025
)

// Controller capabilities: bits of the capabilities header.
const (
	CapCreateTerminatorV2     = 1
	CapSingleRouterLinkSource = 2
	CapCreateCircuitV2        = 3
	CapRouterDataModel        = 4
)

// MaxRepeated bounds the elements of one repeated field a decoder takes.
const MaxRepeated = 100000

// ErrTooMany: a repeated field has more elements than a decoder takes.
var ErrTooMany = errors.New("wire: too many repeated elements")

// buf appends protobuf fields; proto3 defaults are left out.
type buf []byte

func (b buf) str(num protowire.Number, s string) buf {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func (b buf) strs(num protowire.Number, ss []string) buf {
	for _, s := range ss {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	return b
}

func (b buf) bytes(num protowire.Number, v []byte) buf {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// msg appends an embedded message, even an empty one (a message field's
// presence is meaningful).
func (b buf) msg(num protowire.Number, v []byte) buf {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func (b buf) uint(num protowire.Number, v uint64) buf {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func (b buf) boolean(num protowire.Number, v bool) buf {
	if !v {
		return b
	}
	return b.uint(num, 1)
}

// packed appends a packed repeated varint field.
func (b buf) packed(num protowire.Number, vs []uint64) buf {
	if len(vs) == 0 {
		return b
	}
	var p []byte
	for _, v := range vs {
		p = protowire.AppendVarint(p, v)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

// strMap appends a map<string,string> in key order (entries: key 1, value 2).
func (b buf) strMap(num protowire.Number, m map[string]string) buf {
	for _, k := range sortedKeys(m) {
		b = b.msg(num, buf(nil).str(1, k).str(2, m[k]))
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Fields calls fn for every field of a message: v is the value of varint
// fields, raw the bytes of length-delimited ones; for the other wire types
// (fixed-width, groups) fn gets neither, and decoders ignore them.
func Fields(b []byte, fn func(num protowire.Number, v uint64, raw []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		var raw []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			raw, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, v, raw); err != nil {
			return err
		}
	}
	return nil
}

// appendBounded appends s to list, refusing past MaxRepeated.
func appendBounded[T any](list []T, v T) ([]T, error) {
	if len(list) >= MaxRepeated {
		return list, ErrTooMany
	}
	return append(list, v), nil
}

// mapEntry reads a map entry's key (1) and value (2, as varint or bytes).
func mapEntry(b []byte) (key string, v uint64, raw []byte, err error) {
	err = Fields(b, func(num protowire.Number, val uint64, r []byte) error {
		switch num {
		case 1:
			key = string(r)
		case 2:
			v, raw = val, r
		}
		return nil
	})
	return key, v, raw, err
}
