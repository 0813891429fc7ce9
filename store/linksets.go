package store

import (
	"slices"
	"sort"

	"edgectl/policy"
)

// Link rows of the relations that keep them (services, edge routers and
// posture checks: universes of hundreds, not hundreds of thousands).
//
// Each side of a relation keeps one value per record: treeLinks maps
// rel\x00policy\x00 to the sorted ids of the entities the policy selects, and
// treeByEntity maps rel\x00entity\x00 to the sorted ids of the policies that
// select it. A read walks a slice (about a nanosecond an id) instead of a
// radix tree key per link (a few hundred), which matters on the hot paths: a
// session's edge routers are the union of every edge router of a dozen
// policies. The slices are immutable values of the MVCC model: a change
// stores a new slice, never edits one a reader may hold.

// linkSet returns the sorted ids the tree keeps for rel and id.
func (tx *Tx) linkSet(tree, rel, id string) []string {
	v, ok := tx.tree(tree).Get(key(rel, id))
	if !ok {
		return nil
	}
	return v.([]string)
}

// setLinkSet stores ids (sorted, owned by the model from now on) for rel and id.
func (tx *Tx) setLinkSet(tree, rel, id string, ids []string) {
	if len(ids) == 0 {
		tx.sideTxn(tree).Delete(key(rel, id))
		return
	}
	tx.sideTxn(tree).Insert(key(rel, id), ids)
}

// addToLinkSet adds member to the set of rel and id; false if it was there.
func (tx *Tx) addToLinkSet(tree, rel, id, member string) bool {
	old := tx.linkSet(tree, rel, id)
	i, found := slices.BinarySearch(old, member)
	if found {
		return false
	}
	tx.setLinkSet(tree, rel, id, slices.Insert(slices.Clip(old), i, member))
	return true
}

// removeFromLinkSet removes member from the set of rel and id; false if it was not there.
func (tx *Tx) removeFromLinkSet(tree, rel, id, member string) bool {
	old := tx.linkSet(tree, rel, id)
	i, found := slices.BinarySearch(old, member)
	if !found {
		return false
	}
	upd := make([]string, 0, len(old)-1)
	upd = append(append(upd, old[:i]...), old[i+1:]...)
	tx.setLinkSet(tree, rel, id, upd)
	return true
}

// inLinkSet reports whether member is in the set of rel and id.
func (tx *Tx) inLinkSet(tree, rel, id, member string) bool {
	_, found := slices.BinarySearch(tx.linkSet(tree, rel, id), member)
	return found
}

// reindexLinkedPolicy rewrites the links of one policy of a relation that
// keeps them: the policy's set in one value, and the set of every entity it
// gained or lost.
func (tx *Tx) reindexLinkedPolicy(rel *relation, id string, sel *policy.Selector) error {
	have := tx.linkSet(treeLinks, rel.name, id)
	var want []string
	if sel != nil {
		tx.selectEntities(rel, sel, func(e string) { want = append(want, e) })
		sort.Strings(want)
	}
	for _, e := range have {
		if _, keep := slices.BinarySearch(want, e); !keep {
			tx.removeFromLinkSet(treeByEntity, rel.name, e, id)
			if err := tx.linkChanged(rel, id, e, true); err != nil {
				return err
			}
		}
	}
	for _, e := range want {
		if _, had := slices.BinarySearch(have, e); !had {
			// The policy itself changed: its own marker moves, the entity needs none.
			tx.addToLinkSet(treeByEntity, rel.name, e, id)
		}
	}
	tx.setLinkSet(treeLinks, rel.name, id, want)
	return nil
}

// link adds one link and tells the change tracking.
func (tx *Tx) link(rel *relation, policyID, entityID string) error {
	tx.addToLinkSet(treeLinks, rel.name, policyID, entityID)
	tx.addToLinkSet(treeByEntity, rel.name, entityID, policyID)
	return tx.linkChanged(rel, policyID, entityID, false)
}

// unlink removes one link and tells the change tracking.
func (tx *Tx) unlink(rel *relation, policyID, entityID string) error {
	tx.removeFromLinkSet(treeLinks, rel.name, policyID, entityID)
	tx.removeFromLinkSet(treeByEntity, rel.name, entityID, policyID)
	return tx.linkChanged(rel, policyID, entityID, true)
}
