package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Circuit content types.
const (
	FaultType                   = 1004
	RouteType                   = 1005
	UnrouteType                 = 1006
	RouteResultType             = 1022
	CreateCircuitV2RequestType  = 20218
	CreateCircuitV2ResponseType = 20219
)

// Header keys of the header-encoded circuit messages, named as
// common/ctrl_msg names them (with the "Header" suffix throughout).
const (
	// CreateCircuitPeerDataHeader is the request's and the response's.
	CreateCircuitPeerDataHeader = 10
	// CreateCircuitV2Request's headers.
	CreateCircuitReqSessionTokenHeader         = 11
	CreateCircuitReqFingerprintsHeader         = 12
	CreateCircuitReqTerminatorInstanceIDHeader = 13
	CreateCircuitReqAPISessionTokenHeader      = 14
	// CreateCircuitV2Response's headers.
	CreateCircuitRespCircuitIDHeader = 11
	CreateCircuitRespAddressHeader   = 12
	CreateCircuitRespTagsHeader      = 13

	RouteResultAttemptHeader      = 1101
	RouteResultSuccessHeader      = 1102
	RouteResultErrorHeader        = 1103
	RouteResultErrorCodeHeader    = 1104
	TerminatorLocalAddressHeader  = 1110
	TerminatorRemoteAddressHeader = 1111
	InitiatorLocalAddressHeader   = 1112
	InitiatorRemoteAddressHeader  = 1113

	// PublicKeyPeerData is the peer data key of the dialing client's public
	// key for end-to-end encryption (edge_client_pb.HeaderId_PublicKey).
	PublicKeyPeerData = 1003

	// CircuitIDHeader names the circuit on an error answer to a dial (edge_client_pb.HeaderId_CircuitId).
	CircuitIDHeader = 1026
)

// A failed route result's error code, one byte in RouteResultErrorCodeHeader
// (ctrl_msg.ErrorType*). The controller acts on RouteErrInvalidTerminator:
// the router does not have the terminator.
const (
	RouteErrGeneric                 = 0
	RouteErrInvalidTerminator       = 1
	RouteErrMisconfiguredTerminator = 2
	RouteErrDialTimedOut            = 3
	RouteErrConnectionRefused       = 4
)

// CreateCircuitV2Request is a router's dial for an SDK client, all in
// headers: the client's Dial session and API session tokens, its
// certificate fingerprints, the terminator instance it asks for, and its
// peer data (ctrl_msg.CreateCircuitRequest).
type CreateCircuitV2Request struct {
	SessionToken         string
	APISessionToken      string
	Fingerprints         []string
	TerminatorInstanceID string
	PeerData             map[uint32][]byte
}

// DecodeCreateCircuitV2Request reads a dial from its message's headers.
// The session token is required, as OpenZiti's controller requires it.
func DecodeCreateCircuitV2Request(h map[int32][]byte) (*CreateCircuitV2Request, error) {
	r := &CreateCircuitV2Request{
		SessionToken:         string(h[CreateCircuitReqSessionTokenHeader]),
		APISessionToken:      string(h[CreateCircuitReqAPISessionTokenHeader]),
		TerminatorInstanceID: string(h[CreateCircuitReqTerminatorInstanceIDHeader]),
	}
	if r.SessionToken == "" {
		return nil, errors.New("no session token in the dial")
	}
	var err error
	if r.Fingerprints, err = DecodeStringSlice(h[CreateCircuitReqFingerprintsHeader]); err != nil {
		return nil, err
	}
	if r.PeerData, err = DecodeU32Map(h[CreateCircuitPeerDataHeader]); err != nil {
		return nil, err
	}
	return r, nil
}

// CreateCircuitV2Response returns the headers of the answer to a dial: the
// circuit's id, the ingress router's address for it and the host's peer
// data (ctrl_msg.CreateCircuitResponse; edgectl sends no tags).
func CreateCircuitV2Response(circuitID, address string, peerData map[uint32][]byte) map[int32][]byte {
	h := map[int32][]byte{CreateCircuitRespCircuitIDHeader: []byte(circuitID), CreateCircuitRespAddressHeader: []byte(address)}
	if len(peerData) > 0 {
		h[CreateCircuitPeerDataHeader] = EncodeU32Map(peerData)
	}
	return h
}

// DestType is ctrl_pb.DestType.
const (
	DestStart = 0
	DestEnd   = 1
	DestLink  = 2
)

// Fault subjects (ctrl_pb.FaultSubject).
const (
	IngressFault             = 0
	EgressFault              = 1
	LinkFault                = 2
	ForwardFault             = 3
	UnknownOwnerForwardFault = 4
	LinkDuplicate            = 5
)

// Limits of the channel's header encodings (as OpenZiti's decoders).
const (
	maxHeaderEntries    = 128
	maxHeaderEntryBytes = 8192
)

var errShortHeader = errors.New("wire: header value too short")

// DecodeStringSlice reads a header holding a string list: a little-endian
// uint32 count, then each string as a uint32 length and its bytes.
func DecodeStringSlice(b []byte) ([]string, error) {
	n, b, err := headerCount(b, "a string list")
	if err != nil || n == 0 {
		return nil, err
	}
	out := make([]string, 0, n)
	for range n {
		var s []byte
		var err error
		if s, b, err = lengthPrefixed(b); err != nil {
			return nil, err
		}
		out = append(out, string(s))
	}
	return out, nil
}

// headerCount reads the uint32 count that starts a list or map header
// (none when the header is empty), bounded by maxHeaderEntries.
func headerCount(b []byte, what string) (uint32, []byte, error) {
	if len(b) == 0 {
		return 0, nil, nil
	}
	if len(b) < 4 {
		return 0, nil, errShortHeader
	}
	n := binary.LittleEndian.Uint32(b)
	if n > maxHeaderEntries {
		return 0, nil, fmt.Errorf("wire: %s header may have at most %d entries", what, maxHeaderEntries)
	}
	return n, b[4:], nil
}

func lengthPrefixed(b []byte) (v, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, errShortHeader
	}
	l := binary.LittleEndian.Uint32(b)
	if uint64(l) > uint64(len(b)-4) {
		return nil, nil, errShortHeader
	}
	return b[4 : 4+l], b[4+l:], nil
}

// EncodeU32Map encodes a map<uint32,bytes> header: a uint32 count, then
// each key, length and bytes (keys in order).
func EncodeU32Map(m map[uint32][]byte) []byte {
	if len(m) == 0 {
		return nil
	}
	keys := make([]uint32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(m)))
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint32(b, k)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m[k])))
		b = append(b, m[k]...)
	}
	return b
}

// DecodeU32Map reads a map<uint32,bytes> header.
func DecodeU32Map(b []byte) (map[uint32][]byte, error) {
	n, b, err := headerCount(b, "a peer data")
	if err != nil || n == 0 {
		return nil, err
	}
	out := map[uint32][]byte{}
	for range n {
		if len(b) < 4 {
			return nil, errShortHeader
		}
		k := binary.LittleEndian.Uint32(b)
		var v []byte
		var err error
		if v, b, err = lengthPrefixed(b[4:]); err != nil {
			return nil, err
		}
		if len(v) > maxHeaderEntryBytes {
			return nil, errors.New("wire: a peer data entry may have at most 8192 bytes")
		}
		out[k] = append([]byte(nil), v...)
	}
	return out, nil
}

// EncodeStringMap encodes a map<string,string> header: a uint32 count, then
// each key and value length-prefixed (keys in order).
func EncodeStringMap(m map[string]string) []byte {
	if len(m) == 0 {
		return nil
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(m)))
	for _, k := range sortedKeys(m) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(k)))
		b = append(b, k...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m[k])))
		b = append(b, m[k]...)
	}
	return b
}

// Forward is ctrl_pb.Route.Forward: srcAddress 1, dstAddress 2, dstType 3.
type Forward struct {
	Src, Dst string
	DstType  uint64
}

// Egress is ctrl_pb.Route.Egress: binding 1, address 2, destination 3, peerData 4.
type Egress struct {
	Binding, Address, Destination string
	PeerData                      map[uint32][]byte
}

// Route encodes ctrl_pb.Route: circuitId 1, attempt 2, egress 3, forwards 4,
// context 5 (empty), timeout 6 (nanoseconds), tags 7.
func Route(circuitID string, attempt uint32, egress *Egress, forwards []Forward, timeoutNanos uint64, tags map[string]string) []byte {
	b := buf(nil).str(1, circuitID).uint(2, uint64(attempt))
	if egress != nil {
		b = b.msg(3, buf(nil).str(1, egress.Binding).str(2, egress.Address).str(3, egress.Destination).peerData(4, egress.PeerData))
	}
	for _, f := range forwards {
		b = b.msg(4, buf(nil).str(1, f.Src).str(2, f.Dst).uint(3, f.DstType))
	}
	return b.msg(5, nil).uint(6, timeoutNanos).strMap(7, tags)
}

// Unroute encodes ctrl_pb.Unroute: circuitId 1, now 2.
func Unroute(circuitID string, now bool) []byte {
	return buf(nil).str(1, circuitID).boolean(2, now)
}

// Fault is ctrl_pb.Fault: subject 1, id 2, iteration 3.
type Fault struct {
	Subject   uint64
	ID        string
	Iteration uint32
}

// DecodeFault reads a Fault.
func DecodeFault(b []byte) (Fault, error) {
	var f Fault
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			f.Subject = v
		case 2:
			f.ID = string(raw)
		case 3:
			f.Iteration = uint32(v)
		}
		return nil
	})
	return f, err
}

// DecodeCircuitConfirmation reads CircuitConfirmation's circuitIds (field 1).
func DecodeCircuitConfirmation(b []byte) ([]string, error) { return stringsOfField1(b) }

// DecodeCircuitIdleTimes reads CircuitConfirmation's idleTimes (field 2,
// map<string, int64>): how long each circuit has been idle on the router
// (nothing forwarded since its last route or payload), in nanoseconds; a
// router that sends none gives an empty map.
func DecodeCircuitIdleTimes(b []byte) (map[string]time.Duration, error) {
	idle := map[string]time.Duration{}
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num != 2 {
			return nil
		}
		if len(idle) >= MaxRepeated {
			return ErrTooMany
		}
		id, v, _, err := mapEntry(raw)
		if err == nil {
			idle[id] = time.Duration(int64(v))
		}
		return err
	})
	return idle, err
}

// stringsOfField1 reads a message whose only field is a repeated string, 1.
func stringsOfField1(b []byte) ([]string, error) {
	var ids []string
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		var err error
		if num == 1 {
			ids, err = appendBounded(ids, string(raw))
		}
		return err
	})
	return ids, err
}
