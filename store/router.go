package store

import (
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// Router is a transit router of the fabric.
type Router struct {
	Base
	Named
	RouterEnrollment
	Cost        int  `json:"cost"`
	Disabled    bool `json:"disabled"`
	NoTraversal bool `json:"noTraversal"`
}

// RecordName is the router's name.
func (r *Router) RecordName() string { return r.Name }

// The router fields read routers and edge routers alike: the Fabric API
// lists both as routers, and a terminator's router is either.
var routerFilterFields = map[string]filter.Field{
	"cost":                filter.IntField(func(r any) int64 { return int64(fabricRouterOf(r).cost) }),
	"disabled":            filter.BoolField(func(r any) bool { return fabricRouterOf(r).disabled }),
	"noTraversal":         filter.BoolField(func(r any) bool { return fabricRouterOf(r).noTraversal }),
	"isVerified":          filter.BoolField(func(r any) bool { return fabricRouterOf(r).IsVerified }),
	"fingerprint":         {Type: filter.String, Get: func(r any) any { return optString(fabricRouterOf(r).Fingerprint) }},
	"enrollmentExpiresAt": {Type: filter.Time, Get: func(r any) any { return optTime(fabricRouterOf(r).EnrollmentExpiresAt) }},
}

// fabricRouter is what routers and edge routers share.
type fabricRouter struct {
	*RouterEnrollment
	cost                  int
	disabled, noTraversal bool
}

// fabricRouterOf reads a *Router or an *EdgeRouter.
func fabricRouterOf(r any) fabricRouter {
	if e, ok := r.(*EdgeRouter); ok {
		return fabricRouter{&e.RouterEnrollment, e.Cost, e.Disabled, e.NoTraversal}
	}
	x := r.(*Router)
	return fabricRouter{&x.RouterEnrollment, x.Cost, x.Disabled, x.NoTraversal}
}

// KindRouter is the kind of Router records.
var KindRouter = &Kind{Table: "routers", Entity: "router", Named: true,
	new: func() Record { return &Router{} }, Fields: namedFields(routerFilterFields),
	indexes: []*memdb.IndexSchema{strIndex("enrollmentToken", "EnrollmentToken"), strIndex("fingerprint", "Fingerprint")}}

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

// DeleteRouterWithTerminators removes a router (edge or transit) and the
// terminators that run on it, as OpenZiti does: routers make most of them,
// for the identities they host, and each removal is an entity event of its
// own. (DeleteEdgeRouter and DeleteRouter, the commands of earlier
// releases, refuse the delete while terminators use the router.)
func (tx *Tx) DeleteRouterWithTerminators(k *Kind, id string) error {
	if _, err := tx.Get(k, id); err != nil {
		return err
	}
	var ids []string
	tx.Each(KindTerminator, "router", func(r Record) bool { ids = append(ids, r.GetID()); return true }, id)
	for _, t := range ids {
		if err := tx.Remove(KindTerminator, t); err != nil {
			return err
		}
	}
	if k == KindEdgeRouter {
		return tx.DeleteEdgeRouter(id)
	}
	return tx.DeleteRouter(id)
}
