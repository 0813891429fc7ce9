package store

import (
	"slices"
	"sort"

	"edgectl/policy"
)

// Reading the resolved sets of policies.
//
// A relation with link rows (rel.linked) answers from its two side trees
// (linksets.go). A
// relation over identities has no link rows: one policy may select a hundred
// thousand identities, and a row per link made a policy write cost in
// proportion to that (and the model's heap about 1 KiB per link). Its sets
// are resolved on demand from two indexes that every write keeps up to date:
//
//   - refs: role entry (#attr, @id, #all) → the policies whose role array
//     names it, each with its parsed selector;
//   - the entity table's role index: attribute → the entities that carry it.
//
// The policies that select an entity are the candidates its refs give (a
// few, however large the model), each matched against the entity's
// attributes; the entities a policy selects are read from the role index of
// one attribute (AllOf) or each attribute (AnyOf). Both cost the size of the
// answer, as a link-row read does.

// Linked reports whether the policy selects the entity in rel.
func (tx *Tx) Linked(relName, policyID, entityID string) bool {
	rel := relationsByName[relName]
	if rel == nil {
		return false
	}
	if rel.linked {
		return tx.inLinkSet(treeLinks, relName, policyID, entityID)
	}
	sel := tx.policySelector(rel, policyID)
	return sel != nil && tx.entityMatches(rel, sel, entityID)
}

// PolicyEntities calls fn with the ids of the entities the policy selects in
// rel: in id order for relations with link rows, in no set order otherwise.
func (tx *Tx) PolicyEntities(relName, policyID string, fn func(entityID string) bool) {
	rel := relationsByName[relName]
	if rel == nil {
		return
	}
	if rel.linked {
		for _, e := range tx.linkSet(treeLinks, relName, policyID) {
			if !fn(e) {
				return
			}
		}
		return
	}
	sel := tx.policySelector(rel, policyID)
	if sel == nil {
		return
	}
	stopped := false
	tx.selectEntitiesWhile(rel, sel, func(id string) bool {
		stopped = !fn(id)
		return !stopped
	})
}

// PolicySet returns the ids of the entities the policy selects in rel,
// sorted. The slice may be the model's own: the caller must not modify it.
func (tx *Tx) PolicySet(relName, policyID string) []string {
	if rel := relationsByName[relName]; rel != nil && rel.linked {
		return tx.linkSet(treeLinks, relName, policyID)
	}
	var out []string
	tx.PolicyEntities(relName, policyID, func(e string) bool { out = append(out, e); return true })
	sort.Strings(out)
	return out
}

// EntityPolicies calls fn with the ids of the policies that select the
// entity in rel, in id order.
func (tx *Tx) EntityPolicies(relName, entityID string, fn func(policyID string) bool) {
	rel := relationsByName[relName]
	if rel == nil {
		return
	}
	if rel.linked {
		for _, p := range tx.linkSet(treeByEntity, relName, entityID) {
			if !fn(p) {
				return
			}
		}
		return
	}
	r, err := tx.Get(rel.entity, entityID)
	if err != nil {
		return
	}
	attrs := rolesOf(r)
	for _, c := range tx.candidates(rel, entityID, attrs, nil) {
		if c.Sel.Matches(entityID, attrs) && !fn(c.Policy) {
			return
		}
	}
}

// candidates returns one ref per policy of rel that names #all, the entity's
// id or one of the given attributes, in policy id order: the only policies
// that can select the entity.
func (tx *Tx) candidates(rel *relation, entityID string, attrs, more []string) []*ref {
	if tx.noRefs(rel) {
		return nil
	}
	var out []*ref
	add := func(entry string) {
		it, err := tx.txn.Get(refsTable, "id_prefix", rel.name, entry, "")
		if err != nil {
			return
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			out = append(out, raw.(*ref))
		}
	}
	add("#all")
	add("@" + entityID)
	for _, a := range attrs {
		add("#" + a)
	}
	for _, a := range more {
		if !slices.Contains(attrs, a) {
			add("#" + a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Policy < out[j].Policy })
	uniq := out[:0]
	for i, r := range out {
		if i == 0 || r.Policy != out[i-1].Policy {
			uniq = append(uniq, r)
		}
	}
	return uniq
}

// noRefs reports whether no policy names anything in rel: then no entity
// write has candidates to look up. Asked once per transaction (an FSM batch
// of creates) rather than twice per entity, until the refs table changes;
// the lookups were 3% of three nodes' CPU creating identities (issue 45).
func (tx *Tx) noRefs(rel *relation) bool {
	if none, ok := tx.refsNone[rel]; ok {
		return none
	}
	raw, err := tx.txn.First(refsTable, "id_prefix", rel.name, "")
	none := err == nil && raw == nil
	if tx.refsNone == nil {
		tx.refsNone = make(map[*relation]bool, len(allRelations))
	}
	tx.refsNone[rel] = none
	return none
}

// policySelector returns the parsed role array of a policy for rel, nil if
// the policy does not exist or names nothing in it.
func (tx *Tx) policySelector(rel *relation, policyID string) *policy.Selector {
	raw, err := tx.txn.First(refsTable, "policy_prefix", rel.name, policyID, "")
	if err != nil || raw == nil {
		return nil
	}
	return raw.(*ref).Sel
}

// SelectionLost returns the entities of relation relName that policy record
// old selected and upd (nil: the policy went) does not select, sorted: what
// a change of the policy's roles took out of it.
func (tx *Tx) SelectionLost(relName string, old, upd Record) []string {
	rel := relationsByName[relName]
	if rel == nil || old == nil {
		return nil
	}
	oldSel := rel.selector(old)
	var newSel *policy.Selector
	if upd != nil {
		newSel = rel.selector(upd)
		if oldSel.Equal(newSel) {
			return nil
		}
	}
	var lost []string
	tx.selectEntities(rel, oldSel, func(e string) {
		if newSel == nil || !tx.entityMatches(rel, newSel, e) {
			lost = append(lost, e)
		}
	})
	sort.Strings(lost)
	return lost
}

// selectEntities calls fn once for every entity sel selects.
func (tx *Tx) selectEntities(rel *relation, sel *policy.Selector, fn func(id string)) {
	tx.selectEntitiesWhile(rel, sel, func(id string) bool { fn(id); return true })
}

// selectEntitiesWhile calls fn once for every entity sel selects, until fn
// returns false, reading only the entities that carry one of its attributes
// (or all, for #all).
func (tx *Tx) selectEntitiesWhile(rel *relation, sel *policy.Selector, fn func(id string) bool) {
	var seen map[string]struct{}
	// An entity is read more than once only when it is named by @id and
	// carries an attribute, or carries several attributes of an AnyOf.
	if len(sel.IDs) > 0 || (sel.Semantic == policy.AnyOf && len(sel.Attrs) > 1) {
		seen = map[string]struct{}{}
	}
	more := true
	emit := func(r Record) bool {
		id := r.GetID()
		if seen != nil {
			if _, dup := seen[id]; dup {
				return true
			}
		}
		if !sel.Matches(id, rolesOf(r)) {
			return true
		}
		if seen != nil {
			seen[id] = struct{}{}
		}
		more = fn(id)
		return more
	}
	if sel.All {
		tx.Each(rel.entity, "id", emit)
		return
	}
	ids := make([]string, 0, len(sel.IDs))
	for id := range sel.IDs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if r, err := tx.Get(rel.entity, id); err == nil && !emit(r) {
			return
		}
	}
	attrs := sel.Attrs
	if sel.Semantic != policy.AnyOf && len(attrs) > 0 {
		// AllOf: every match carries each attribute; read only the
		// entities of the rarest one.
		rarest, _ := tx.rarestRole(rel.entity, attrs)
		attrs = []string{rarest}
	}
	for _, a := range attrs {
		if tx.EachWithRole(rel.entity, a, emit); !more {
			return
		}
	}
}

// rarestRole returns the attribute of attrs that the fewest records of k
// carry, and how many carry it.
func (tx *Tx) rarestRole(k *Kind, attrs []string) (string, int) {
	best, bestN := attrs[0], -1
	for _, a := range attrs {
		if n := tx.CountWithRole(k, a); bestN < 0 || n < bestN {
			best, bestN = a, n
		}
	}
	return best, bestN
}

// SelectionChange lists the policies of rel that, as they are now, select
// entity id with newAttrs but not with oldAttrs (added) and the reverse
// (removed); a nil attrs slice with existed or exists false stands for an
// entity that did not exist before or does not exist now. It answers which
// policies an entity's create, delete or attribute change moved it in or
// out of, for those who follow changes (the routers' data model).
func (tx *Tx) SelectionChange(relName, id string, oldAttrs, newAttrs []string, existed, exists bool) (added, removed []string) {
	rel := relationsByName[relName]
	if rel == nil {
		return nil, nil
	}
	for _, c := range tx.candidates(rel, id, oldAttrs, newAttrs) {
		had := existed && c.Sel.Matches(id, oldAttrs)
		has := exists && c.Sel.Matches(id, newAttrs)
		switch {
		case has && !had:
			added = append(added, c.Policy)
		case had && !has:
			removed = append(removed, c.Policy)
		}
	}
	return added, removed
}
