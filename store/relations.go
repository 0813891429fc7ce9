package store

import (
	"fmt"

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
}

// relations lists every policy→entity relation. The resolved sets of all of
// them are kept as link rows, updated incrementally by every write, so a
// relation list costs the size of its answer, not the size of the model.
func relations() []*relation {
	spSem := func(r Record) string { return r.(*ServicePolicy).Semantic }
	erpSem := func(r Record) string { return r.(*EdgeRouterPolicy).Semantic }
	serpSem := func(r Record) string { return r.(*ServiceEdgeRouterPolicy).Semantic }
	return []*relation{
		{RelServicePolicyIdentity, KindServicePolicy, KindIdentity, func(r Record) []string { return r.(*ServicePolicy).IdentityRoles }, spSem},
		{RelServicePolicyService, KindServicePolicy, KindService, func(r Record) []string { return r.(*ServicePolicy).ServiceRoles }, spSem},
		{RelServicePolicyPostureCheck, KindServicePolicy, KindPostureCheck, func(r Record) []string { return r.(*ServicePolicy).PostureCheckRoles }, spSem},
		{RelEdgeRouterPolicyIdentity, KindEdgeRouterPolicy, KindIdentity, func(r Record) []string { return r.(*EdgeRouterPolicy).IdentityRoles }, erpSem},
		{RelEdgeRouterPolicyEdgeRouter, KindEdgeRouterPolicy, KindEdgeRouter, func(r Record) []string { return r.(*EdgeRouterPolicy).EdgeRouterRoles }, erpSem},
		{RelSERPService, KindServiceEdgeRouterPolicy, KindService, func(r Record) []string { return r.(*ServiceEdgeRouterPolicy).ServiceRoles }, serpSem},
		{RelSERPEdgeRouter, KindServiceEdgeRouterPolicy, KindEdgeRouter, func(r Record) []string { return r.(*ServiceEdgeRouterPolicy).EdgeRouterRoles }, serpSem},
	}
}

var allRelations = relations()

// ref says that policy's role array of relation Rel names Ref (#attr, #all or @id).
type ref struct {
	Rel, Ref, Policy string
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
	if _, ok := k.New().(roled); ok {
		if err := tx.countRoles(k, old, upd); err != nil {
			return err
		}
	}
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
	n := 0
	if raw, _ := tx.txn.First(rolesTable, "id", k.Table, attr); raw != nil {
		n = raw.(*roleCount).N
	}
	n += d
	if n <= 0 {
		_, err := tx.txn.DeleteAll(rolesTable, "id", k.Table, attr)
		return err
	}
	return tx.txn.Insert(rolesTable, &roleCount{Table: k.Table, Attr: attr, N: n})
}

// RoleAttributes calls fn with every role attribute in use by records of k, in order.
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

// reindexPolicy recomputes the refs and links of one policy for rel. Links
// are diffed, not rewritten, so only real changes reach the change tracking.
func (tx *Tx) reindexPolicy(rel *relation, old, upd Record) error {
	var id string
	if old != nil {
		id = old.GetID()
		if _, err := tx.txn.DeleteAll(refsTable, "policy_prefix", rel.name, id, ""); err != nil {
			return fmt.Errorf("store: refs of %s: %w", id, err)
		}
	} else {
		id = upd.GetID()
	}
	have := map[string]struct{}{}
	if old != nil {
		tx.PolicyEntities(rel.name, id, func(e string) bool { have[e] = struct{}{}; return true })
	}
	want := map[string]struct{}{}
	if upd != nil {
		for _, r := range dedupe(rel.roles(upd)) {
			if err := tx.txn.Insert(refsTable, &ref{Rel: rel.name, Ref: r, Policy: id}); err != nil {
				return err
			}
		}
		tx.selectEntities(rel, rel.selector(upd), func(entity string) { want[entity] = struct{}{} })
	}
	for e := range have {
		if _, keep := want[e]; !keep {
			if err := tx.unlink(rel, id, e); err != nil {
				return err
			}
		}
	}
	for e := range want {
		if _, had := have[e]; !had {
			if err := tx.link(rel, id, e, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// link adds a link and tells the change tracking. byPolicy says the policy
// itself changed (its own marker moves), so the entity needs no marker of its own.
func (tx *Tx) link(rel *relation, policyID, entityID string, byPolicy bool) error {
	tx.sideTxn(treeLinks).Insert(key(rel.name, policyID, entityID), nil)
	tx.sideTxn(treeByEntity).Insert(key(rel.name, entityID, policyID), nil)
	if byPolicy {
		return nil
	}
	return tx.linkChanged(rel, policyID, entityID, false)
}

// unlink removes a link and tells the change tracking.
func (tx *Tx) unlink(rel *relation, policyID, entityID string) error {
	tx.sideTxn(treeLinks).Delete(key(rel.name, policyID, entityID))
	tx.sideTxn(treeByEntity).Delete(key(rel.name, entityID, policyID))
	return tx.linkChanged(rel, policyID, entityID, true)
}

// selectEntities calls fn once for every entity sel selects, reading only
// the entities that carry one of its attributes (or all, for #all).
func (tx *Tx) selectEntities(rel *relation, sel *policy.Selector, fn func(id string)) {
	seen := map[string]struct{}{}
	emit := func(r Record) bool {
		id := r.GetID()
		if _, dup := seen[id]; !dup && sel.Matches(id, rolesOf(r)) {
			seen[id] = struct{}{}
			fn(id)
		}
		return true
	}
	if sel.All {
		tx.Each(rel.entity, "id", emit)
		return
	}
	for id := range sel.IDs {
		if r, err := tx.Get(rel.entity, id); err == nil {
			emit(r)
		}
	}
	attrs := sel.Attrs
	if sel.Semantic != policy.AnyOf && len(attrs) > 0 {
		// AllOf: every match carries the first attribute; read only those.
		attrs = attrs[:1]
	}
	for _, a := range attrs {
		tx.Each(rel.entity, "roles", emit, a)
	}
}

// reindexEntity updates the links of one entity for rel, looking only at the
// policies that name #all, its id, or one of its old or new attributes.
func (tx *Tx) reindexEntity(rel *relation, old, upd Record) error {
	var id string
	if upd != nil {
		id = upd.GetID()
	} else {
		id = old.GetID()
	}
	if upd == nil {
		var policies []string
		tx.EntityPolicies(rel.name, id, func(p string) bool { policies = append(policies, p); return true })
		for _, p := range policies {
			if err := tx.unlink(rel, p, id); err != nil {
				return err
			}
		}
		return nil
	}
	candidates := map[string]struct{}{}
	addRefs := func(r string) {
		it, err := tx.txn.Get(refsTable, "id_prefix", rel.name, r, "")
		if err != nil {
			return
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			candidates[raw.(*ref).Policy] = struct{}{}
		}
	}
	addRefs("#all")
	addRefs("@" + id)
	for _, a := range rolesOf(old) {
		addRefs("#" + a)
	}
	for _, a := range rolesOf(upd) {
		addRefs("#" + a)
	}
	attrs := rolesOf(upd)
	for pid := range candidates {
		p, err := tx.Get(rel.policy, pid)
		if err != nil {
			continue
		}
		want := rel.selector(p).Matches(id, attrs)
		has := tx.Linked(rel.name, pid, id)
		switch {
		case want && !has:
			err = tx.link(rel, pid, id, false)
		case !want && has:
			err = tx.unlink(rel, pid, id)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Linked reports whether the policy selects the entity in rel.
func (tx *Tx) Linked(rel, policyID, entityID string) bool {
	_, ok := tx.tree(treeLinks).Get(key(rel, policyID, entityID))
	return ok
}

// PolicyEntities calls fn with the ids of the entities the policy selects in rel.
func (tx *Tx) PolicyEntities(rel, policyID string, fn func(entityID string) bool) {
	eachSuffix(tx.tree(treeLinks), key(rel, policyID), fn)
}

// EntityPolicies calls fn with the ids of the policies that select the entity in rel.
func (tx *Tx) EntityPolicies(rel, entityID string, fn func(policyID string) bool) {
	eachSuffix(tx.tree(treeByEntity), key(rel, entityID), fn)
}
