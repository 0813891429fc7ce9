package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// CreateEdgeRouter adds an edge router with its outstanding enrollment.
func (tx *Tx) CreateEdgeRouter(r *EdgeRouter) error {
	return tx.Insert(KindEdgeRouter, r)
}

// UpdateEdgeRouter applies a PUT or PATCH to an edge router. Only the
// writable fields change: enrollment, certificate and connection state are
// kept as they are, whatever the patch holds.
func (tx *Tx) UpdateEdgeRouter(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindEdgeRouter, id, p, at, func(old, upd Record) error {
		o, n := old.(*EdgeRouter), upd.(*EdgeRouter)
		n.RouterEnrollment, n.Hostname, n.SupportedProtocols = o.RouterEnrollment, o.Hostname, o.SupportedProtocols
		return nil
	})
	return err
}

// DeleteEdgeRouter removes an edge router. Policies that name it by @id lose
// that entry; terminators that run on it block the delete (routerInUse).
func (tx *Tx) DeleteEdgeRouter(id string) error {
	if _, err := tx.Get(KindEdgeRouter, id); err != nil {
		return err
	}
	if err := tx.routerInUse(KindEdgeRouter, id); err != nil {
		return err
	}
	if err := tx.dropRoleRefs(KindEdgeRouter, id); err != nil {
		return err
	}
	return tx.Remove(KindEdgeRouter, id)
}

// ReEnrollEdgeRouter drops an edge router's certificate and gives it a fresh
// enrollment, replacing any outstanding one. Every other field and every
// association stays.
func (tx *Tx) ReEnrollEdgeRouter(id string, e RouterEnrollment, at time.Time) error {
	old, err := GetAs[*EdgeRouter](tx, KindEdgeRouter, id)
	if err != nil {
		return err
	}
	n := *old
	n.RouterEnrollment = freshEnrollment(e)
	n.UpdatedAt = at
	return tx.Replace(KindEdgeRouter, &n)
}

// freshEnrollment keeps only the enrollment part of e: a router that is to
// enroll has no certificate, verified or not.
func freshEnrollment(e RouterEnrollment) RouterEnrollment {
	return RouterEnrollment{
		EnrollmentToken: e.EnrollmentToken, EnrollmentJwt: e.EnrollmentJwt,
		EnrollmentCreatedAt: e.EnrollmentCreatedAt, EnrollmentExpiresAt: e.EnrollmentExpiresAt,
	}
}

// CreateRouter adds a transit router with its outstanding enrollment.
func (tx *Tx) CreateRouter(r *Router) error {
	return tx.Insert(KindRouter, r)
}

// UpdateRouter applies a PUT or PATCH to a transit router, keeping its
// enrollment and certificate state.
func (tx *Tx) UpdateRouter(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindRouter, id, p, at, func(old, upd Record) error {
		upd.(*Router).RouterEnrollment = old.(*Router).RouterEnrollment
		return nil
	})
	return err
}

// DeleteRouter removes a transit router unless terminators run on it.
func (tx *Tx) DeleteRouter(id string) error {
	if _, err := tx.Get(KindRouter, id); err != nil {
		return err
	}
	if err := tx.routerInUse(KindRouter, id); err != nil {
		return err
	}
	return tx.Remove(KindRouter, id)
}

// RouterByEnrollmentToken returns the edge router or transit router whose
// outstanding enrollment has token, or nil.
func (tx *Tx) RouterByEnrollmentToken(token string) Record {
	for _, k := range []*Kind{KindEdgeRouter, KindRouter} {
		if r := tx.First(k, "enrollmentToken", token); r != nil {
			return r
		}
	}
	return nil
}

// dropRoleRefs removes the "@id" entry of every policy role array that names
// the entity id of kind k, so a deleted entity leaves no dangling selector.
// The refs table answers which policies name it, so no policy is scanned.
// The policies keep their updatedAt: the delete has no time of its own, and
// what the policy selects was already changed by the delete itself.
func (tx *Tx) dropRoleRefs(k *Kind, id string) error {
	for _, rel := range allRelations {
		if rel.entity != k {
			continue
		}
		var policies []string
		it, err := tx.txn.Get(refsTable, "id_prefix", rel.name, "@"+id, "")
		if err != nil {
			return fmt.Errorf("store: refs of %s: %w", id, err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			policies = append(policies, raw.(*ref).Policy)
		}
		field := rel.name[strings.Index(rel.name, ".")+1:] + "Roles"
		for _, pid := range policies {
			p, err := tx.Get(rel.policy, pid)
			if err != nil {
				continue
			}
			kept := []string{}
			for _, r := range rel.roles(p) {
				if r != "@"+id {
					kept = append(kept, r)
				}
			}
			raw, _ := json.Marshal(kept)
			if _, _, err := tx.Update(rel.policy, pid, Patch{field: raw}, p.base().UpdatedAt, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// routerInUse refuses the delete of a router (edge or transit) that
// terminators run on: the spec lets these deletes answer 409, and removing
// the terminators silently would cut services off without a word. Delete the
// terminators first.
func (tx *Tx) routerInUse(k *Kind, id string) error {
	if t := tx.First(KindTerminator, "router", id); t != nil {
		n := 0
		tx.Each(KindTerminator, "router", func(Record) bool { n++; return true }, id)
		return Referenced("%s %q is used by %d terminator(s), for example %q: delete them first", k.Entity, id, n, t.GetID())
	}
	return nil
}
