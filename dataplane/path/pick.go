package path

import (
	"errors"
	"fmt"
	"iter"

	"edgectl/store"
)

// precedenceRank orders terminator precedences: required first, failed last.
func precedenceRank(p string) int {
	switch p {
	case "required":
		return 0
	case "failed":
		return 2
	}
	return 1
}

// Pick chooses the terminator of a service (terminators lists them) that a
// dial through router ingress goes to, and the path to its router: among
// those of the instance id the dial names (or of none) whose router a path
// reaches and that skip does not name, by precedence, then the terminator's
// cost plus the path's, then id. A terminator on the ingress router has a
// path of no cost.
func Pick(g *Graph, terminators iter.Seq[*store.Terminator], serviceID, ingress, instanceID string, skip map[string]bool) (*store.Terminator, Path, error) {
	var best *store.Terminator
	var bestPath Path
	any, candidates := false, false
	paths := map[string]*Path{} // by router: nil when none reaches it
	for t := range terminators {
		any = true
		// Without an instance id only terminators without one are
		// candidates, as in OpenZiti: addressable instances are dialed by name.
		if skip[t.ID] || t.Identity != instanceID {
			continue
		}
		candidates = true
		p, seen := paths[t.RouterID]
		if !seen {
			if found, err := g.Shortest(ingress, t.RouterID); err == nil {
				p = &found
			}
			paths[t.RouterID] = p
		}
		if p == nil {
			continue
		}
		rank, cost := precedenceRank(t.Precedence), t.Cost+p.Cost
		if best == nil || rank < precedenceRank(best.Precedence) ||
			(rank == precedenceRank(best.Precedence) && (cost < best.Cost+bestPath.Cost || (cost == best.Cost+bestPath.Cost && t.ID < best.ID))) {
			best, bestPath = t, *p
		}
	}
	switch {
	case best != nil:
		return best, bestPath, nil
	case !any:
		return nil, Path{}, pickError(ErrNoTerminator, "service %s has no terminators: no host is binding it", serviceID)
	case !candidates && instanceID != "":
		return nil, Path{}, pickError(ErrNoTerminator, "service %s has no terminator of instance %q", serviceID, instanceID)
	case !candidates:
		return nil, Path{}, pickError(ErrNoTerminator, "service %s has no terminator left to try", serviceID)
	}
	return nil, Path{}, pickError(ErrNoPath, "service %s has no terminator on a router this edge router has a path to", serviceID)
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

// Terminators lists the terminators of a service in tx, by id.
func Terminators(tx *store.Tx, serviceID string) iter.Seq[*store.Terminator] {
	return func(yield func(*store.Terminator) bool) {
		tx.Each(store.KindTerminator, "service", func(r store.Record) bool {
			return yield(r.(*store.Terminator))
		}, serviceID)
	}
}
