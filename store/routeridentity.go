package store

import (
	"encoding/json"
	"time"
)

// Router identities (docs/openziti.md, "Router identities"). An edge router
// with isTunnelerEnabled runs a tunneler inside `ziti router`; that tunneler
// is an identity of type Router with the router's id and name, and a system
// edge router policy of the same id lets it use its own router. As in
// OpenZiti (db/edge_router_store.go, routerIdentityConstraint), the pair is
// made when the router is made with the flag or the flag is turned on,
// renamed with the router, and deleted when the flag is turned off or the
// router is deleted, all in the command that changes the router.
//
// The rules that refuse a direct delete or rename of a router identity
// (DeleteIdentity, UpdateIdentity) only ever meet identities made by the
// commands of command version 9, which a cluster proposes only once every
// member applies them; identity.delete and identity.update keep their
// meaning for every identity an older member can hold.

// IdentityTypeRouter is the identity type of a router's tunneler identity.
const IdentityTypeRouter = "Router"

// SystemEdgeRouterPolicyName is the name of the system edge router policy
// that lets router id's identity use the router (OpenZiti's name).
func SystemEdgeRouterPolicyName(id string) string { return "edge-router-" + id + "-system" }

// RouterIdentityOf returns the edge router whose tunneler identity id is,
// or nil: the identity is of type Router and a tunneler-enabled edge router
// has its id.
func (tx *Tx) RouterIdentityOf(i *Identity) *EdgeRouter {
	if i.TypeID != IdentityTypeRouter {
		return nil
	}
	r, err := GetAs[*EdgeRouter](tx, KindEdgeRouter, i.ID)
	if err != nil || !r.IsTunnelerEnabled {
		return nil
	}
	return r
}

// CreateEdgeRouterWithIdentity adds an edge router and, when its tunneler
// is enabled, its identity and system policy.
func (tx *Tx) CreateEdgeRouterWithIdentity(r *EdgeRouter) error {
	if err := tx.CreateEdgeRouter(r); err != nil {
		return err
	}
	if r.IsTunnelerEnabled {
		return tx.addRouterIdentity(r, r.CreatedAt)
	}
	return nil
}

// UpdateEdgeRouterWithIdentity applies a PUT or PATCH to an edge router
// and keeps its identity in step: made when the tunneler is turned on,
// deleted when it is turned off, renamed with the router.
func (tx *Tx) UpdateEdgeRouterWithIdentity(id string, p Patch, at time.Time) error {
	old, err := GetAs[*EdgeRouter](tx, KindEdgeRouter, id)
	if err != nil {
		return err
	}
	if err := tx.UpdateEdgeRouter(id, p, at); err != nil {
		return err
	}
	n, err := GetAs[*EdgeRouter](tx, KindEdgeRouter, id)
	if err != nil {
		return err
	}
	switch {
	case !old.IsTunnelerEnabled && n.IsTunnelerEnabled:
		return tx.addRouterIdentity(n, at)
	case old.IsTunnelerEnabled && !n.IsTunnelerEnabled:
		return tx.removeRouterIdentity(id)
	case n.IsTunnelerEnabled && old.Name != n.Name:
		i, err := GetAs[*Identity](tx, KindIdentity, id)
		if err != nil || i.TypeID != IdentityTypeRouter {
			return nil // not this router's identity (a router enabled before command version 9)
		}
		raw, _ := json.Marshal(n.Name)
		_, _, err = tx.Update(KindIdentity, id, Patch{"name": raw}, at, nil)
		return err
	}
	return nil
}

// DeleteEdgeRouterWithIdentity deletes an edge router with its terminators
// and its identity and system policy.
func (tx *Tx) DeleteEdgeRouterWithIdentity(id string) error {
	if _, err := tx.Get(KindEdgeRouter, id); err != nil {
		return err
	}
	if err := tx.removeRouterIdentity(id); err != nil {
		return err
	}
	return tx.DeleteRouterWithTerminators(KindEdgeRouter, id)
}

// addRouterIdentity makes router r's identity and system policy. An
// identity or policy whose name is taken fails the router's change.
func (tx *Tx) addRouterIdentity(r *EdgeRouter, at time.Time) error {
	i := &Identity{Base: Base{ID: r.ID, CreatedAt: at, UpdatedAt: at}, Named: Named{Name: r.Name},
		TypeID: IdentityTypeRouter, AuthPolicyID: DefaultAuthPolicyID, DefaultHostingPrecedence: "default"}
	if err := tx.CreateIdentity(i, nil, nil); err != nil {
		return err
	}
	return tx.Insert(KindEdgeRouterPolicy, &EdgeRouterPolicy{Base: Base{ID: r.ID, CreatedAt: at, UpdatedAt: at},
		Named: Named{Name: SystemEdgeRouterPolicyName(r.ID)}, Semantic: "AnyOf", IsSystem: true,
		IdentityRoles: []string{"@" + r.ID}, EdgeRouterRoles: []string{"@" + r.ID}})
}

// removeRouterIdentity deletes router id's system policy and identity (with
// its authenticators, sessions, and the @id entries of every policy), if
// they are there. An identity of that id of another type is not the
// router's and stays.
func (tx *Tx) removeRouterIdentity(id string) error {
	if p, err := GetAs[*EdgeRouterPolicy](tx, KindEdgeRouterPolicy, id); err == nil && p.IsSystem {
		if err := tx.Remove(KindEdgeRouterPolicy, id); err != nil {
			return err
		}
	}
	if i, err := GetAs[*Identity](tx, KindIdentity, id); err == nil && i.TypeID == IdentityTypeRouter {
		return tx.deleteIdentity(i)
	}
	return nil
}

// RouterIdentitiesMissing lists, in id order, the tunneler-enabled edge
// routers that have no identity (routers enabled before command version 9)
// and whose identity and system policy can be made: no record has their id
// or takes the names they need.
func (tx *Tx) RouterIdentitiesMissing() []string {
	var ids []string
	tx.Each(KindEdgeRouter, "id", func(rec Record) bool {
		r := rec.(*EdgeRouter)
		if r.IsTunnelerEnabled && !tx.Exists(KindIdentity, r.ID) && !tx.Exists(KindEdgeRouterPolicy, r.ID) &&
			tx.First(KindIdentity, "name", r.Name) == nil && tx.First(KindEdgeRouterPolicy, "name", SystemEdgeRouterPolicyName(r.ID)) == nil {
			ids = append(ids, r.ID)
		}
		return true
	})
	return ids
}

// EnsureRouterIdentities makes the identity and system policy of every
// router RouterIdentitiesMissing lists, stamped at; it returns their ids.
func (tx *Tx) EnsureRouterIdentities(at time.Time) ([]string, error) {
	ids := tx.RouterIdentitiesMissing()
	for _, id := range ids {
		r, err := GetAs[*EdgeRouter](tx, KindEdgeRouter, id)
		if err != nil {
			return nil, err
		}
		if err := tx.addRouterIdentity(r, at); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
