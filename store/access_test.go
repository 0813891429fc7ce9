package store

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// A service policy change that stops selecting more identities than the
// store lists one by one ends the same sessions as one that lists them, and
// moves the change marker of every identity that lost access.
func TestAccess_LargeLossesEndTheSameSessions(t *testing.T) {
	run := func(coarseLoss int) (sessions []string, marked map[string]bool) {
		s := New()
		s.coarseLoss = coarseLoss
		mustWrite(t, s, func(tx *Tx) error {
			tx.SetTime(t0)
			for i := range 10 {
				roles := []string{"b"}
				if i < 5 {
					roles = []string{"a", "b"}
				}
				id := fmt.Sprintf("i%d", i)
				if err := tx.Insert(KindIdentity, &Identity{Base: Base{ID: id}, Named: Named{Name: id}, RoleAttributes: roles}); err != nil {
					return err
				}
			}
			if err := tx.Insert(KindService, &Service{Base: Base{ID: "s1"}, Named: Named{Name: "s1"}}); err != nil {
				return err
			}
			for _, p := range []*ServicePolicy{
				{Base: Base{ID: "all"}, Named: Named{Name: "all"}, Type: "Dial", Semantic: "AnyOf", IdentityRoles: []string{"#all"}, ServiceRoles: []string{"@s1"}},
				{Base: Base{ID: "a"}, Named: Named{Name: "a"}, Type: "Dial", Semantic: "AnyOf", IdentityRoles: []string{"#a"}, ServiceRoles: []string{"@s1"}},
				{Base: Base{ID: "bind"}, Named: Named{Name: "bind"}, Type: "Bind", Semantic: "AllOf", IdentityRoles: []string{"#a", "#b"}, ServiceRoles: []string{"@s1"}},
			} {
				if err := tx.Insert(KindServicePolicy, p); err != nil {
					return err
				}
			}
			for i := range 10 {
				for _, typ := range []string{"Dial", "Bind"} {
					id := fmt.Sprintf("%s-i%d", typ, i)
					if err := tx.Insert(KindSession, &Session{Base: Base{ID: id}, IdentityID: fmt.Sprintf("i%d", i), ServiceID: "s1", Type: typ}); err != nil {
						return err
					}
				}
			}
			return tx.Finish()
		})
		at := t0.Add(time.Minute)
		step := func(fn func(tx *Tx) error) {
			mustWrite(t, s, func(tx *Tx) error {
				at = at.Add(time.Second)
				tx.SetTime(at)
				if err := fn(tx); err != nil {
					return err
				}
				return tx.Finish()
			})
		}
		// #all goes: i5–i9 lose Dial; i0–i4 keep it through #a.
		step(func(tx *Tx) error { return tx.DeletePolicy(KindServicePolicy, "all") })
		// #a becomes @i0: i1–i4 lose Dial.
		step(func(tx *Tx) error {
			return tx.UpdatePolicy(KindServicePolicy, "a", Patch{"identityRoles": []byte(`["@i0"]`)}, at)
		})
		// AllOf #a #b becomes #a #b @i7 in AnyOf: nobody loses Bind.
		step(func(tx *Tx) error {
			return tx.UpdatePolicy(KindServicePolicy, "bind", Patch{"identityRoles": []byte(`["#a", "@i7"]`), "semantic": []byte(`"AnyOf"`)}, at)
		})
		tx := s.Read()
		tx.Each(KindSession, "id", func(r Record) bool { sessions = append(sessions, r.GetID()); return true })
		slices.Sort(sessions)
		marked = map[string]bool{}
		tx.Each(KindIdentity, "id", func(r Record) bool {
			marked[r.GetID()] = tx.LastServiceChange(r.(*Identity)).After(t0.Add(time.Minute))
			return true
		})
		return sessions, marked
	}
	listed, listedMarks := run(defaultCoarseLoss)
	coarse, coarseMarks := run(0)
	// A change checks every session of an (identity, service) pair that
	// lost a link: i5–i9's Bind sessions, never granted, go with their Dial.
	want := []string{"Bind-i0", "Bind-i1", "Bind-i2", "Bind-i3", "Bind-i4", "Dial-i0"}
	if !slices.Equal(listed, want) {
		t.Fatalf("sessions after the changes, identities listed: %v, want %v", listed, want)
	}
	if !slices.Equal(coarse, listed) {
		t.Fatalf("sessions after the changes, selector terms marked: %v, listed: %v", coarse, listed)
	}
	for id, m := range listedMarks {
		if m && !coarseMarks[id] {
			t.Errorf("%s: marker moved when listed, not when the selector terms were marked", id)
		}
	}
	for i := range 10 {
		if id := fmt.Sprintf("i%d", i); !coarseMarks[id] {
			t.Errorf("%s lost Dial but its marker did not move", id)
		}
	}
}

// The record and role attribute counts a write transaction changes are
// written at Commit; reads inside it already see them, and an abort drops
// them.
func TestCounts_AWriteTransactionReadsItsOwnChanges(t *testing.T) {
	t.Parallel()
	s := New()
	ident := func(id string, roles ...string) *Identity {
		return &Identity{Base: Base{ID: id}, Named: Named{Name: id}, RoleAttributes: roles}
	}
	check := func(tx *Tx, when string, n, a, b int) {
		t.Helper()
		if got := [3]int{tx.Count(KindIdentity), tx.CountWithRole(KindIdentity, "a"), tx.CountWithRole(KindIdentity, "b")}; got != [3]int{n, a, b} {
			t.Fatalf("%s: identities, with a, with b = %v, want %v", when, got, [3]int{n, a, b})
		}
	}
	tx := s.Write()
	for _, i := range []*Identity{ident("1", "a", "b"), ident("2", "a"), ident("3", "b", "b")} {
		if err := tx.Insert(KindIdentity, i); err != nil {
			t.Fatal(err)
		}
	}
	check(tx, "three inserted, not committed", 3, 2, 2)
	if err := tx.Remove(KindIdentity, "1"); err != nil {
		t.Fatal(err)
	}
	check(tx, "one removed", 2, 1, 1)
	tx.Commit()
	check(s.Read(), "committed", 2, 1, 1)
	var attrs []string
	s.Read().RoleAttributes(KindIdentity, func(a string) bool { attrs = append(attrs, a); return true })
	if !slices.Equal(attrs, []string{"a", "b"}) {
		t.Fatalf("role attributes in use %v", attrs)
	}

	tx = s.Write()
	if err := tx.Insert(KindIdentity, ident("4", "a")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Remove(KindIdentity, "3"); err != nil {
		t.Fatal(err)
	}
	check(tx, "one in, one out", 2, 2, 0)
	tx.Abort()
	check(s.Read(), "aborted", 2, 1, 1)

	mustWrite(t, s, func(tx *Tx) error { return tx.Remove(KindIdentity, "3") })
	attrs = nil
	s.Read().RoleAttributes(KindIdentity, func(a string) bool { attrs = append(attrs, a); return true })
	if !slices.Equal(attrs, []string{"a"}) {
		t.Fatalf("role attributes in use after the last b went: %v", attrs)
	}
}

// Sessions ended by one command are removed in the same order on every
// node: the FSM numbers the events of the removals in that order.
func TestAccess_SessionsEndInAFixedOrder(t *testing.T) {
	t.Parallel()
	order := func() []string {
		s := New()
		mustWrite(t, s, func(tx *Tx) error {
			tx.SetTime(t0)
			for _, sv := range []string{"s1", "s2"} {
				if err := tx.Insert(KindService, &Service{Base: Base{ID: sv}, Named: Named{Name: sv}}); err != nil {
					return err
				}
			}
			if err := tx.Insert(KindServicePolicy, &ServicePolicy{Base: Base{ID: "p"}, Named: Named{Name: "p"}, Type: "Dial",
				Semantic: "AnyOf", IdentityRoles: []string{"#all"}, ServiceRoles: []string{"@s1", "@s2"}}); err != nil {
				return err
			}
			for i := range 12 {
				id := fmt.Sprintf("i%02d", (i*7)%12)
				if err := tx.Insert(KindIdentity, &Identity{Base: Base{ID: id}, Named: Named{Name: id}}); err != nil {
					return err
				}
				for _, sv := range []string{"s2", "s1"} {
					if err := tx.Insert(KindSession, &Session{Base: Base{ID: id + "-" + sv}, IdentityID: id, ServiceID: sv, Type: "Dial"}); err != nil {
						return err
					}
				}
			}
			return tx.Finish()
		})
		tx := s.Write()
		defer tx.Abort()
		tx.SetTime(t0.Add(time.Second))
		tx.TrackChanges(true)
		if err := tx.DeletePolicy(KindServicePolicy, "p"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Finish(); err != nil {
			t.Fatal(err)
		}
		var ended []string
		for _, ch := range tx.Changes() {
			if ch.Kind == KindSession && ch.New == nil {
				ended = append(ended, ch.Old.GetID())
			}
		}
		return ended
	}
	first := order()
	if len(first) != 24 || !slices.IsSorted(first) {
		t.Fatalf("sessions ended: %v, want all 24 by identity then service", first)
	}
	for range 10 {
		if again := order(); !slices.Equal(again, first) {
			t.Fatalf("sessions ended in another order: %v, then %v", first, again)
		}
	}
}
