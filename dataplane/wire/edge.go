package wire

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// ServerHello encodes edge_ctrl_pb.ServerHello: version 1, data 2.
func ServerHello(version string, data map[string]string) []byte {
	return buf(nil).str(1, version).strMap(2, data)
}

// Address is edge_ctrl_pb.Address: value 10, protocol 20, hostname 30, port 40.
type Address struct {
	Value, Protocol, Hostname string
	Port                      int32
}

// Listener is edge_ctrl_pb.Listener (an edge listener): address 10, advertise 20.
type Listener struct {
	Address, Advertise Address
}

// ClientHello is edge_ctrl_pb.ClientHello: version 1, hostname 2,
// protocols 3, data 4, protocolPorts 5, listeners 10.
type ClientHello struct {
	Version       string
	Hostname      string
	Protocols     []string
	Data          map[string]string
	ProtocolPorts []string
	Listeners     []Listener
}

func decodeAddress(b []byte) (Address, error) {
	var a Address
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
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

// DecodeClientHello reads a ClientHello.
func DecodeClientHello(b []byte) (*ClientHello, error) {
	h := &ClientHello{Data: map[string]string{}}
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		var err error
		switch num {
		case 1:
			h.Version = string(raw)
		case 2:
			h.Hostname = string(raw)
		case 3:
			h.Protocols, err = appendBounded(h.Protocols, string(raw))
		case 4:
			if len(h.Data) >= MaxRepeated {
				return ErrTooMany
			}
			k, _, v, e := mapEntry(raw)
			h.Data[k], err = string(v), e
		case 5:
			h.ProtocolPorts, err = appendBounded(h.ProtocolPorts, string(raw))
		case 10:
			var l Listener
			err = Fields(raw, func(num protowire.Number, _ uint64, raw []byte) error {
				var err error
				switch num {
				case 10:
					l.Address, err = decodeAddress(raw)
				case 20:
					l.Advertise, err = decodeAddress(raw)
				}
				return err
			})
			if err == nil {
				h.Listeners, err = appendBounded(h.Listeners, l)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("client hello: %w", err)
	}
	return h, nil
}

// SupportedProtocols are the URLs of the edge listeners by protocol, as
// OpenZiti makes them: "proto://host:port" of each listener's advertise
// address, or of the legacy hostname, protocols and ports without listeners.
func (h *ClientHello) SupportedProtocols() map[string]string {
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
	return buf(nil).str(1, s.Token).strs(2, s.CertFingerprints).str(3, s.ID).str(4, s.IdentityID)
}

// APISessionAdded encodes ApiSessionAdded: isFullState 1, apiSessions 2.
func APISessionAdded(full bool, sessions []*APISession) []byte {
	b := buf(nil).boolean(1, full)
	for _, s := range sessions {
		b = b.msg(2, s.encode())
	}
	return b
}

// APISessionRemoved encodes ApiSessionRemoved: tokens 1, ids 2.
func APISessionRemoved(tokens, ids []string) []byte {
	return buf(nil).strs(1, tokens).strs(2, ids)
}

// DecodeAPISessionHeartbeat reads ApiSessionHeartbeat's tokens (field 1).
func DecodeAPISessionHeartbeat(b []byte) ([]string, error) {
	var out []string
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		var err error
		if num == 1 {
			out, err = appendBounded(out, string(raw))
		}
		return err
	})
	return out, err
}

// DecodeRequestClientReSync reads RequestClientReSync's reason (field 1).
func DecodeRequestClientReSync(b []byte) (string, error) {
	var r string
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num == 1 {
			r = string(raw)
		}
		return nil
	})
	return r, err
}

// ExtendRequest is EnrollmentExtendRouterRequest: clientCertCsr 1,
// serverCertCsr 2, requireVerification 3.
type ExtendRequest struct {
	ClientCertCSR, ServerCertCSR string
	RequireVerification          bool
}

// DecodeExtendRequest reads an EnrollmentExtendRouterRequest.
func DecodeExtendRequest(b []byte) (ExtendRequest, error) {
	var x ExtendRequest
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			x.ClientCertCSR = string(raw)
		case 2:
			x.ServerCertCSR = string(raw)
		case 3:
			x.RequireVerification = v != 0
		}
		return nil
	})
	return x, err
}

// EnrollmentCerts encodes EnrollmentCertsResponse: clientCertPem 1, serverCertPem 2, caCertsPem 3.
func EnrollmentCerts(client, server, ca string) []byte {
	return buf(nil).str(1, client).str(2, server).str(3, ca)
}

// DecodeExtendVerify reads EnrollmentExtendRouterVerifyRequest's clientCertPem (field 1).
func DecodeExtendVerify(b []byte) (string, error) {
	var pem string
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num == 1 {
			pem = string(raw)
		}
		return nil
	})
	return pem, err
}

// Error encodes edge_ctrl_pb.Error: code 1, message 2, cause 3. An empty
// one answers success.
func Error(code, message, cause string) []byte {
	return buf(nil).str(1, code).str(2, message).str(3, cause)
}

// UpdateCtrlAddresses encodes ctrl_pb.UpdateCtrlAddresses: addresses 1, index 2, isLeader 3.
func UpdateCtrlAddresses(addresses []string, index uint64, isLeader bool) []byte {
	return buf(nil).strs(1, addresses).uint(2, index).boolean(3, isLeader)
}
