package path

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"edgectl/store"
)

// pickReference is Pick as it was before the store's pick index: every
// terminator of the service read and weighed. Pick must choose as it does.
func pickReference(g *Graph, terminators iter.Seq[*store.Terminator], serviceID, ingress, instanceID string, skip map[string]bool) (*store.Terminator, Path, error) {
	var best *store.Terminator
	var bestPath Path
	any, candidates := false, false
	paths := map[string]*Path{}
	for t := range terminators {
		any = true
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
		rank, cost := store.PrecedenceRank(t.Precedence), t.Cost+p.Cost
		if best == nil || rank < store.PrecedenceRank(best.Precedence) ||
			(rank == store.PrecedenceRank(best.Precedence) && (cost < best.Cost+bestPath.Cost || (cost == best.Cost+bestPath.Cost && t.ID < best.ID))) {
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

// keptTerminators lists the terminators of a service that keep takes, by id.
func keptTerminators(tx *store.Tx, serviceID string, keep func(*store.Terminator) bool) iter.Seq[*store.Terminator] {
	return func(yield func(*store.Terminator) bool) {
		tx.Each(store.KindTerminator, "service", func(r store.Record) bool {
			t := r.(*store.Terminator)
			return (keep != nil && !keep(t)) || yield(t)
		}, serviceID)
	}
}

// TestPick_ChoosesAsTheReferenceOverRandomNetworks: over random graphs
// and terminators (made, changed and removed through the store, so its
// index follows every write), with random skip sets, filters, ingresses
// and instance ids, Pick answers exactly what reading every terminator
// answers: the same terminator and path, or the same error and cause.
func TestPick_ChoosesAsTheReferenceOverRandomNetworks(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 4))
	routers := []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	precedences := []string{"", "default", "required", "failed"}
	instances := []string{"", "", "h1", "h2"}
	services := []string{"svc", "svc", "other"}
	outcomes := map[string]int{} // how the picks ended, to show the cases reach each
	for round := range 300 {
		// A graph over some of the routers (the others are not connected),
		// with random links and router costs.
		costs := map[string]int{}
		for _, r := range routers {
			if rng.IntN(5) > 0 {
				costs[r] = rng.IntN(4)
			}
		}
		var links []testLink
		for i := range rng.IntN(12) {
			links = append(links, testLink{fmt.Sprintf("l%d", i), pick(routers), pick(routers), rng.IntN(10)})
		}
		g := testGraph(costs, nil, links...)

		s := store.New()
		tx := s.Write()
		var ids []string
		for i := range rng.IntN(40) {
			id := fmt.Sprintf("t%02d", rng.IntN(60))
			if tx.Exists(store.KindTerminator, id) {
				continue
			}
			term := &store.Terminator{Base: store.Base{ID: id, CreatedAt: time.Unix(int64(i), 0), UpdatedAt: time.Unix(int64(i), 0)},
				ServiceID: pick(services), RouterID: pick(append(routers, "gone")), Identity: pick(instances),
				Cost: rng.IntN(12) - 1, Precedence: pick(precedences), Binding: "edge", Address: id}
			if err := tx.Insert(store.KindTerminator, term); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		// Change and remove some, as routers and admins do.
		for _, id := range ids {
			switch rng.IntN(4) {
			case 0:
				old, err := store.GetAs[*store.Terminator](tx, store.KindTerminator, id)
				if err != nil {
					t.Fatal(err)
				}
				n := *old
				n.Cost, n.Precedence = rng.IntN(12), pick(precedences)
				if err := tx.Replace(store.KindTerminator, &n); err != nil {
					t.Fatal(err)
				}
			case 1:
				if err := tx.Remove(store.KindTerminator, id); err != nil {
					t.Fatal(err)
				}
			}
		}
		tx.Commit()
		read := s.Read()

		for range 10 {
			skip := map[string]bool{}
			dropped := map[string]bool{}
			for _, id := range ids {
				if rng.IntN(4) == 0 {
					skip[id] = true
				}
				if rng.IntN(4) == 0 {
					dropped[id] = true
				}
			}
			var keep func(*store.Terminator) bool
			if rng.IntN(2) == 0 {
				keep = func(t *store.Terminator) bool { return !dropped[t.ID] }
			}
			svc, ingress, inst := pick(services), pick(append(routers, "gone")), pick(instances)
			got, gotPath, gotErr := Pick(g, read, svc, ingress, inst, skip, keep)
			want, wantPath, wantErr := pickReference(g, keptTerminators(read, svc, keep), svc, ingress, inst, skip)
			switch {
			case want != nil:
				outcomes["picked"]++
			case errors.Is(wantErr, ErrNoPath):
				outcomes["no path"]++
			default:
				outcomes["no terminator"]++
			}
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || errors.Is(gotErr, ErrNoPath) != errors.Is(wantErr, ErrNoPath) ||
				errors.Is(gotErr, ErrNoTerminator) != errors.Is(wantErr, ErrNoTerminator) {
				t.Fatalf("round %d: Pick(%s, %s, %q) error %v, the reference's %v", round, svc, ingress, inst, gotErr, wantErr)
			}
			if (got == nil) != (want == nil) || (got != nil && got.ID != want.ID) || !reflect.DeepEqual(gotPath, wantPath) {
				t.Fatalf("round %d: Pick(%s, %s, %q) = %v over %+v, the reference %v over %+v", round, svc, ingress, inst, got, gotPath, want, wantPath)
			}
		}
	}
	t.Logf("random picks ended %v", outcomes)
	// The random cases reach every outcome: picks and each kind of refusal.
	for _, o := range []string{"picked", "no path", "no terminator"} {
		if outcomes[o] < 100 {
			t.Fatalf("random picks ended %v: too few %q", outcomes, o)
		}
	}
}
