package path

import (
	"time"

	"edgectl/dataplane/wire"
)

// Circuit is a circuit as its routes name it: its id, the addresses of its
// two ends on their routers, and its path.
type Circuit struct {
	ID        string
	IngressID string
	EgressID  string
	Nodes     []string
	Links     []string
}

// Routes are the Route messages of a circuit on each router of its path:
// the ingress forwards to the first link (and back to the client), each
// router in the middle from link to link, the last from the last link to
// its egress, which dials the terminator (unless reroute: it has it). One
// router forwards ingress to egress and back.
func (ci Circuit) Routes(attempt uint32, egress *wire.Egress, timeout time.Duration) [][]byte {
	n := len(ci.Nodes)
	out := make([][]byte, n)
	for i := range ci.Nodes {
		var fw []wire.Forward
		var eg *wire.Egress
		switch {
		case n == 1:
			fw = []wire.Forward{{Src: ci.IngressID, Dst: ci.EgressID, DstType: wire.DestEnd}, {Src: ci.EgressID, Dst: ci.IngressID, DstType: wire.DestStart}}
		case i == 0:
			fw = []wire.Forward{{Src: ci.IngressID, Dst: ci.Links[0], DstType: wire.DestLink}, {Src: ci.Links[0], Dst: ci.IngressID, DstType: wire.DestStart}}
		case i == n-1:
			fw = []wire.Forward{{Src: ci.EgressID, Dst: ci.Links[i-1], DstType: wire.DestLink}, {Src: ci.Links[i-1], Dst: ci.EgressID, DstType: wire.DestEnd}}
		default:
			fw = []wire.Forward{{Src: ci.Links[i-1], Dst: ci.Links[i], DstType: wire.DestLink}, {Src: ci.Links[i], Dst: ci.Links[i-1], DstType: wire.DestLink}}
		}
		if i == n-1 {
			eg = egress
		}
		out[i] = wire.Route(ci.ID, attempt, eg, fw, uint64(timeout), nil)
	}
	return out
}

// LinksAt are the links the route of the i-th router of a circuit's path
// names.
func (ci Circuit) LinksAt(i int) []string {
	var out []string
	if i > 0 {
		out = append(out, ci.Links[i-1])
	}
	if i < len(ci.Links) {
		out = append(out, ci.Links[i])
	}
	return out
}
