package wire

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// The router's side of the messages: what a router sends the controller
// and reads from it, the mirror of the controller's side above. The fleet
// tool (bench/fleet) speaks it for routers it simulates; the round-trip
// tests hold each encoder to the controller's decoder.

// CapLinkManagement is the router capability of managing its own links
// (ctrl_pb.RouterCapability), in its hello's RouterMetadataHeader.
const CapLinkManagement = 1

// RouterMetadata encodes ctrl_pb.RouterMetadata: capabilities 1 (packed).
func RouterMetadata(caps ...uint64) []byte { return buf(nil).packed(1, caps) }

// ClientHelloMsg encodes the router's ClientHello: version 1, hostname 2,
// protocols 3.
func ClientHelloMsg(version, hostname string, protocols []string) []byte {
	return buf(nil).str(1, version).str(2, hostname).strs(3, protocols)
}

// Subscribe encodes a SubscribeToDataModelRequest.
func Subscribe(r SubscribeRequest) []byte {
	return buf(nil).uint(1, r.CurrentIndex).uint(2, uint64(r.Duration.Seconds())).boolean(3, r.Renew).str(4, r.TimelineID)
}

// EncodeCreateTerminatorV2 encodes a CreateTerminatorV2Request.
func EncodeCreateTerminatorV2(r *CreateTerminatorV2) []byte {
	b := buf(nil).str(1, r.Address).str(2, r.SessionToken).strs(3, r.Fingerprints).peerData(4, r.PeerData).
		uint(5, uint64(r.Cost)).uint(6, uint64(r.Precedence)).str(7, r.InstanceID).bytes(8, r.InstanceSecret)
	return b.str(9, r.APISessionToken)
}

// DecodeCreateTerminatorV2Response reads CreateTerminatorV2Response:
// terminatorId 1, result 2, msg 3.
func DecodeCreateTerminatorV2Response(b []byte) (id string, result uint64, msg string, err error) {
	err = Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			id = string(raw)
		case 2:
			result = v
		case 3:
			msg = string(raw)
		}
		return nil
	})
	return id, result, msg, err
}

// EncodeRouterLinks encodes ctrl_pb.RouterLinks: links 1 (id 1,
// destRouterId 2, linkProtocol 3, dialAddress 5, iteration 6).
func EncodeRouterLinks(links []RouterLink) []byte {
	var b buf
	for _, l := range links {
		b = b.msg(1, buf(nil).str(1, l.ID).str(2, l.DestRouterID).str(3, l.Protocol).str(5, l.DialAddress).uint(6, uint64(l.Iteration)))
	}
	return b
}

// DecodeValidateTerminatorsV2 reads ValidateTerminatorsV2Request's
// terminators (1: id 1, binding 2, address 3).
func DecodeValidateTerminatorsV2(b []byte) ([]TerminatorRef, error) {
	var out []TerminatorRef
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num != 1 {
			return nil
		}
		var t TerminatorRef
		err := Fields(raw, func(n protowire.Number, _ uint64, r []byte) error {
			switch n {
			case 1:
				t.ID = string(r)
			case 2:
				t.Binding = string(r)
			case 3:
				t.Address = string(r)
			}
			return nil
		})
		if err == nil {
			out, err = appendBounded(out, t)
		}
		return err
	})
	return out, err
}

// ValidateTerminatorsV2Response encodes the router's verdicts: states 1
// (map terminator id → RouterTerminatorState), in id order.
func ValidateTerminatorsV2Response(states map[string]RouterTerminatorState) []byte {
	var b buf
	for _, id := range sortedKeys(states) {
		st := states[id]
		b = b.msg(1, buf(nil).str(1, id).msg(2, buf(nil).boolean(1, st.Valid).uint(2, st.Reason).str(3, st.Detail)))
	}
	return b
}

// DecodeRoute reads what a router answering a Route needs of it: its
// circuit id (1) and attempt (2).
func DecodeRoute(b []byte) (circuitID string, attempt uint32, err error) {
	err = Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			circuitID = string(raw)
		case 2:
			attempt = uint32(v)
		}
		return nil
	})
	return circuitID, attempt, err
}

// DataStateSummary is what a router counts of a full data state or a
// change set: its events and its index (a full state's endIndex 2, a
// change set's index 1), and a full state's timeline (3).
type DataStateSummary struct {
	Events   int
	Index    uint64
	Timeline string
}

// DecodeDataStateSummary reads a DataState (full is true) or a
// DataState.ChangeSet (events 3).
func DecodeDataStateSummary(b []byte, full bool) (DataStateSummary, error) {
	var s DataStateSummary
	eventsField, indexField := protowire.Number(3), protowire.Number(1)
	if full {
		eventsField, indexField = 1, 2
	}
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch {
		case num == eventsField:
			s.Events++
		case num == indexField:
			s.Index = v
		case full && num == 3:
			s.Timeline = string(raw)
		}
		return nil
	})
	return s, err
}
