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
}

// KindTerminator is the table of terminators.
var KindTerminator = &Kind{Table: "terminators", Entity: "terminator",
	new:     func() Record { return &Terminator{} },
	indexes: []*memdb.IndexSchema{strIndex("service", "ServiceID"), strIndex("router", "RouterID")},
	Fields:  baseFields(terminatorFilterFields)}

var (
	terminatorService = filter.StringField(func(r any) string { return r.(*Terminator).ServiceID })
	terminatorRouter  = filter.StringField(func(r any) string { return r.(*Terminator).RouterID })
)

var terminatorFilterFields = map[string]filter.Field{
	"service":    terminatorService,
	"serviceId":  terminatorService,
	"router":     terminatorRouter,
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
