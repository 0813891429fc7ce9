package store

import (
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// Terminator is where a router reaches the server side of a service.
type Terminator struct {
	Base
	ServiceID string `json:"serviceId"`
	// RouterID names a router or an edge router: edge routers are routers too.
	RouterID string `json:"routerId"`
	Binding  string `json:"binding"`
	Address  string `json:"address"`
	Identity string `json:"identity"`
	// IdentitySecret lets the hosting identity prove it owns Identity; never shown by the API.
	IdentitySecret string `json:"identitySecret"`
	Cost           int    `json:"cost"`
	Precedence     string `json:"precedence"`
	HostID         string `json:"hostId"`
	// PeerData is what the hosting SDK told its router, handed to dialers
	// (key → bytes); IsSystem marks a terminator a router made for a host.
	PeerData map[uint32][]byte `json:"peerData,omitempty"`
	IsSystem bool              `json:"isSystem,omitempty"`
}

// KindTerminator is the table of terminators.
var KindTerminator = &Kind{Table: "terminators", Entity: "terminator",
	new: func() Record { return &Terminator{} },
	indexes: []*memdb.IndexSchema{strIndex("service", "ServiceID"), strIndex("router", "RouterID"),
		{Name: "pick", Unique: true, Indexer: terminatorPickIndex{}}},
	Fields: baseFields(terminatorFilterFields)}

var (
	terminatorService = filter.StringField(func(r any) string { return r.(*Terminator).ServiceID })
	terminatorRouter  = filter.StringField(func(r any) string { return r.(*Terminator).RouterID })
)

var terminatorFilterFields = map[string]filter.Field{
	// OpenZiti's names, references to the service and the router
	// ("service.name", "router.name").
	"service": refField("terminators", idOf(func(r any) string { return r.(*Terminator).ServiceID }),
		func() *filter.Schema { return KindService.Fields }, KindService),
	"router": refField("terminators", idOf(func(r any) string { return r.(*Terminator).RouterID }),
		func() *filter.Schema { return KindRouter.Fields }, KindRouter, KindEdgeRouter),
	"serviceId":  terminatorService,
	"routerId":   terminatorRouter,
	"binding":    filter.StringField(func(r any) string { return r.(*Terminator).Binding }),
	"address":    filter.StringField(func(r any) string { return r.(*Terminator).Address }),
	"identity":   filter.StringField(func(r any) string { return r.(*Terminator).Identity }),
	"cost":       filter.IntField(func(r any) int64 { return int64(r.(*Terminator).Cost) }),
	"precedence": filter.StringField(func(r any) string { return r.(*Terminator).Precedence }),
	"hostId":     filter.StringField(func(r any) string { return r.(*Terminator).HostID }),
}

// TerminatorRouterKind returns the kind (KindRouter or KindEdgeRouter) that
// holds the router id, or nil.
func (tx *Tx) TerminatorRouterKind(id string) *Kind {
	for _, k := range []*Kind{KindRouter, KindEdgeRouter} {
		if tx.Exists(k, id) {
			return k
		}
	}
	return nil
}

func (tx *Tx) checkTerminatorRefs(t *Terminator) error {
	if !tx.Exists(KindService, t.ServiceID) {
		return Invalid("service", "no service with this id", t.ServiceID)
	}
	if tx.TerminatorRouterKind(t.RouterID) == nil {
		return Invalid("router", "no router or edge router with this id", t.RouterID)
	}
	return nil
}

// CreateTerminator adds a terminator of an existing service on an existing router.
func (tx *Tx) CreateTerminator(t *Terminator) error {
	if err := tx.checkTerminatorRefs(t); err != nil {
		return err
	}
	return tx.Insert(KindTerminator, t)
}

// UpdateTerminator applies a PUT or PATCH to a terminator.
func (tx *Tx) UpdateTerminator(id string, p Patch, at time.Time) error {
	_, _, err := tx.Update(KindTerminator, id, p, at, func(_, upd Record) error {
		return tx.checkTerminatorRefs(upd.(*Terminator))
	})
	return err
}

// DeleteTerminator removes a terminator.
func (tx *Tx) DeleteTerminator(id string) error { return tx.Remove(KindTerminator, id) }

// CreateRouterTerminator makes a router's terminator, or takes it again: a
// terminator of that id for the same service, router, binding and host
// (the router asking again after a reconnect) keeps its id and gets the
// new cost and precedence; one that differs in any of those is a conflict.
func (tx *Tx) CreateRouterTerminator(t *Terminator, at time.Time) error {
	old, err := GetAs[*Terminator](tx, KindTerminator, t.ID)
	if err != nil {
		if err := tx.checkTerminatorRefs(t); err != nil {
			return err
		}
		if tx.TerminatorRouterKind(t.RouterID) != KindEdgeRouter {
			return Invalid("router", "terminators of hosts are made by edge routers", t.RouterID)
		}
		return tx.Insert(KindTerminator, t)
	}
	if old.ServiceID != t.ServiceID || old.RouterID != t.RouterID || old.Binding != t.Binding || old.HostID != t.HostID {
		return Conflict("id", t.ID, "terminator %s exists for another service, router, binding or host", t.ID)
	}
	if old.Cost == t.Cost && old.Precedence == t.Precedence {
		return nil
	}
	n := *old
	n.Cost, n.Precedence, n.UpdatedAt = t.Cost, t.Precedence, at
	return tx.Replace(KindTerminator, &n)
}

// DeleteRouterTerminators removes the terminators, among ids, that router
// routerID made; a router removes only its own. It reports how many went.
func (tx *Tx) DeleteRouterTerminators(routerID string, ids []string) (int, error) {
	n := 0
	for _, id := range ids {
		t, err := GetAs[*Terminator](tx, KindTerminator, id)
		if err != nil || t.RouterID != routerID {
			continue
		}
		if err := tx.Remove(KindTerminator, id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// UpdateRouterTerminator changes the cost and/or precedence of a terminator
// of router routerID.
func (tx *Tx) UpdateRouterTerminator(routerID, id string, cost *int, precedence *string, at time.Time) error {
	t, err := GetAs[*Terminator](tx, KindTerminator, id)
	if err != nil {
		return err
	}
	if t.RouterID != routerID {
		return Forbidden("terminator %s is another router's", id)
	}
	n := *t
	if cost != nil {
		n.Cost = *cost
	}
	if precedence != nil {
		n.Precedence = *precedence
	}
	n.UpdatedAt = at
	return tx.Replace(KindTerminator, &n)
}
