package wire

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// The messages of a router's own tunneler (a `tunnel` listener of `ziti
// router`, its identity the router's identity of type Router). A router
// that holds the router data model uses these; it finds its services in
// that model, so it asks for no API session, session or service list.

// Tunnel content types (edge_ctrl_pb.ContentType).
const (
	CreateTunnelCircuitV2RequestType     = 20220
	CreateTunnelCircuitV2ResponseType    = 20221
	UpdateTunnelTerminatorRequestType    = 20408
	UpdateTunnelTerminatorResponseType   = 20409
	TunnelHealthEventType                = 20412
	CreateTunnelTerminatorRequestV2Type  = 20413
	CreateTunnelTerminatorResponseV2Type = 20414
)

// TerminatorIDHeader (string) and CheckPassedHeader (bool) carry a tunnel
// health event (edge_ctrl_pb.Header).
const (
	TerminatorIDHeader = 1022
	CheckPassedHeader  = 1023
)

// CreateTunnelTerminatorV2 is CreateTunnelTerminatorRequestV2: serviceId 1,
// address 2, peerData 3 (map<uint32,bytes>), cost 4, precedence 5,
// instanceId 6, instanceSecret 7, startTime 8 (int64, the router's clock in
// milliseconds, handed back in the answer).
type CreateTunnelTerminatorV2 struct {
	ServiceID      string
	Address        string
	PeerData       map[uint32][]byte
	Cost           uint32
	Precedence     Precedence
	InstanceID     string
	InstanceSecret []byte
	StartTime      int64
}

// DecodeCreateTunnelTerminatorV2 reads a CreateTunnelTerminatorRequestV2.
func DecodeCreateTunnelTerminatorV2(b []byte) (*CreateTunnelTerminatorV2, error) {
	r := &CreateTunnelTerminatorV2{PeerData: map[uint32][]byte{}}
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			r.ServiceID = string(raw)
		case 2:
			r.Address = string(raw)
		case 3:
			return addPeerData(r.PeerData, raw)
		case 4:
			r.Cost = uint32(v)
		case 5:
			r.Precedence = Precedence(v)
		case 6:
			r.InstanceID = string(raw)
		case 7:
			r.InstanceSecret = append([]byte(nil), raw...)
		case 8:
			r.StartTime = int64(v)
		}
		return nil
	})
	return r, err
}

// CreateTunnelTerminatorV2Response encodes CreateTunnelTerminatorResponseV2:
// terminatorId 1, startTime 2, result 3 (a CreateTerminatorV2 result), msg 4.
func CreateTunnelTerminatorV2Response(id string, startTime int64, result uint64, msg string) []byte {
	return buf(nil).str(1, id).uint(2, uint64(startTime)).uint(3, result).str(4, msg)
}

// CreateTunnelCircuitV2 is CreateTunnelCircuitV2Request: serviceName 1,
// terminatorInstanceId 2, peerData 3 (map<uint32,bytes>).
type CreateTunnelCircuitV2 struct {
	ServiceName          string
	TerminatorInstanceID string
	PeerData             map[uint32][]byte
}

// DecodeCreateTunnelCircuitV2 reads a CreateTunnelCircuitV2Request.
func DecodeCreateTunnelCircuitV2(b []byte) (*CreateTunnelCircuitV2, error) {
	r := &CreateTunnelCircuitV2{PeerData: map[uint32][]byte{}}
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		switch num {
		case 1:
			r.ServiceName = string(raw)
		case 2:
			r.TerminatorInstanceID = string(raw)
		case 3:
			return addPeerData(r.PeerData, raw)
		}
		return nil
	})
	return r, err
}

// CreateTunnelCircuitV2Response encodes CreateTunnelCircuitV2Response:
// circuitId 1, address 2, peerData 3 (map<uint32,bytes>), tags 4
// (map<string,string>).
func CreateTunnelCircuitV2Response(circuitID, address string, peerData map[uint32][]byte, tags map[string]string) []byte {
	return buf(nil).str(1, circuitID).str(2, address).peerData(3, peerData).strMap(4, tags)
}

// UpdateTunnelTerminator is UpdateTunnelTerminatorRequest: terminatorId 1,
// cost 2, precedence 3, updatePrecedence 4, updateCost 5.
type UpdateTunnelTerminator struct {
	TerminatorID     string
	Cost             uint32
	Precedence       Precedence
	UpdatePrecedence bool
	UpdateCost       bool
}

// DecodeUpdateTunnelTerminator reads an UpdateTunnelTerminatorRequest.
func DecodeUpdateTunnelTerminator(b []byte) (*UpdateTunnelTerminator, error) {
	r := &UpdateTunnelTerminator{}
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			r.TerminatorID = string(raw)
		case 2:
			r.Cost = uint32(v)
		case 3:
			r.Precedence = Precedence(v)
		case 4:
			r.UpdatePrecedence = v != 0
		case 5:
			r.UpdateCost = v != 0
		}
		return nil
	})
	return r, err
}
