package store

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// policyRefs checks that every @id entry of a policy's role arrays names an
// existing entity, so a policy can never select something that is not there
// when it is written. On an update (old != nil) only the entries the policy
// did not already have are checked: an entry whose entity has since been
// deleted must not make every later PUT or PATCH of the policy fail.
func (tx *Tx) policyRefs(k *Kind, p, old Record) error {
	for _, rel := range allRelations {
		if rel.policy != k {
			continue
		}
		field := rel.name[strings.Index(rel.name, ".")+1:] + "Roles"
		var had []string
		if old != nil {
			had = rel.roles(old)
		}
		for i, r := range rel.roles(p) {
			if strings.HasPrefix(r, "@") && !slices.Contains(had, r) && !tx.Exists(rel.entity, r[1:]) {
				return Invalid(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("no %s with id %q", rel.entity.Entity, r[1:]), r)
			}
		}
	}
	return nil
}

// CreatePolicy adds a service, edge router or service edge router policy.
func (tx *Tx) CreatePolicy(k *Kind, p Record) error {
	if err := tx.policyRefs(k, p, nil); err != nil {
		return err
	}
	return tx.Insert(k, p)
}

// UpdatePolicy applies a PUT or PATCH to a policy. System policies are the
// controller's own and cannot be changed by users.
func (tx *Tx) UpdatePolicy(k *Kind, id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(k, id, p, at, func(old, upd Record) error {
		if isSystem(old) {
			return Invalid("id", "a system policy cannot be changed", id)
		}
		return tx.policyRefs(k, upd, old)
	})
	return err
}

// DeletePolicy removes a policy; its links go with it.
func (tx *Tx) DeletePolicy(k *Kind, id string) error {
	p, err := tx.Get(k, id)
	if err != nil {
		return err
	}
	if isSystem(p) {
		return Invalid("id", "a system policy cannot be deleted", id)
	}
	return tx.Remove(k, id)
}

func isSystem(r Record) bool {
	erp, ok := r.(*EdgeRouterPolicy)
	return ok && erp.IsSystem
}

// PolicyKind returns the policy kind of a table name, for the generic policy commands.
func PolicyKind(table string) (*Kind, bool) {
	switch table {
	case KindServicePolicy.Table:
		return KindServicePolicy, true
	case KindEdgeRouterPolicy.Table:
		return KindEdgeRouterPolicy, true
	case KindServiceEdgeRouterPolicy.Table:
		return KindServiceEdgeRouterPolicy, true
	}
	return nil, false
}
