package wire

import (
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
)

// Terminator content types.
const (
	UpdateTerminatorRequestType    = 20209
	UpdateTerminatorResponseType   = 20210
	RemoveTerminatorRequestType    = 20211
	RemoveTerminatorResponseType   = 20212
	HealthEventType                = 20214
	CreateTerminatorV2RequestType  = 20216
	CreateTerminatorV2ResponseType = 20217
	RemoveTerminatorsRequestType   = 1038
)

// ErrorCodeHeader carries an edge error's code (uint32) on an ErrorType
// answer, whose body is the error's text.
const ErrorCodeHeader = 1014

// Edge error codes (edge_client_pb.Error).
const (
	ErrInternal                    = 1
	ErrInvalidAPISession           = 2
	ErrInvalidSession              = 3
	ErrWrongSessionType            = 4
	ErrInvalidEdgeRouterForSession = 5
	ErrInvalidService              = 6
	ErrTunnelingNotEnabled         = 7
	ErrInvalidTerminator           = 8
	ErrInvalidPrecedence           = 9
	ErrInvalidCost                 = 10
	ErrEncryptionDataMissing       = 11
)

// Results of CreateTerminatorV2.
const (
	TerminatorCreated        = 0
	TerminatorIDConflict     = 1
	TerminatorFailed         = 2
	TerminatorBusy           = 3
	TerminatorInvalidSession = 4
)

// CreateTerminatorV2 is CreateTerminatorV2Request: address 1, sessionToken 2,
// fingerprints 3, peerData 4 (map<uint32,bytes>), cost 5, precedence 6,
// instanceId 7, instanceSecret 8, apiSessionToken 9.
type CreateTerminatorV2 struct {
	Address         string
	SessionToken    string
	Fingerprints    []string
	PeerData        map[uint32][]byte
	Cost            uint32
	Precedence      Precedence
	InstanceID      string
	InstanceSecret  []byte
	APISessionToken string
}

// DecodeCreateTerminatorV2 reads a CreateTerminatorV2Request.
func DecodeCreateTerminatorV2(b []byte) (*CreateTerminatorV2, error) {
	r := &CreateTerminatorV2{PeerData: map[uint32][]byte{}}
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		var err error
		switch num {
		case 1:
			r.Address = string(raw)
		case 2:
			r.SessionToken = string(raw)
		case 3:
			r.Fingerprints, err = appendBounded(r.Fingerprints, string(raw))
		case 4:
			err = addPeerData(r.PeerData, raw)
		case 5:
			r.Cost = uint32(v)
		case 6:
			r.Precedence = Precedence(v)
		case 7:
			r.InstanceID = string(raw)
		case 8:
			r.InstanceSecret = append([]byte(nil), raw...)
		case 9:
			r.APISessionToken = string(raw)
		}
		return err
	})
	return r, err
}

// CreateTerminatorV2Response encodes CreateTerminatorV2Response: terminatorId 1, result 2, msg 3.
func CreateTerminatorV2Response(id string, result uint64, msg string) []byte {
	return buf(nil).str(1, id).uint(2, result).str(3, msg)
}

// TerminatorRequest is the common part of the edge terminator requests
// that name an existing terminator: UpdateTerminatorRequest (sessionToken 1,
// fingerprints 2, terminatorId 3, cost 4, precedence 5, updatePrecedence 6,
// updateCost 7, apiSessionToken 8), RemoveTerminatorRequest (sessionToken 1,
// fingerprints 2, terminatorId 3, apiSessionToken 4) and HealthEventRequest
// (sessionToken 1, fingerprints 2, terminatorId 3, checkPassed 4,
// apiSessionToken 5).
type TerminatorRequest struct {
	SessionToken     string
	Fingerprints     []string
	TerminatorID     string
	APISessionToken  string
	Cost             uint32
	Precedence       Precedence
	UpdateCost       bool
	UpdatePrecedence bool
	CheckPassed      bool
}

// DecodeTerminatorRequest reads one of the three by its content type.
func DecodeTerminatorRequest(contentType int32, b []byte) (*TerminatorRequest, error) {
	r := &TerminatorRequest{}
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		var err error
		switch num {
		case 1:
			r.SessionToken = string(raw)
		case 2:
			r.Fingerprints, err = appendBounded(r.Fingerprints, string(raw))
		case 3:
			r.TerminatorID = string(raw)
		}
		switch {
		case contentType == UpdateTerminatorRequestType && num == 4:
			r.Cost = uint32(v)
		case contentType == UpdateTerminatorRequestType && num == 5:
			r.Precedence = Precedence(v)
		case contentType == UpdateTerminatorRequestType && num == 6:
			r.UpdatePrecedence = v != 0
		case contentType == UpdateTerminatorRequestType && num == 7:
			r.UpdateCost = v != 0
		case contentType == UpdateTerminatorRequestType && num == 8,
			contentType == RemoveTerminatorRequestType && num == 4,
			contentType == HealthEventType && num == 5:
			r.APISessionToken = string(raw)
		case contentType == HealthEventType && num == 4:
			r.CheckPassed = v != 0
		}
		return err
	})
	return r, err
}

// DecodeRemoveTerminators reads ctrl_pb.RemoveTerminatorsRequest: terminatorIds 1.
func DecodeRemoveTerminators(b []byte) ([]string, error) { return stringsOfField1(b) }

// peerData appends a map<uint32,bytes> in key order.
func (b buf) peerData(num protowire.Number, m map[uint32][]byte) buf {
	keys := make([]uint32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		b = b.msg(num, buf(nil).uint(1, uint64(k)).bytes(2, m[k]))
	}
	return b
}

// addPeerData reads one map<uint32,bytes> entry (key 1, value 2) into m,
// bounded by MaxRepeated.
func addPeerData(m map[uint32][]byte, entry []byte) error {
	if len(m) >= MaxRepeated {
		return ErrTooMany
	}
	var k uint64
	var val []byte
	err := Fields(entry, func(n protowire.Number, kv uint64, rb []byte) error {
		switch n {
		case 1:
			k = kv
		case 2:
			val = append([]byte(nil), rb...)
		}
		return nil
	})
	m[uint32(k)] = val
	return err
}

// ValidateTerminatorsV2 content types (ctrl_pb).
const (
	ValidateTerminatorsV2RequestType  = 1041
	ValidateTerminatorsV2ResponseType = 1042
)

// TerminatorRef is ctrl_pb.Terminator: id 1, binding 2, address 3, marker 4.
type TerminatorRef struct {
	ID, Binding, Address string
}

// ValidateTerminatorsV2 encodes ValidateTerminatorsV2Request: terminators 1, fixInvalid 2.
func ValidateTerminatorsV2(ts []TerminatorRef, fix bool) []byte {
	var b buf
	for _, t := range ts {
		b = b.msg(1, buf(nil).str(1, t.ID).str(2, t.Binding).str(3, t.Address))
	}
	return b.boolean(2, fix)
}

// RouterTerminatorState is a router's verdict on a terminator
// (ctrl_pb.RouterTerminatorState): valid 1, reason 2 (0 unknown binding, 1
// unknown terminator, 2 bad state), detail 3.
type RouterTerminatorState struct {
	Valid  bool
	Reason uint64
	Detail string
}

// The reasons a router gives for an invalid terminator (ctrl_pb.TerminatorInvalidReason).
const (
	InvalidUnknownBinding    = 0
	InvalidUnknownTerminator = 1
	InvalidBadState          = 2
)

// DecodeValidateTerminatorsV2Response reads the router's verdicts: states
// 1 (map terminator id → RouterTerminatorState).
func DecodeValidateTerminatorsV2Response(b []byte) (map[string]RouterTerminatorState, error) {
	states := map[string]RouterTerminatorState{}
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num != 1 {
			return nil
		}
		if len(states) >= MaxRepeated {
			return ErrTooMany
		}
		id, _, state, err := mapEntry(raw)
		if err != nil {
			return err
		}
		var st RouterTerminatorState
		err = Fields(state, func(n protowire.Number, v uint64, r []byte) error {
			switch n {
			case 1:
				st.Valid = v != 0
			case 2:
				st.Reason = v
			case 3:
				st.Detail = string(r)
			}
			return nil
		})
		states[id] = st
		return err
	})
	return states, err
}
