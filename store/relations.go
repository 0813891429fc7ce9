package store

import (
	"fmt"
	"slices"

	"edgectl/policy"

	"github.com/hashicorp/go-memdb"
)

// The prefix queries below pass "" as a last argument: memdb treats the last
// argument of a compound prefix as a string prefix, and "" after the exact
// fields makes the match exact on them.

// Relation names: which policy kind selects which entity kind through which role array.
const (
	RelServicePolicyIdentity      = policy.RelServicePolicyIdentity
	RelServicePolicyService       = policy.RelServicePolicyService
	RelServicePolicyPostureCheck  = policy.RelServicePolicyPostureCheck
	RelEdgeRouterPolicyIdentity   = policy.RelEdgeRouterPolicyIdentity
	RelEdgeRouterPolicyEdgeRouter = policy.RelEdgeRouterPolicyEdgeRouter
	RelSERPService                = policy.RelSERPService
	RelSERPEdgeRouter             = policy.RelSERPEdgeRouter
)

// relation is one role array of a policy kind and the entity kind it selects.
type relation struct {
	name     string
	policy   *Kind
	entity   *Kind
	roles    func(Record) []string
	semantic func(Record) string
	// linked says the resolved set is kept as link rows. Relations over
	// identities are not: a policy may select a hundred thousand of them, and
	// writing a row per link made one policy write cost 0.1 s. Their sets are
	// resolved on demand from the same incrementally kept indexes the links
	// are computed from (refs by role, entities by attribute); see resolve.go.
	linked bool
}

// relations lists every policy→entity relation. Each is answered from
// indexes that every write keeps up to date incrementally (link rows, or refs
// by role and entities by attribute), so a relation list costs the size of its
// answer, not the size of the model.
func relations() []*relation {
	spSem := func(r Record) string { return r.(*ServicePolicy).Semantic }
	erpSem := func(r Record) string { return r.(*EdgeRouterPolicy).Semantic }
	serpSem := func(r Record) string { return r.(*ServiceEdgeRouterPolicy).Semantic }
	rels := []*relation{
		{name: RelServicePolicyIdentity, policy: KindServicePolicy, entity: KindIdentity, roles: func(r Record) []string { return r.(*ServicePolicy).IdentityRoles }, semantic: spSem},
		{name: RelServicePolicyService, policy: KindServicePolicy, entity: KindService, roles: func(r Record) []string { return r.(*ServicePolicy).ServiceRoles }, semantic: spSem},
		{name: RelServicePolicyPostureCheck, policy: KindServicePolicy, entity: KindPostureCheck, roles: func(r Record) []string { return r.(*ServicePolicy).PostureCheckRoles }, semantic: spSem},
		{name: RelEdgeRouterPolicyIdentity, policy: KindEdgeRouterPolicy, entity: KindIdentity, roles: func(r Record) []string { return r.(*EdgeRouterPolicy).IdentityRoles }, semantic: erpSem},
		{name: RelEdgeRouterPolicyEdgeRouter, policy: KindEdgeRouterPolicy, entity: KindEdgeRouter, roles: func(r Record) []string { return r.(*EdgeRouterPolicy).EdgeRouterRoles }, semantic: erpSem},
		{name: RelSERPService, policy: KindServiceEdgeRouterPolicy, entity: KindService, roles: func(r Record) []string { return r.(*ServiceEdgeRouterPolicy).ServiceRoles }, semantic: serpSem},
		{name: RelSERPEdgeRouter, policy: KindServiceEdgeRouterPolicy, entity: KindEdgeRouter, roles: func(r Record) []string { return r.(*ServiceEdgeRouterPolicy).EdgeRouterRoles }, semantic: serpSem},
	}
	for _, rel := range rels {
		rel.linked = rel.entity != KindIdentity
	}
	return rels
}

var allRelations = relations()

var relationsByName = func() map[string]*relation {
	m := map[string]*relation{}
	for _, rel := range allRelations {
		m[rel.name] = rel
	}
	return m
}()

// ref says that policy's role array of relation Rel names Ref (#attr, #all
// or @id). Sel is that role array parsed, so a reader that finds a policy
// through its refs can match an entity without reading and parsing the policy.
type ref struct {
	Rel, Ref, Policy string
	Sel              *policy.Selector
}

// roleCount counts the entities of a kind that carry a role attribute.
type roleCount struct {
	Table, Attr string
	N           int
}

const (
	refsTable  = "refs"
	rolesTable = "roleAttributes"
)

func compound(fields ...string) *memdb.CompoundIndex {
	c := &memdb.CompoundIndex{}
	for _, f := range fields {
		c.Indexes = append(c.Indexes, &stringIndex{field: f})
	}
	return c
}

// relationTables are the derived tables: never in snapshots, rebuilt by every insert.
func relationTables() []*memdb.TableSchema {
	return []*memdb.TableSchema{
		treesSchema(),
		{Name: refsTable, Indexes: map[string]*memdb.IndexSchema{
			"id":     {Name: "id", Unique: true, Indexer: compound("Rel", "Ref", "Policy")},
			"policy": {Name: "policy", Unique: true, Indexer: compound("Rel", "Policy", "Ref")},
		}},
		{Name: rolesTable, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: compound("Table", "Attr")},
		}},
	}
}

// afterChange keeps the derived tables in step with a change of a record of
// kind k: old is nil on insert, upd is nil on delete.
func (tx *Tx) afterChange(k *Kind, old, upd Record) error {
	for _, rel := range allRelations {
		var err error
		switch k {
		case rel.policy:
			err = tx.reindexPolicy(rel, old, upd)
		case rel.entity:
			err = tx.reindexEntity(rel, old, upd)
		}
		if err != nil {
			return err
		}
	}
	r := upd
	if r == nil {
		r = old
	}
	if _, ok := r.(roled); ok {
		if err := tx.countRoles(k, old, upd); err != nil {
			return err
		}
	}
	if tx.changes != nil && k != KindEvent && (k != KindSetting || r.GetID() == SettingDataPlane) {
		// Settings are not entities; the data-plane keys are tracked for
		// the routers' data model (a session key rotation), never as events.
		*tx.changes = append(*tx.changes, Change{Kind: k, Old: old, New: upd})
	}
	tx.noteDelta(k, old, upd)
	return tx.recordChanged(k, old, upd)
}

// roled is a record with role attributes.
type roled interface{ Roles() []string }

func rolesOf(r Record) []string {
	if r == nil {
		return nil
	}
	return r.(roled).Roles()
}

// countRoles keeps the per-kind counts of role attributes in use.
func (tx *Tx) countRoles(k *Kind, old, upd Record) error {
	for _, a := range dedupe(rolesOf(old)) {
		if err := tx.addRole(k, a, -1); err != nil {
			return err
		}
	}
	for _, a := range dedupe(rolesOf(upd)) {
		if err := tx.addRole(k, a, 1); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Tx) addRole(k *Kind, attr string, d int) error {
	tx.pending().roles[roleKey{k.Table, attr}] += d
	return nil
}

// CountWithRole returns the number of records of k that have role attribute
// attr, from the counts the writes keep (countRoles).
func (tx *Tx) CountWithRole(k *Kind, attr string) int {
	n := 0
	if raw, _ := tx.txn.First(rolesTable, "id", k.Table, attr); raw != nil {
		n = raw.(*roleCount).N
	}
	if tx.pend != nil {
		n += tx.pend.roles[roleKey{k.Table, attr}]
	}
	return n
}

// RoleAttributes calls fn with every role attribute in use by records of k,
// in order, as committed (a write transaction's own changes are not seen).
func (tx *Tx) RoleAttributes(k *Kind, fn func(attr string) bool) {
	it, err := tx.txn.Get(rolesTable, "id_prefix", k.Table, "")
	if err != nil {
		return
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if !fn(raw.(*roleCount).Attr) {
			return
		}
	}
}

func dedupe(l []string) []string {
	if len(l) < 2 {
		return l
	}
	seen := make(map[string]struct{}, len(l))
	out := l[:0:0]
	for _, s := range l {
		if _, ok := seen[s]; !ok {
			seen[s] = struct{}{}
			out = append(out, s)
		}
	}
	return out
}

func (rel *relation) selector(p Record) *policy.Selector {
	sel, err := policy.ParseSelector(rel.roles(p), rel.semantic(p))
	if err != nil {
		// Roles are validated before they are proposed; a bad one selects nothing rather than failing Apply.
		return &policy.Selector{}
	}
	return sel
}

// reindexPolicy recomputes the refs of one policy for rel, and its links
// when rel keeps them. Links are diffed, not rewritten, so only real changes
// reach the change tracking.
func (tx *Tx) reindexPolicy(rel *relation, old, upd Record) error {
	var id string
	var oldSel, newSel *policy.Selector
	if old != nil {
		id = old.GetID()
		oldSel = rel.selector(old)
		if _, err := tx.delAll(refsTable, "policy_prefix", rel.name, id, ""); err != nil {
			return fmt.Errorf("store: refs of %s: %w", id, err)
		}
	} else {
		id = upd.GetID()
	}
	if upd != nil {
		newSel = rel.selector(upd)
		for _, r := range dedupe(rel.roles(upd)) {
			if err := tx.put(refsTable, &ref{Rel: rel.name, Ref: r, Policy: id, Sel: newSel}); err != nil {
				return err
			}
		}
	}
	if oldSel != nil && newSel != nil && oldSel.Equal(newSel) {
		return nil
	}
	if !rel.linked {
		return tx.resolvedPolicyChanged(rel, id, oldSel, newSel)
	}
	return tx.reindexLinkedPolicy(rel, id, newSel)
}

// resolvedPolicyChanged tells the change tracking which entities a policy of
// a relation without link rows stopped selecting. Entities it starts to
// select need nothing: the policy's own marker moves.
func (tx *Tx) resolvedPolicyChanged(rel *relation, id string, oldSel, newSel *policy.Selector) error {
	if oldSel == nil || !tracksLinks(rel) {
		return nil
	}
	if rel.name == RelServicePolicyIdentity && tx.selectionBound(rel.entity, oldSel) > tx.s.coarseLoss {
		return tx.identitiesLostCoarsely(rel, oldSel, newSel)
	}
	var lost []string
	tx.selectEntities(rel, oldSel, func(e string) {
		if newSel == nil || !tx.entityMatches(rel, newSel, e) {
			lost = append(lost, e)
		}
	})
	for _, e := range lost {
		if err := tx.linkChanged(rel, id, e, true); err != nil {
			return err
		}
	}
	return nil
}

// selectionBound is at least the number of records of k that sel selects,
// from the counts (the kind's, its role attributes'), without reading them.
func (tx *Tx) selectionBound(k *Kind, sel *policy.Selector) int {
	if sel.All {
		return tx.Count(k)
	}
	n := len(sel.IDs)
	switch {
	case len(sel.Attrs) == 0:
	case sel.Semantic == policy.AnyOf:
		for _, a := range sel.Attrs {
			n += tx.CountWithRole(k, a)
		}
	default:
		_, rarest := tx.rarestRole(k, sel.Attrs)
		n += rarest
	}
	return n
}

// entityMatches reports whether sel selects the entity of rel with this id.
func (tx *Tx) entityMatches(rel *relation, sel *policy.Selector, id string) bool {
	if sel.All {
		return true
	}
	if _, ok := sel.IDs[id]; ok {
		return true
	}
	r, err := tx.Get(rel.entity, id)
	return err == nil && sel.Matches(id, rolesOf(r))
}

// reindexEntity updates the links of one entity for rel (or, for a relation
// without link rows, tells the change tracking what it gained and lost),
// looking only at the policies that name #all, its id, or one of its old or
// new attributes.
func (tx *Tx) reindexEntity(rel *relation, old, upd Record) error {
	var id string
	if upd != nil {
		id = upd.GetID()
	} else {
		id = old.GetID()
	}
	if !rel.linked && (!tracksLinks(rel) || old == nil && tx.at.IsZero()) {
		// No link rows to keep, and nobody to tell: linkChanged only marks
		// (which needs a command time, absent while a snapshot loads) and
		// records lost links (which needs an old record). The candidate
		// lookups below were a fifth of a restart at 300k identities, and
		// ran on every identity write for the edge router policies.
		return nil
	}
	if old != nil && upd != nil && sameSet(rolesOf(old), rolesOf(upd)) {
		// Only the attributes and the id decide what selects an entity.
		return nil
	}
	if upd == nil && rel.linked {
		var policies []string
		tx.EntityPolicies(rel.name, id, func(p string) bool { policies = append(policies, p); return true })
		for _, p := range policies {
			if err := tx.unlink(rel, p, id); err != nil {
				return err
			}
		}
		return nil
	}
	var oldAttrs, newAttrs []string
	if old != nil {
		oldAttrs = rolesOf(old)
	}
	if upd != nil {
		newAttrs = rolesOf(upd)
	}
	for _, r := range tx.candidates(rel, id, oldAttrs, newAttrs) {
		had := old != nil && r.Sel.Matches(id, oldAttrs)
		want := upd != nil && r.Sel.Matches(id, newAttrs)
		if rel.linked {
			had = tx.Linked(rel.name, r.Policy, id)
		}
		var err error
		switch {
		case want && !had && rel.linked:
			err = tx.link(rel, r.Policy, id)
		case !want && had && rel.linked:
			err = tx.unlink(rel, r.Policy, id)
		case want != had && tracksLinks(rel):
			err = tx.linkChanged(rel, r.Policy, id, had)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sameSet reports whether a and b hold the same strings (role arrays are short).
func sameSet(a, b []string) bool {
	return subset(a, b) && subset(b, a)
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// tracksLinks says whether the change tracking is told of this relation's
// links (linkChanged): only service policies change what a client's service
// list shows or which sessions may stay.
func tracksLinks(rel *relation) bool { return rel.policy == KindServicePolicy }

// Relation names a relation and the two kinds it joins.
type Relation struct {
	Name           string
	Policy, Entity *Kind
}

// Relations lists every relation between a policy kind and an entity kind.
func Relations() []Relation {
	out := make([]Relation, len(allRelations))
	for i, r := range allRelations {
		out[i] = Relation{Name: r.name, Policy: r.policy, Entity: r.entity}
	}
	return out
}
