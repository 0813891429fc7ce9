package path

import "slices"

// Smart rerouting moves open circuits to paths that became cheaper (a link
// came back, latencies changed), a few per cycle so that a changing network
// does not move every circuit at once: OpenZiti's rule, 2% of the circuits,
// at least 1 and at most SmartReroutePerCycle, each cheaper by at least
// SmartRerouteGain.
const (
	SmartRerouteGain     = 15
	SmartReroutePerCycle = 4
)

// SmartReroutes are the ids of the circuits (of all those open) to move
// this cycle: those whose cheapest path in g now costs at least
// SmartRerouteGain less than theirs, the largest gains first.
func SmartReroutes(g *Graph, open []Circuit) []string {
	type move struct {
		id   string
		gain int
	}
	var moves []move
	for _, ci := range open {
		if len(ci.Nodes) == 0 {
			continue
		}
		cur, ok := g.Cost(ci.Nodes, ci.Links)
		if !ok {
			continue // a link of its path is gone: its fault moves it
		}
		best, err := g.Shortest(ci.Nodes[0], ci.Nodes[len(ci.Nodes)-1])
		if err == nil && cur-best.Cost >= SmartRerouteGain {
			moves = append(moves, move{ci.ID, cur - best.Cost})
		}
	}
	slices.SortFunc(moves, func(a, b move) int { return b.gain - a.gain })
	limit := min(max(len(open)*2/100, 1), SmartReroutePerCycle)
	ids := make([]string, 0, min(len(moves), limit))
	for _, mv := range moves[:min(len(moves), limit)] {
		ids = append(ids, mv.id)
	}
	return ids
}
