package dataplane

import (
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf messages of OpenZiti's edge control plane (edge_ctrl_pb),
// encoded and decoded field by field with protowire: the field numbers are
// protocol facts; the oracle module (integration/ziti) checks each message
// against OpenZiti's generated code.

// Edge content types (edge_ctrl_pb.ContentType).
const (
	ctServerHello         = 20000
	ctClientHello         = 20001
	ctError               = 20002
	ctSessionRemoved      = 20102
	ctAPISessionAdded     = 20200
	ctAPISessionUpdated   = 20201
	ctAPISessionRemoved   = 20202
	ctAPISessionHeartbeat = 20203
	ctRequestClientReSync = 20204
	ctConnectEvents       = 20415
	ctDataState           = 20500
	ctDataStateChangeSet  = 20501
	ctSubscribeToModel    = 20505
	ctCurrentIndex        = 20506

	ctExtendRouterRequest = 20302
	ctExtendRouterVerify  = 20303
	ctEnrollmentCerts     = 20301
)

// Control-plane content types (ctrl_pb.ContentType) a router sends on its own.
const (
	ctMetrics                = 1007
	ctCircuitConfirmation    = 1034
	ctRouterLinks            = 1035
	ctUpdateCtrlAddresses    = 1037
	ctUpdateRouterInterfaces = 1052
	ctLinkState              = 1053
	ctAlerts                 = 1054
)

// Edge header keys (edge_ctrl_pb.Header, controller/env/sync.go).
const (
	headerSyncStrategyType  = 1013
	headerSyncStrategyState = 1014
	headerRouterDataModel   = 1024
	headerRouterModelIndex  = 1025
)

// protoBuf appends protobuf fields.
type protoBuf []byte

func (b protoBuf) str(num protowire.Number, s string) protoBuf {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func (b protoBuf) strs(num protowire.Number, ss []string) protoBuf {
	for _, s := range ss {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	return b
}

func (b protoBuf) bytes(num protowire.Number, v []byte) protoBuf {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// msg appends an embedded message, even an empty one (presence matters for message fields).
func (b protoBuf) msg(num protowire.Number, v []byte) protoBuf {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func (b protoBuf) uint(num protowire.Number, v uint64) protoBuf {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func (b protoBuf) boolean(num protowire.Number, v bool) protoBuf {
	if !v {
		return b
	}
	return b.uint(num, 1)
}

// strMap appends a map<string,string> in key order (entries: 1 key, 2 value).
func (b protoBuf) strMap(num protowire.Number, m map[string]string) protoBuf {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b = b.msg(num, protoBuf(nil).str(1, k).str(2, m[k]))
	}
	return b
}

// eachField calls fn for every field of a message; fn reads the value
// from the bytes it is given (v: the varint for varint fields, raw: the
// bytes of length-delimited fields). Other wire types are skipped.
func eachField(b []byte, fn func(num protowire.Number, v uint64, raw []byte) error) error {
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

// serverHello is edge_ctrl_pb.ServerHello: version 1, data 2.
func serverHello(version string, data map[string]string) []byte {
	return protoBuf(nil).str(1, version).strMap(2, data)
}

// Address is edge_ctrl_pb.Address.
type Address struct {
	Value, Protocol, Hostname string
	Port                      int32
}

// Listener is edge_ctrl_pb.Listener: an edge listener of a router.
type Listener struct {
	Address, Advertise Address
}

// ClientHello is edge_ctrl_pb.ClientHello, the router's answer to the server hello.
type ClientHello struct {
	Version       string
	Hostname      string
	Protocols     []string
	ProtocolPorts []string
	Data          map[string]string
	Listeners     []Listener
}

var errTooMany = errors.New("too many repeated fields")

// maxRepeated bounds the repeated fields read from one message.
const maxRepeated = 1024

func decodeAddress(b []byte) (Address, error) {
	var a Address
	err := eachField(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 10:
			a.Value = string(raw)
		case 20:
			a.Protocol = string(raw)
		case 30:
			a.Hostname = string(raw)
		case 40:
			a.Port = int32(v)
		}
		return nil
	})
	return a, err
}

func decodeStrMapEntry(b []byte) (k, v string, err error) {
	err = eachField(b, func(num protowire.Number, _ uint64, raw []byte) error {
		switch num {
		case 1:
			k = string(raw)
		case 2:
			v = string(raw)
		}
		return nil
	})
	return k, v, err
}

// decodeClientHello reads a ClientHello: version 1, hostname 2,
// protocols 3, data 4, protocolPorts 5, listeners 10 (address 10,
// advertise 20).
func decodeClientHello(b []byte) (*ClientHello, error) {
	h := &ClientHello{Data: map[string]string{}}
	err := eachField(b, func(num protowire.Number, _ uint64, raw []byte) error {
		switch num {
		case 1:
			h.Version = string(raw)
		case 2:
			h.Hostname = string(raw)
		case 3:
			if len(h.Protocols) >= maxRepeated {
				return errTooMany
			}
			h.Protocols = append(h.Protocols, string(raw))
		case 4:
			if len(h.Data) >= maxRepeated {
				return errTooMany
			}
			k, v, err := decodeStrMapEntry(raw)
			if err != nil {
				return err
			}
			h.Data[k] = v
		case 5:
			if len(h.ProtocolPorts) >= maxRepeated {
				return errTooMany
			}
			h.ProtocolPorts = append(h.ProtocolPorts, string(raw))
		case 10:
			if len(h.Listeners) >= maxRepeated {
				return errTooMany
			}
			var l Listener
			err := eachField(raw, func(num protowire.Number, _ uint64, raw []byte) error {
				var err error
				switch num {
				case 10:
					l.Address, err = decodeAddress(raw)
				case 20:
					l.Advertise, err = decodeAddress(raw)
				}
				return err
			})
			if err != nil {
				return err
			}
			h.Listeners = append(h.Listeners, l)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("client hello: %w", err)
	}
	return h, nil
}

// supportedProtocols are the URLs of a router's edge listeners by
// protocol, as OpenZiti makes them: "proto://host:port" from each
// listener's advertise address, or from the legacy hostname, protocols
// and ports when there are no listeners.
func (h *ClientHello) supportedProtocols() map[string]string {
	out := map[string]string{}
	if len(h.Listeners) > 0 {
		for _, l := range h.Listeners {
			out[l.Advertise.Protocol] = fmt.Sprintf("%s://%s:%d", l.Advertise.Protocol, l.Advertise.Hostname, l.Advertise.Port)
		}
		return out
	}
	if h.Hostname == "" {
		return out
	}
	for i, p := range h.Protocols {
		if i < len(h.ProtocolPorts) {
			out[p] = fmt.Sprintf("%s://%s:%s", p, h.Hostname, h.ProtocolPorts[i])
		}
	}
	return out
}

// APISession is edge_ctrl_pb.ApiSession: token 1, certFingerprints 2, id 3, identityId 4.
type APISession struct {
	Token            string
	CertFingerprints []string
	ID               string
	IdentityID       string
}

func (s *APISession) encode() []byte {
	return protoBuf(nil).str(1, s.Token).strs(2, s.CertFingerprints).str(3, s.ID).str(4, s.IdentityID)
}

// apiSessionAdded is ApiSessionAdded: isFullState 1, apiSessions 2.
func apiSessionAdded(full bool, sessions []*APISession) []byte {
	b := protoBuf(nil).boolean(1, full)
	for _, s := range sessions {
		b = b.msg(2, s.encode())
	}
	return b
}

// apiSessionUpdated is ApiSessionUpdated: apiSessions 1.
func apiSessionUpdated(sessions []*APISession) []byte {
	var b protoBuf
	for _, s := range sessions {
		b = b.msg(1, s.encode())
	}
	return b
}

// apiSessionRemoved is ApiSessionRemoved: tokens 1, ids 2.
func apiSessionRemoved(tokens, ids []string) []byte {
	return protoBuf(nil).strs(1, tokens).strs(2, ids)
}

// decodeTokens reads the repeated string field 1 of ApiSessionHeartbeat
// (tokens), at most limit of them.
func decodeTokens(b []byte, limit int) ([]string, error) {
	var out []string
	err := eachField(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num == 1 {
			if len(out) >= limit {
				return errTooMany
			}
			out = append(out, string(raw))
		}
		return nil
	})
	return out, err
}

// decodeReason reads RequestClientReSync's reason (field 1).
func decodeReason(b []byte) string {
	var r string
	_ = eachField(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num == 1 {
			r = string(raw)
		}
		return nil
	})
	return r
}
