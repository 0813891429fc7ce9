package store

import (
	"fmt"
	"sort"
)

// Finding is one integrity problem, and whether a fix repaired it.
type Finding struct {
	Description string `json:"description"`
	Fixed       bool   `json:"fixed"`
}

// ref checks of records that point at an identity.
var identityDependents = []*Kind{KindAuthenticator, KindEnrollment, KindAPISession}

// CheckIntegrity scans the model for broken references, derived tables out of
// step with the records, and wrong counts. With fix, it repairs what it can in
// this (write) transaction: dangling dependents are removed, links, role
// counts and record counts are rebuilt. It is deterministic, so a fix can run
// inside Apply on every node alike.
func (tx *Tx) CheckIntegrity(fix bool, max int) ([]Finding, error) {
	var out []Finding
	add := func(fixed bool, format string, args ...any) bool {
		out = append(out, Finding{Description: fmt.Sprintf(format, args...), Fixed: fixed})
		return max <= 0 || len(out) < max
	}
	// Records that reference a missing identity.
	for _, k := range identityDependents {
		var dangling []string
		tx.Each(k, "id", func(r Record) bool {
			id := identityOf(r)
			if !tx.Exists(KindIdentity, id) {
				dangling = append(dangling, r.GetID())
			}
			return true
		})
		for _, id := range dangling {
			fixed := false
			if fix {
				if err := tx.Remove(k, id); err != nil {
					return out, err
				}
				fixed = true
			}
			if !add(fixed, "%s %s references missing identity", k.Entity, id) {
				return out, nil
			}
		}
	}
	// Identities whose type or auth policy is gone.
	tx.Each(KindIdentity, "id", func(r Record) bool {
		i := r.(*Identity)
		if !tx.Exists(KindIdentityType, i.TypeID) {
			if !add(false, "identity %s has unknown type %q", i.ID, i.TypeID) {
				return false
			}
		}
		if !tx.Exists(KindAuthPolicy, i.AuthPolicyID) {
			if !add(false, "identity %s has unknown auth policy %q", i.ID, i.AuthPolicyID) {
				return false
			}
		}
		return true
	})
	// Derived tables and counts.
	if problems := tx.checkDerived(); len(problems) > 0 {
		for _, p := range problems {
			if !add(fix, "%s", p) {
				break
			}
		}
		if fix {
			if err := tx.rebuildDerived(); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

func identityOf(r Record) string {
	switch x := r.(type) {
	case *Authenticator:
		return x.IdentityID
	case *Enrollment:
		return x.IdentityID
	case *APISession:
		return x.IdentityID
	}
	return ""
}

// checkDerived compares the refs, links, role counts and record counts with
// what the records say they should be.
func (tx *Tx) checkDerived() []string {
	var problems []string
	for _, rel := range allRelations {
		problems = append(problems, tx.checkRefs(rel)...)
		if !rel.linked {
			continue
		}
		want := map[string]bool{}
		tx.Each(rel.policy, "id", func(p Record) bool {
			tx.selectEntities(rel, rel.selector(p), func(e string) { want[p.GetID()+"\x00"+e] = true })
			return true
		})
		have := map[string]bool{}
		tx.Each(rel.policy, "id", func(p Record) bool {
			tx.PolicyEntities(rel.name, p.GetID(), func(e string) bool { have[p.GetID()+"\x00"+e] = true; return true })
			return true
		})
		problems = append(problems, diffSets("relation "+rel.name, "link", want, have)...)
		byEntity := map[string]bool{}
		tx.Each(rel.entity, "id", func(e Record) bool {
			tx.EntityPolicies(rel.name, e.GetID(), func(p string) bool { byEntity[p+"\x00"+e.GetID()] = true; return true })
			return true
		})
		problems = append(problems, diffSets("relation "+rel.name+" by entity", "link", want, byEntity)...)
	}
	for _, k := range AllKinds {
		n := 0
		tx.Each(k, "id", func(Record) bool { n++; return true })
		if n != tx.Count(k) {
			problems = append(problems, fmt.Sprintf("count of %s is %d, the table holds %d", k.Table, tx.Count(k), n))
		}
	}
	sort.Strings(problems)
	return problems
}

// checkRefs compares the refs of rel (role entry → policy, with the parsed
// selector) with the policies' role arrays.
func (tx *Tx) checkRefs(rel *relation) []string {
	want := map[string]bool{}
	tx.Each(rel.policy, "id", func(p Record) bool {
		for _, r := range rel.roles(p) {
			want[r+"\x00"+p.GetID()] = true
		}
		return true
	})
	have := map[string]bool{}
	var problems []string
	if it, err := tx.txn.Get(refsTable, "id_prefix", rel.name, ""); err == nil {
		for raw := it.Next(); raw != nil; raw = it.Next() {
			r := raw.(*ref)
			have[r.Ref+"\x00"+r.Policy] = true
			if p, err := tx.Get(rel.policy, r.Policy); err == nil && (r.Sel == nil || !r.Sel.Equal(rel.selector(p))) {
				problems = append(problems, fmt.Sprintf("relation %s has a stale selector for policy %s", rel.name, r.Policy))
			}
		}
	}
	return append(problems, diffSets("relation "+rel.name, "ref", want, have)...)
}

// diffSets describes what want has that have lacks and the other way round.
func diffSets(what, item string, want, have map[string]bool) []string {
	var problems []string
	for k := range want {
		if !have[k] {
			problems = append(problems, fmt.Sprintf("%s is missing %s %q", what, item, k))
		}
	}
	for k := range have {
		if !want[k] {
			problems = append(problems, fmt.Sprintf("%s has stale %s %q", what, item, k))
		}
	}
	return problems
}

// rebuildDerived recomputes every derived table and count from the records.
func (tx *Tx) rebuildDerived() error {
	tx.pend = nil // the counts are recomputed below; changes summed before are in them
	// Generations only move forward: a list order cached for one of them
	// (sorted.go) must never be taken for a later view's.
	gens := map[*Kind]uint64{}
	for _, k := range AllKinds {
		gens[k] = tx.gen(k)
	}
	tx.resetTree(treeLinks)
	tx.resetTree(treeByEntity)
	for _, t := range []string{refsTable, rolesTable, countsTable} {
		if _, err := tx.delAll(t, "id"); err != nil {
			return err
		}
	}
	for _, k := range AllKinds {
		var recs []Record
		tx.Each(k, "id", func(r Record) bool { recs = append(recs, r); return true })
		for _, r := range recs {
			if err := tx.afterChange(k, nil, r); err != nil {
				return err
			}
		}
		if k == KindEvent {
			continue // counted from the sequence numbers
		}
		if err := tx.put(countsTable, &count{Table: k.Table, N: len(recs), Gen: gens[k] + 1}); err != nil {
			return err
		}
	}
	return nil
}
