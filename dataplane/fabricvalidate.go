package dataplane

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"
	"edgectl/store/filter"
)

// The validations of `ziti fabric validate terminators|router-links|
// router-data-model` (api/wsapi.go carries them over the Fabric API's
// websocket), as OpenZiti's controller makes them: each takes a filter
// (empty: all), says how many results it will give, and then gives each
// one. The routers are asked at most validateParallel at a time, each
// within validateTimeout; a router not connected to this node gives a
// failed result saying so.

const (
	validateParallel = 10
	validateTimeout  = time.Minute
	// terminatorBatch is how many terminators one router is asked about at
	// once (OpenZiti's).
	terminatorBatch = 50
)

// Validation is a validation under way: Count results, which Run gives to
// emit, one at a time, and returns when all are given.
type Validation[T any] struct {
	Count int
	Run   func(emit func(T))
}

// ValidateTerminators checks the terminators that filter selects with their
// routers (ctrl_pb ValidateTerminatorsV2); with fix, those a router does
// not have are deleted.
func (m *Manager) ValidateTerminators(filterExpr string, fix bool) (*Validation[wire.TerminatorDetail], error) {
	tx := m.cfg.Store.Read()
	q, err := filter.Compile(filterExpr, store.KindTerminator.Fields)
	if err != nil {
		return nil, err
	}
	byRouter := map[string][]*store.Terminator{}
	count := 0
	tx.Each(store.KindTerminator, "id", func(rec store.Record) bool {
		if q.Match(rec) {
			t := rec.(*store.Terminator)
			byRouter[t.RouterID] = append(byRouter[t.RouterID], t)
			count++
		}
		return true
	})
	run := func(emit func(wire.TerminatorDetail)) {
		emit = serialized(emit)
		each(slices.Sorted(maps.Keys(byRouter)), func(routerID string) {
			ts := byRouter[routerID]
			for len(ts) > 0 {
				n := min(len(ts), terminatorBatch)
				m.validateTerminatorBatch(tx, routerID, ts[:n], fix, emit)
				ts = ts[n:]
			}
		})
	}
	return &Validation[wire.TerminatorDetail]{Count: count, Run: run}, nil
}

// validateTerminatorBatch asks router routerID about ts and gives their details.
func (m *Manager) validateTerminatorBatch(tx *store.Tx, routerID string, ts []*store.Terminator, fix bool, emit func(wire.TerminatorDetail)) {
	details := make([]wire.TerminatorDetail, len(ts))
	refs := make([]wire.TerminatorRef, len(ts))
	for i, t := range ts {
		details[i] = wire.TerminatorDetail{TerminatorID: t.ID, ServiceID: t.ServiceID, ServiceName: recordName(tx, store.KindService, t.ServiceID),
			RouterID: t.RouterID, RouterName: routerName(tx, t.RouterID), Binding: t.Binding, Address: t.Address, HostID: t.HostID,
			CreateDate: t.CreatedAt.UTC().Format(time.RFC3339), State: wire.TerminatorUnknown}
		refs[i] = wire.TerminatorRef{ID: t.ID, Binding: t.Binding, Address: t.Address}
	}
	defer func() {
		for _, d := range details {
			emit(d)
		}
	}()
	r := m.router(routerID)
	if r == nil {
		for i := range details {
			details[i].Detail = "router off-line"
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), validateTimeout)
	defer cancel()
	// The router fixes nothing itself: the terminators are the model's.
	reply, err := m.request(ctx, r, ctrlchan.NewMessage(wire.ValidateTerminatorsV2RequestType, wire.ValidateTerminatorsV2(refs, false)))
	var states map[string]wire.RouterTerminatorState
	if err == nil && reply.ContentType != wire.ValidateTerminatorsV2ResponseType {
		err = fmt.Errorf("the router answered with content type %d", reply.ContentType)
	}
	if err == nil {
		states, err = wire.DecodeValidateTerminatorsV2Response(reply.Body)
	}
	if err != nil {
		for i := range details {
			details[i].Detail = "the router did not answer: " + err.Error()
		}
		return
	}
	var invalid []string
	for i := range details {
		st, ok := states[details[i].TerminatorID]
		switch {
		case !ok:
			continue // Unknown
		case st.Valid:
			details[i].State = wire.TerminatorValid
		case st.Reason == wire.InvalidUnknownBinding:
			details[i].State = wire.TerminatorInvalidUnknownBinding
		case st.Reason == wire.InvalidUnknownTerminator:
			details[i].State = wire.TerminatorInvalidUnknownTerminator
		case st.Reason == wire.InvalidBadState:
			details[i].State = wire.TerminatorInvalidBadState
		}
		details[i].Detail = st.Detail
		if !st.Valid {
			invalid = append(invalid, details[i].TerminatorID)
		}
	}
	if fix && len(invalid) > 0 {
		_, err := m.cfg.Writer.Do(ctx, fsm.CmdTerminatorsDeleteByRouter, fsm.RouterTerminatorsDelete{RouterID: routerID, IDs: invalid})
		for i := range details {
			if details[i].State != wire.TerminatorValid && details[i].State != wire.TerminatorUnknown {
				details[i].Fixed = err == nil
			}
		}
		if err != nil {
			m.log.Warn("invalid terminators were not deleted", "router", routerID, "error", err)
		}
	}
}

// ValidateRouterLinks compares the links of each router that filter
// selects (its "links" inspection) with the links reported to this node:
// a link both have is valid while its other router is connected, one only
// the router has is valid while its other router is not (the link is on
// its way out or in), and one only this node has is not.
func (m *Manager) ValidateRouterLinks(filterExpr string) (*Validation[wire.RouterLinkDetails], error) {
	routers, err := m.routerRecords(filterExpr)
	if err != nil {
		return nil, err
	}
	run := func(emit func(wire.RouterLinkDetails)) {
		emit = serialized(emit)
		each(routers, func(rec store.Record) { emit(m.validateRouterLinks(rec)) })
	}
	return &Validation[wire.RouterLinkDetails]{Count: len(routers), Run: run}, nil
}

func (m *Manager) validateRouterLinks(rec store.Record) wire.RouterLinkDetails {
	out := wire.RouterLinkDetails{RouterID: rec.GetID(), RouterName: rec.RecordName()}
	r := m.router(rec.GetID())
	if r == nil {
		out.Message = "router not connected"
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), validateTimeout)
	defer cancel()
	reply, err := m.request(ctx, r, ctrlchan.NewMessage(wire.InspectRequestType, wire.InspectRequest("links")))
	var resp wire.InspectResponse
	if err == nil {
		resp, err = wire.DecodeInspectResponse(reply.Body)
	}
	var inspected []wire.InspectedLink
	if value, ok := resp.Values["links"]; err == nil && ok {
		inspected, err = wire.DecodeInspectedLinks(value)
	} else if err == nil {
		err = fmt.Errorf("no link details returned from router")
		if len(resp.Errors) > 0 {
			err = fmt.Errorf("%s", strings.Join(resp.Errors, ","))
		}
	}
	if err != nil {
		out.Message = err.Error()
		return out
	}
	out.ValidateSuccess = true
	known := map[string]Link{}
	for _, l := range m.links.all() {
		if l.SrcRouterID == r.ID || l.DstRouterID == r.ID {
			known[l.ID] = l
		}
	}
	for _, il := range inspected {
		d := wire.RouterLinkDetail{LinkID: il.ID, RouterState: wire.LinkEstablished, DestRouterID: il.Dest, Dialed: il.Dialed,
			DestConnected: m.router(il.Dest) != nil}
		if l, ok := known[il.ID]; ok {
			d.CtrlState, d.IsValid = wire.LinkEstablished, d.DestConnected
			if il.Dialed {
				d.Messages = connDifferences(l, il)
				d.IsValid = d.IsValid && len(d.Messages) == 0
			}
			delete(known, il.ID)
		} else {
			d.IsValid = !d.DestConnected
		}
		out.Links = append(out.Links, d)
	}
	for _, l := range slices.SortedFunc(maps.Values(known), func(a, b Link) int { return strings.Compare(a.ID, b.ID) }) {
		dest := l.other(r.ID)
		out.Links = append(out.Links, wire.RouterLinkDetail{LinkID: l.ID, CtrlState: wire.LinkEstablished, RouterState: wire.LinkUnknown,
			DestRouterID: dest, DestConnected: m.router(dest) != nil, Dialed: l.SrcRouterID == r.ID})
	}
	return out
}

// connDifferences compares the connections of link l as its dialer last
// reported them to this node with those the dialer shows now.
func connDifferences(l Link, il wire.InspectedLink) []string {
	key := func(c wire.LinkConn) string { return c.Type + " " + c.LocalAddr + " " + c.RemoteAddr }
	var ours, theirs []string
	for _, c := range l.Conns {
		ours = append(ours, key(c))
	}
	for _, c := range il.Connections {
		theirs = append(theirs, key(wire.LinkConn{Type: c.Type, LocalAddr: c.Source, RemoteAddr: c.Dest}))
	}
	slices.Sort(ours)
	slices.Sort(theirs)
	switch {
	case len(ours) != len(theirs):
		return []string{fmt.Sprintf("for link %s, this node has %d connections, the router %d", l.ID, len(ours), len(theirs))}
	case l.StateIteration != il.ConnStateIteration:
		return []string{fmt.Sprintf("for link %s, the connection state iteration differs: this node %d, the router %d", l.ID, l.StateIteration, il.ConnStateIteration)}
	}
	var out []string
	for i := range ours {
		if ours[i] != theirs[i] {
			out = append(out, fmt.Sprintf("for link %s, connection %q here is %q on the router", l.ID, ours[i], theirs[i]))
		}
	}
	return out
}

// ValidateRouterDataModels has each router that filter selects compare its
// data model with this node's (ValidateDataModel); with ctrl, a first result
// is this node's own, which always agrees: its model is not a second copy,
// it is made from the node's records when a router asks.
func (m *Manager) ValidateRouterDataModels(filterExpr string, ctrl bool) (*Validation[wire.RouterDataModelDetails], error) {
	routers, err := m.routerRecords(filterExpr)
	if err != nil {
		return nil, err
	}
	count := len(routers)
	if ctrl {
		count++
	}
	run := func(emit func(wire.RouterDataModelDetails)) {
		emit = serialized(emit)
		if ctrl {
			emit(wire.RouterDataModelDetails{ComponentType: "controller", ComponentID: m.cfg.NodeID, ComponentName: m.cfg.NodeID, ValidateSuccess: true})
		}
		each(routers, func(rec store.Record) {
			d := wire.RouterDataModelDetails{ComponentType: "router", ComponentID: rec.GetID(), ComponentName: rec.RecordName()}
			ctx, cancel := context.WithTimeout(context.Background(), validateTimeout)
			defer cancel()
			report, err := m.ValidateDataModel(ctx, rec.GetID())
			switch {
			case err == ErrNotConnected:
				d.Errors = []string{"router not connected to controller"}
			case err != nil:
				d.Errors = []string{fmt.Sprintf("unable to validate router data (%s)", err)}
			default:
				for _, diff := range report.Diffs {
					d.Errors = append(d.Errors, diff.String())
				}
				d.ValidateSuccess = len(d.Errors) == 0
			}
			emit(d)
		})
	}
	return &Validation[wire.RouterDataModelDetails]{Count: count, Run: run}, nil
}

// routerRecords are the edge routers and routers that filter selects, by id.
func (m *Manager) routerRecords(filterExpr string) ([]store.Record, error) {
	tx := m.cfg.Store.Read()
	var out []store.Record
	for _, k := range []*store.Kind{store.KindEdgeRouter, store.KindRouter} {
		q, err := filter.Compile(filterExpr, k.Fields)
		if err != nil {
			return nil, err
		}
		tx.Each(k, "id", func(rec store.Record) bool {
			if q.Match(rec) {
				out = append(out, rec)
			}
			return true
		})
	}
	slices.SortFunc(out, func(a, b store.Record) int { return strings.Compare(a.GetID(), b.GetID()) })
	return out, nil
}

// each calls fn for every item, validateParallel at a time, and returns
// when all are done.
func each[I any](items []I, fn func(I)) {
	sem := make(chan struct{}, validateParallel)
	var wg sync.WaitGroup
	for _, it := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(it)
		}()
	}
	wg.Wait()
}

// serialized is emit called by one goroutine at a time.
func serialized[T any](emit func(T)) func(T) {
	var mu sync.Mutex
	return func(v T) {
		mu.Lock()
		defer mu.Unlock()
		emit(v)
	}
}

// recordName is the name of record id of kind k ("" when it is gone).
func recordName(tx *store.Tx, k *store.Kind, id string) string {
	if rec, err := tx.Get(k, id); err == nil {
		return rec.RecordName()
	}
	return ""
}

// routerName is the name of edge router or router id.
func routerName(tx *store.Tx, id string) string {
	if name := recordName(tx, store.KindEdgeRouter, id); name != "" {
		return name
	}
	return recordName(tx, store.KindRouter, id)
}
