package path

import (
	"errors"
	"fmt"

	"edgectl/store"
)

// Pick chooses the terminator of service serviceID in tx that a dial
// through router ingress goes to, and the path to its router: among those
// of the instance id the dial names (or of none) that keep takes (nil:
// all), whose router a path reaches and that skip does not name, by
// precedence, then the terminator's cost plus the path's, then id. A
// terminator on the ingress router has a path of no cost.
//
// It reads, per router, the terminators in the store's pick order
// (precedence, cost, id) up to the first one it may take: the path's cost
// is the same for all of a router's terminators, so that one is the
// router's best. A pick costs a seek per router, not a step per terminator
// (unless keep or skip leave out a router's best ones), and one search of
// the graph from the ingress (Graph keeps it).
func Pick(g *Graph, tx *store.Tx, serviceID, ingress, instanceID string, skip map[string]bool, keep func(*store.Terminator) bool) (*store.Terminator, Path, error) {
	takes := func(t *store.Terminator) bool { return !skip[t.ID] && (keep == nil || keep(t)) }
	// first is the router's best terminator that may be taken, or nil;
	// best is its best one.
	first := func(best *store.Terminator) (found *store.Terminator) {
		if takes(best) {
			return best
		}
		tx.RankedTerminators(serviceID, instanceID, best.RouterID, func(t *store.Terminator) bool {
			if takes(t) {
				found = t
			}
			return found == nil
		})
		return found
	}
	var best *store.Terminator
	var bestPath Path
	candidates := false
	var unreached []*store.Terminator // the best of each router no path reaches, for the error
	tx.TerminatorRouters(serviceID, instanceID, func(rbest *store.Terminator) bool {
		p, err := g.Shortest(ingress, rbest.RouterID)
		if err != nil {
			unreached = append(unreached, rbest)
			return true
		}
		t := first(rbest)
		if t == nil {
			return true
		}
		candidates = true
		rank, cost := store.PrecedenceRank(t.Precedence), t.Cost+p.Cost
		bestRank := 0
		if best != nil {
			bestRank = store.PrecedenceRank(best.Precedence)
		}
		if best == nil || rank < bestRank ||
			(rank == bestRank && (cost < best.Cost+bestPath.Cost || (cost == best.Cost+bestPath.Cost && t.ID < best.ID))) {
			best, bestPath = t, p
		}
		return true
	})
	if best != nil {
		return best, bestPath, nil
	}
	// No pick: say why, reading only as much as it takes.
	for _, r := range unreached {
		if !candidates {
			candidates = first(r) != nil
		}
	}
	if candidates {
		return nil, Path{}, pickError(ErrNoPath, "service %s has no terminator on a router this edge router has a path to", serviceID)
	}
	any := false
	tx.Each(store.KindTerminator, "service", func(r store.Record) bool {
		any = keep == nil || keep(r.(*store.Terminator))
		return !any
	}, serviceID)
	switch {
	case !any:
		return nil, Path{}, pickError(ErrNoTerminator, "service %s has no terminators: no host is binding it", serviceID)
	case instanceID != "":
		return nil, Path{}, pickError(ErrNoTerminator, "service %s has no terminator of instance %q", serviceID, instanceID)
	}
	return nil, Path{}, pickError(ErrNoTerminator, "service %s has no terminator left to try", serviceID)
}

// ErrNoTerminator: the service has no terminator to pick (Pick's errors
// wrap it, or ErrNoPath when there are terminators but no path to any).
var ErrNoTerminator = errors.New("no terminator")

// causeError is an error whose text is its own and whose cause is a
// sentinel (errors.Is).
type causeError struct {
	msg   string
	cause error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.cause }

func pickError(cause error, format string, args ...any) error {
	return &causeError{msg: fmt.Sprintf(format, args...), cause: cause}
}
