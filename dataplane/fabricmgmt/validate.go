package fabricmgmt

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
	"edgectl/store"
	"edgectl/store/filter"
)

// The validations of `ziti fabric validate terminators|router-links|
// router-sdk-terminators|router-data-model` (api/wsapi.go carries them over
// the Fabric API's management channel), as OpenZiti's controller makes them:
// each takes a filter (the API's; empty: all, and its sort, skip and limit
// apply), says how many results it will give, and then gives each one.
// Routers are asked at most validateParallel at a time, each within
// validateTimeout; a router not connected to this node gives a result saying
// so.

const (
	validateParallel = 10
	validateTimeout  = time.Minute
	// terminatorBatch is how many terminators one router is asked about at
	// once (OpenZiti's).
	terminatorBatch = 50
)

// Validation is a validation under way: Count results, which Run gives to
// emit, one at a time, returning when all are given. Once ctx ends, routers
// are no longer asked; the results left are given as not validated.
type Validation[T any] struct {
	Count int
	Run   func(ctx context.Context, emit func(T))
}

// ValidateTerminators checks the terminators that filter selects with their
// routers (ctrl_pb ValidateTerminatorsV2); with fix, each router drops the
// invalid ones it holds, and the node deletes them from the model.
func ValidateTerminators(dp DataPlane, filterExpr string, fix bool) (*Validation[wire.TerminatorDetail], error) {
	tx := dp.Model()
	recs, err := selectRecords(tx, filterExpr, store.KindTerminator)
	if err != nil {
		return nil, err
	}
	byRouter := map[string][]*store.Terminator{}
	for _, rec := range recs {
		t := rec.(*store.Terminator)
		byRouter[t.RouterID] = append(byRouter[t.RouterID], t)
	}
	var batches [][]*store.Terminator
	for _, id := range slices.Sorted(maps.Keys(byRouter)) {
		for ts := byRouter[id]; len(ts) > 0; ts = ts[min(len(ts), terminatorBatch):] {
			batches = append(batches, ts[:min(len(ts), terminatorBatch)])
		}
	}
	run := func(ctx context.Context, emit func(wire.TerminatorDetail)) {
		emit = serialized(emit)
		each(batches, func(ts []*store.Terminator) {
			for _, d := range validateTerminatorBatch(ctx, dp, tx, ts, fix) {
				emit(d)
			}
		})
	}
	return &Validation[wire.TerminatorDetail]{Count: len(recs), Run: run}, nil
}

// validateTerminatorBatch asks the router of ts (all of one router) about
// them and returns their details.
func validateTerminatorBatch(ctx context.Context, dp DataPlane, tx *store.Tx, ts []*store.Terminator, fix bool) []wire.TerminatorDetail {
	routerID := ts[0].RouterID
	details := make([]wire.TerminatorDetail, len(ts))
	refs := make([]wire.TerminatorRef, len(ts))
	for i, t := range ts {
		details[i] = wire.TerminatorDetail{TerminatorID: t.ID, ServiceID: t.ServiceID, ServiceName: recordName(tx, store.KindService, t.ServiceID),
			RouterID: t.RouterID, RouterName: RouterName(tx, t.RouterID), Binding: t.Binding, Address: t.Address, HostID: t.HostID,
			CreateDate: t.CreatedAt.UTC().Format(time.RFC3339), State: wire.TerminatorUnknown}
		refs[i] = wire.TerminatorRef{ID: t.ID, Binding: t.Binding, Address: t.Address}
	}
	fail := func(why string) []wire.TerminatorDetail {
		for i := range details {
			details[i].Detail = why
		}
		return details
	}
	if !dp.Router(routerID) {
		return fail("router off-line")
	}
	if ctx.Err() != nil {
		return fail("not validated: the validation was stopped")
	}
	ctx, cancel := context.WithTimeout(ctx, validateTimeout)
	defer cancel()
	reply, err := dp.Request(ctx, routerID, ctrlchan.NewMessage(wire.ValidateTerminatorsV2RequestType, wire.ValidateTerminatorsV2(refs, fix)))
	var states map[string]wire.RouterTerminatorState
	if err == nil && reply.ContentType != wire.ValidateTerminatorsV2ResponseType {
		err = fmt.Errorf("the router answered with content type %d", reply.ContentType)
	}
	if err == nil {
		states, err = wire.DecodeValidateTerminatorsV2Response(reply.Body)
	}
	if err != nil {
		return fail("the router did not answer: " + err.Error())
	}
	invalid := applyTerminatorStates(details, states)
	if fix && len(invalid) > 0 {
		err := dp.DeleteTerminators(ctx, routerID, invalid)
		for i := range details {
			if slices.Contains(invalid, details[i].TerminatorID) {
				details[i].Fixed = err == nil
			}
		}
	}
	return details
}

// applyTerminatorStates sets each detail's state from the router's verdicts
// (a terminator the router did not judge stays Unknown) and returns the ids
// of the invalid ones.
func applyTerminatorStates(details []wire.TerminatorDetail, states map[string]wire.RouterTerminatorState) []string {
	var invalid []string
	for i := range details {
		st, ok := states[details[i].TerminatorID]
		if !ok {
			continue
		}
		details[i].Detail = st.Detail
		switch {
		case st.Valid:
			details[i].State = wire.TerminatorValid
			continue
		case st.Reason == wire.InvalidUnknownBinding:
			details[i].State = wire.TerminatorInvalidUnknownBinding
		case st.Reason == wire.InvalidUnknownTerminator:
			details[i].State = wire.TerminatorInvalidUnknownTerminator
		case st.Reason == wire.InvalidBadState:
			details[i].State = wire.TerminatorInvalidBadState
		}
		invalid = append(invalid, details[i].TerminatorID)
	}
	return invalid
}

// ValidateRouterLinks compares the links of each router that filter selects
// (its "links" inspection) with the links reported to this node
// (compareRouterLinks).
func ValidateRouterLinks(dp DataPlane, filterExpr string) (*Validation[wire.RouterLinkDetails], error) {
	return perRouter(dp, filterExpr, validateRouterLinks)
}

// perRouter is a validation of each router that filter selects, validate
// giving each one's result.
func perRouter[T any](dp DataPlane, filterExpr string, validate func(ctx context.Context, dp DataPlane, rec store.Record) T) (*Validation[T], error) {
	routers, err := selectRouters(dp.Model(), filterExpr)
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context, emit func(T)) {
		emit = serialized(emit)
		each(routers, func(rec store.Record) { emit(validate(ctx, dp, rec)) })
	}
	return &Validation[T]{Count: len(routers), Run: run}, nil
}

func validateRouterLinks(ctx context.Context, dp DataPlane, rec store.Record) wire.RouterLinkDetails {
	return routerCheck(ctx, dp, rec, "links", "no link details returned from router", func(routerID string, value string) ([]wire.RouterLinkDetail, error) {
		inspected, err := wire.DecodeInspectedLinks(value)
		if err != nil {
			return nil, err
		}
		known := map[string]Link{}
		for _, l := range dp.Links() {
			if l.SrcRouterID == routerID || l.DstRouterID == routerID {
				known[l.ID] = l
			}
		}
		return compareRouterLinks(routerID, inspected, known, dp.Router), nil
	})
}

// routerCheck is router rec's result of a validation that compares its
// inspection value name with this node's view (compare); missing is the
// error when the router gives neither the value nor an error.
func routerCheck[D wire.ResultDetail](ctx context.Context, dp DataPlane, rec store.Record, name, missing string,
	compare func(routerID string, value string) ([]D, error)) wire.RouterResult[D] {
	out := wire.RouterResult[D]{RouterID: rec.GetID(), RouterName: rec.RecordName()}
	if !dp.Router(rec.GetID()) {
		out.Message = "router not connected"
		return out
	}
	value, err := inspectOne(ctx, dp, rec.GetID(), name, missing)
	var details []D
	if err == nil {
		details, err = compare(rec.GetID(), value)
	}
	if err != nil {
		out.Message = err.Error()
		return out
	}
	out.ValidateSuccess, out.Details = true, details
	return out
}

// inspectOne asks router r for one inspection value; missing is the error
// when the router gives neither the value nor an error.
func inspectOne(ctx context.Context, dp DataPlane, routerID, name, missing string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, validateTimeout)
	defer cancel()
	reply, err := dp.Request(ctx, routerID, ctrlchan.NewMessage(wire.InspectRequestType, wire.InspectRequest(name)))
	if err != nil {
		return "", err
	}
	resp, err := wire.DecodeInspectResponse(reply.Body)
	switch value, ok := resp.Values[name]; {
	case err != nil:
		return "", err
	case ok:
		return value, nil
	case len(resp.Errors) > 0:
		return "", fmt.Errorf("%s", strings.Join(resp.Errors, ","))
	}
	return "", fmt.Errorf("%s", missing)
}

// ValidateRouterSdkTerminators compares the terminators each router that
// filter selects hosts for SDKs (its "sdk-terminators" inspection) with the
// model's edge terminators on it (compareSdkTerminators).
func ValidateRouterSdkTerminators(dp DataPlane, filterExpr string) (*Validation[wire.RouterSdkTerminatorsDetails], error) {
	return perRouter(dp, filterExpr, validateRouterSdkTerminators)
}

func validateRouterSdkTerminators(ctx context.Context, dp DataPlane, rec store.Record) wire.RouterSdkTerminatorsDetails {
	return routerCheck(ctx, dp, rec, "sdk-terminators", "no terminator details returned from router", func(routerID string, value string) ([]wire.RouterSdkTerminatorDetail, error) {
		inspected, _, err := wire.DecodeInspectedSdkTerminators(value)
		if err != nil {
			return nil, err
		}
		modelIDs := map[string]bool{}
		dp.Model().Each(store.KindTerminator, "router", func(rec store.Record) bool {
			if t := rec.(*store.Terminator); t.Binding == "edge" {
				modelIDs[t.ID] = true
			}
			return true
		}, routerID)
		return compareSdkTerminators(inspected, modelIDs), nil
	})
}

// compareSdkTerminators judges a router's SDK terminators against the
// model's edge terminators on it (modelIDs), as OpenZiti's controller does:
// one both have is valid once established on the router; one only the
// router has, or only the model, is not.
func compareSdkTerminators(inspected []wire.InspectedSdkTerminator, modelIDs map[string]bool) []wire.RouterSdkTerminatorDetail {
	var out []wire.RouterSdkTerminatorDetail
	seen := map[string]bool{}
	for _, it := range inspected {
		d := wire.RouterSdkTerminatorDetail{TerminatorID: it.ID, RouterState: it.State, IsValid: it.State == "established",
			OperationActive: it.OperationActive, CreateTime: it.CreateTime, LastAttempt: it.LastAttempt, CtrlState: wire.TerminatorValid}
		if !modelIDs[it.ID] {
			d.CtrlState, d.IsValid = wire.TerminatorUnknown, false
		}
		seen[it.ID] = true
		out = append(out, d)
	}
	for _, id := range slices.Sorted(maps.Keys(modelIDs)) {
		if !seen[id] {
			out = append(out, wire.RouterSdkTerminatorDetail{TerminatorID: id, CtrlState: wire.TerminatorValid, RouterState: "unknown"})
		}
	}
	return out
}

// compareRouterLinks judges router routerID's links (inspected) against
// those this node has of it (known), as OpenZiti's controller does: a link
// both have is valid while its other router is connected (and, on the
// dialing side, its connections are those last reported); one only the
// router has is valid while its other router is not (the link is on its way
// in or out); one only this node has is not.
func compareRouterLinks(routerID string, inspected []wire.InspectedLink, known map[string]Link, connected func(string) bool) []wire.RouterLinkDetail {
	var out []wire.RouterLinkDetail
	for _, il := range inspected {
		d := wire.RouterLinkDetail{LinkID: il.ID, RouterState: wire.LinkEstablished, DestRouterID: il.Dest, Dialed: il.Dialed,
			DestConnected: connected(il.Dest)}
		if l, ok := known[il.ID]; ok {
			d.CtrlState, d.IsValid = wire.LinkEstablished, d.DestConnected
			if il.Dialed { // the listening side names the ends the other way round
				var wrong bool
				d.Messages, wrong = connDifferences(l, il)
				d.IsValid = d.IsValid && !wrong
			}
		} else {
			d.IsValid = !d.DestConnected
		}
		out = append(out, d)
	}
	seen := map[string]bool{}
	for _, il := range inspected {
		seen[il.ID] = true
	}
	for _, id := range slices.Sorted(maps.Keys(known)) {
		if l := known[id]; !seen[id] {
			dest := l.other(routerID)
			out = append(out, wire.RouterLinkDetail{LinkID: id, CtrlState: wire.LinkEstablished, RouterState: wire.LinkUnknown,
				DestRouterID: dest, DestConnected: connected(dest), Dialed: l.SrcRouterID == routerID})
		}
	}
	return out
}

// connDifferences compares the connections of link l as its dialer last
// reported them to this node with those the dialer shows now. A different
// count or state iteration is only noted (a change may be on its way, as
// OpenZiti's controller words it); a connection that differs makes the
// link wrong.
func connDifferences(l Link, il wire.InspectedLink) (messages []string, wrong bool) {
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
		return []string{fmt.Sprintf("for link %s, this node has %d connections, the router %d", l.ID, len(ours), len(theirs))}, false
	case l.StateIteration != il.ConnStateIteration:
		return []string{fmt.Sprintf("for link %s, the connection state iteration differs: this node %d, the router %d", l.ID, l.StateIteration, il.ConnStateIteration)}, false
	}
	for i := range ours {
		if ours[i] != theirs[i] {
			messages = append(messages, fmt.Sprintf("for link %s, connection %q here is %q on the router", l.ID, ours[i], theirs[i]))
		}
	}
	return messages, len(messages) > 0
}

// ValidateRouterDataModels has each router that filter selects compare its
// data model with this node's (built once); with fix, a router that differs
// takes the node's. With ctrl, a first result is this node's own model,
// which always agrees: it is not a second copy but made from the node's
// records when a router asks.
func ValidateRouterDataModels(dp DataPlane, filterExpr string, ctrl, fix bool) (*Validation[wire.RouterDataModelDetails], error) {
	routers, err := selectRouters(dp.Model(), filterExpr)
	if err != nil {
		return nil, err
	}
	count := len(routers)
	if ctrl {
		count++
	}
	run := func(ctx context.Context, emit func(wire.RouterDataModelDetails)) {
		emit = serialized(emit)
		if ctrl {
			emit(wire.RouterDataModelDetails{ComponentType: "controller", ComponentID: dp.NodeID(), ComponentName: dp.NodeID(), ValidateSuccess: true})
		}
		var state []byte
		var applied uint64
		if len(routers) > 0 {
			state, applied = dp.DataState()
		}
		each(routers, func(rec store.Record) {
			d := wire.RouterDataModelDetails{ComponentType: "router", ComponentID: rec.GetID(), ComponentName: rec.RecordName()}
			rctx, cancel := context.WithTimeout(ctx, validateTimeout)
			defer cancel()
			report, err := validateDataModel(rctx, dp, rec.GetID(), state, applied, fix)
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

// selectRouters are the edge routers and routers that filter selects.
func selectRouters(tx *store.Tx, filterExpr string) ([]store.Record, error) {
	return selectRecords(tx, filterExpr, store.KindEdgeRouter, store.KindRouter)
}

// selectRecords are the records of kinds that filter selects: each kind's
// in the filter's order (by id without one), one kind after the other, then
// the filter's skip and limit.
func selectRecords(tx *store.Tx, filterExpr string, kinds ...*store.Kind) ([]store.Record, error) {
	var out []store.Record
	var q *filter.Query
	for _, k := range kinds {
		var err error
		if q, err = filter.CompileIn(filterExpr, k.Fields, tx); err != nil {
			return nil, err
		}
		var recs []store.Record
		tx.Each(k, "id", func(rec store.Record) bool {
			if q.Match(rec) {
				recs = append(recs, rec)
			}
			return true
		})
		slices.SortStableFunc(recs, func(a, b store.Record) int {
			if c := q.Compare(a, b); c != 0 {
				return c
			}
			return strings.Compare(a.GetID(), b.GetID())
		})
		out = append(out, recs...)
	}
	if n, ok := q.Skip(); ok {
		out = out[min(n, len(out)):]
	}
	if n, ok, none := q.Limit(); ok && !none {
		out = out[:min(n, len(out))]
	}
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

// RouterName is the name of edge router or router id.
func RouterName(tx *store.Tx, id string) string {
	if name := recordName(tx, store.KindEdgeRouter, id); name != "" {
		return name
	}
	return recordName(tx, store.KindRouter, id)
}
