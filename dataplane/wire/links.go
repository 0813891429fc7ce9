package wire

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Router links (ctrl_pb, OpenZiti v1.7.2; docs/openziti.md, "Links"): a
// router tells the controller its link listeners in its hello (header 10),
// the controller tells each router its peers' listeners (PeerStateChanges),
// routers dial each other, the listening end asks the controller whether
// the dialer is the router it claims (VerifyRouter), and the dialing end
// reports its links (RouterLinks), their faults (Fault) and their latency
// (Metrics).

// Content types of links.
const (
	VerifyRouterType     = 1036
	PeerStateChangesType = 1050
)

// Peer states (ctrl_pb.PeerState).
const (
	PeerHealthy   = 0
	PeerUnhealthy = 1
	PeerRemoved   = 2
)

// SmartRerouteAttempt is the attempt number of a Route that moves an
// existing circuit to another path: the last router gets no egress (it
// keeps its connection to the host).
const SmartRerouteAttempt = 99969996

// LinkListener is ctrl_pb.Listener as a router announces it: address 1,
// protocol 2, costTags 3, groups 4, localBinding 5. Raw keeps the encoded
// message, sent on to peers as it came.
type LinkListener struct {
	Address, Protocol, LocalBinding string
	Groups, CostTags                []string
	Raw                             []byte
}

// DecodeListeners reads the hello's ListenersHeader (ctrl_pb.Listeners:
// listeners 1).
func DecodeListeners(b []byte) ([]LinkListener, error) {
	var out []LinkListener
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num != 1 {
			return nil
		}
		l := LinkListener{Raw: append([]byte(nil), raw...)}
		err := Fields(raw, func(num protowire.Number, _ uint64, v []byte) error {
			var err error
			switch num {
			case 1:
				l.Address = string(v)
			case 2:
				l.Protocol = string(v)
			case 3:
				l.CostTags, err = appendBounded(l.CostTags, string(v))
			case 4:
				l.Groups, err = appendBounded(l.Groups, string(v))
			case 5:
				l.LocalBinding = string(v)
			}
			return err
		})
		if err != nil {
			return err
		}
		out, err = appendBounded(out, l)
		return err
	})
	return out, err
}

// PeerStateChange is ctrl_pb.PeerStateChange: id 1, version 2, state 3,
// listeners 4 (each sent as the router announced it).
type PeerStateChange struct {
	ID, Version string
	State       uint64
	Listeners   []LinkListener
}

// PeerStateChanges encodes ctrl_pb.PeerStateChanges: changes 1.
func PeerStateChanges(changes []PeerStateChange) []byte {
	var b buf
	for _, c := range changes {
		m := buf(nil).str(1, c.ID).str(2, c.Version).uint(3, c.State)
		for _, l := range c.Listeners {
			m = m.msg(4, l.Raw)
		}
		b = b.msg(1, m)
	}
	return b
}

// DecodeVerifyRouter reads ctrl_pb.VerifyRouter: routerId 1, fingerprints 2.
func DecodeVerifyRouter(b []byte) (routerID string, fingerprints []string, err error) {
	err = Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		var err error
		switch num {
		case 1:
			routerID = string(raw)
		case 2:
			fingerprints, err = appendBounded(fingerprints, string(raw))
		}
		return err
	})
	return routerID, fingerprints, err
}

// RouterLink is ctrl_pb.RouterLinks.RouterLink as the dialing router
// reports it: id 1, destRouterId 2, linkProtocol 3, dialAddress 5,
// iteration 6, connState 7.
type RouterLink struct {
	ID, DestRouterID, Protocol, DialAddress string
	Iteration                               uint32
	ConnState                               *LinkConnState
}

// LinkConnState is ctrl_pb.LinkConnState, a link's connections:
// stateIteration 1, conns 2.
type LinkConnState struct {
	StateIteration uint32
	Conns          []LinkConn
}

// LinkConn is ctrl_pb.LinkConn: type 1, localAddr 2, remoteAddr 3.
type LinkConn struct {
	Type, LocalAddr, RemoteAddr string
}

// decodeLinkConnState reads a LinkConnState.
func decodeLinkConnState(b []byte) (*LinkConnState, error) {
	s := &LinkConnState{}
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			s.StateIteration = uint32(v)
		case 2:
			var c LinkConn
			err := Fields(raw, func(num protowire.Number, _ uint64, r []byte) error {
				switch num {
				case 1:
					c.Type = string(r)
				case 2:
					c.LocalAddr = string(r)
				case 3:
					c.RemoteAddr = string(r)
				}
				return nil
			})
			if err != nil {
				return err
			}
			s.Conns, err = appendBounded(s.Conns, c)
			return err
		}
		return nil
	})
	return s, err
}

// LinkStateUpdate is ctrl_pb.LinkStateUpdate: a link's connections changed
// (linkId 1, linkIteration 2, connState 3).
type LinkStateUpdate struct {
	LinkID    string
	Iteration uint32
	ConnState *LinkConnState
}

// DecodeLinkStateUpdate reads a LinkStateUpdate.
func DecodeLinkStateUpdate(b []byte) (LinkStateUpdate, error) {
	var u LinkStateUpdate
	err := Fields(b, func(num protowire.Number, v uint64, raw []byte) error {
		var err error
		switch num {
		case 1:
			u.LinkID = string(raw)
		case 2:
			u.Iteration = uint32(v)
		case 3:
			u.ConnState, err = decodeLinkConnState(raw)
		}
		return err
	})
	return u, err
}

// DecodeRouterLinks reads ctrl_pb.RouterLinks: links 1.
func DecodeRouterLinks(b []byte) ([]RouterLink, error) {
	var out []RouterLink
	err := Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		if num != 1 {
			return nil
		}
		var l RouterLink
		err := Fields(raw, func(num protowire.Number, v uint64, r []byte) error {
			switch num {
			case 1:
				l.ID = string(r)
			case 2:
				l.DestRouterID = string(r)
			case 3:
				l.Protocol = string(r)
			case 5:
				l.DialAddress = string(r)
			case 6:
				l.Iteration = uint32(v)
			case 7:
				var err error
				l.ConnState, err = decodeLinkConnState(r)
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
		out, err = appendBounded(out, l)
		return err
	})
	return out, err
}

// EncodeFault encodes ctrl_pb.Fault: subject 1, id 2, iteration 3.
func EncodeFault(f Fault) []byte {
	return buf(nil).uint(1, f.Subject).str(2, f.ID).uint(3, uint64(f.Iteration))
}

// DecodeMetrics reads what links need of metrics_pb.MetricsMessage: its
// source (the router, 2) and the mean of each histogram (8: map of name to
// Histogram, whose mean is field 3, a double).
func DecodeMetrics(b []byte) (source string, means map[string]float64, err error) {
	means = map[string]float64{}
	err = Fields(b, func(num protowire.Number, _ uint64, raw []byte) error {
		switch num {
		case 2:
			source = string(raw)
		case 8:
			if len(means) >= MaxRepeated {
				return ErrTooMany
			}
			name, hist := "", []byte(nil)
			err := Fields(raw, func(num protowire.Number, _ uint64, v []byte) error {
				switch num {
				case 1:
					name = string(v)
				case 2:
					hist = v
				}
				return nil
			})
			if err != nil {
				return err
			}
			mean, err := histogramMean(hist)
			if err != nil {
				return err
			}
			means[name] = mean
		}
		return nil
	})
	return source, means, err
}

// histogramMean reads metrics_pb.MetricsMessage.Histogram's mean (3, a
// fixed64 double); Fields skips fixed-width values.
func histogramMean(b []byte) (float64, error) {
	var mean float64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		b = b[n:]
		if num == 3 && typ == protowire.Fixed64Type {
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return 0, protowire.ParseError(n)
			}
			mean, b = math.Float64frombits(v), b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return mean, nil
}
