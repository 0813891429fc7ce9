package dataplane

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/fabricmgmt"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"
)

// The Fabric API's validations and inspections live in package fabricmgmt;
// the Manager hands them a view of itself (fabricView) and nothing more.

// ValidateTerminators: fabricmgmt.ValidateTerminators.
func (m *Manager) ValidateTerminators(filterExpr string, fix bool) (*fabricmgmt.Validation[wire.TerminatorDetail], error) {
	return fabricmgmt.ValidateTerminators(fabricView{m}, filterExpr, fix)
}

// ValidateRouterLinks: fabricmgmt.ValidateRouterLinks.
func (m *Manager) ValidateRouterLinks(filterExpr string) (*fabricmgmt.Validation[wire.RouterLinkDetails], error) {
	return fabricmgmt.ValidateRouterLinks(fabricView{m}, filterExpr)
}

// ValidateRouterSdkTerminators: fabricmgmt.ValidateRouterSdkTerminators.
func (m *Manager) ValidateRouterSdkTerminators(filterExpr string) (*fabricmgmt.Validation[wire.RouterSdkTerminatorsDetails], error) {
	return fabricmgmt.ValidateRouterSdkTerminators(fabricView{m}, filterExpr)
}

// ValidateRouterDataModels: fabricmgmt.ValidateRouterDataModels.
func (m *Manager) ValidateRouterDataModels(filterExpr string, ctrl, fix bool) (*fabricmgmt.Validation[wire.RouterDataModelDetails], error) {
	return fabricmgmt.ValidateRouterDataModels(fabricView{m}, filterExpr, ctrl, fix)
}

// ValidateDataModel: fabricmgmt.ValidateDataModel.
func (m *Manager) ValidateDataModel(ctx context.Context, id string) (*fabricmgmt.DataModelReport, error) {
	return fabricmgmt.ValidateDataModel(ctx, fabricView{m}, id)
}

// InspectRouters: fabricmgmt.InspectRouters.
func (m *Manager) InspectRouters(ctx context.Context, match *regexp.Regexp, values []string) ([]fabricmgmt.InspectValue, []string) {
	return fabricmgmt.InspectRouters(ctx, fabricView{m}, match, values)
}

// ConnectedRouters is this node's "connected-routers" inspection value:
// each connected router's id, name, version and connect time, as OpenZiti's
// controller gives it.
func (m *Manager) ConnectedRouters() string {
	tx := m.cfg.Store.Read()
	out := []map[string]any{}
	for _, r := range m.connectedWhere(nil) {
		out = append(out, map[string]any{"Id": r.ID, "Name": fabricmgmt.RouterName(tx, r.ID), "Version": r.Version.Version,
			"ConnectTime": r.ConnectedAt.Format(time.RFC3339)})
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return strings.Compare(a["Id"].(string), b["Id"].(string)) })
	b, _ := json.Marshal(out)
	return string(b)
}

// fabricView is the Manager as fabricmgmt reads it.
type fabricView struct{ m *Manager }

func (v fabricView) Model() *store.Tx { return v.m.cfg.Store.Read() }
func (v fabricView) NodeID() string   { return v.m.cfg.NodeID }

func (v fabricView) Routers() []string {
	var ids []string
	for _, r := range v.m.connectedWhere(nil) {
		ids = append(ids, r.ID)
	}
	return ids
}

func (v fabricView) Router(id string) bool { return v.m.router(id) != nil }

func (v fabricView) Links() []fabricmgmt.Link {
	ls := v.m.links.all()
	out := make([]fabricmgmt.Link, 0, len(ls))
	for _, l := range ls {
		out = append(out, fabricmgmt.Link{ID: l.ID, SrcRouterID: l.SrcRouterID, DstRouterID: l.DstRouterID, Conns: l.Conns, StateIteration: l.StateIteration})
	}
	return out
}

func (v fabricView) Request(ctx context.Context, id string, msg *ctrlchan.Message) (*ctrlchan.Message, error) {
	r := v.m.router(id)
	if r == nil {
		return nil, fabricmgmt.ErrNotConnected
	}
	return v.m.request(ctx, r, msg)
}

func (v fabricView) DataState() ([]byte, uint64) { return v.m.dataStateNow() }

func (v fabricView) DeleteTerminators(ctx context.Context, routerID string, ids []string) error {
	_, err := v.m.cfg.Writer.Do(ctx, fsm.CmdTerminatorsDeleteByRouter, fsm.RouterTerminatorsDelete{RouterID: routerID, IDs: ids})
	if err != nil {
		v.m.log.Warn("invalid terminators were not deleted", "router", routerID, "error", err)
	}
	return err
}

// dataStateNow is the node's data model as a router gets it (DataState),
// and the applied index it is of.
func (m *Manager) dataStateNow() ([]byte, uint64) {
	applied, _ := m.cfg.AppliedIndex()
	tx := m.cfg.Store.Read()
	timeline := ""
	if k := tx.DataPlaneKeys(); k != nil {
		timeline = k.TimelineID
	}
	return wire.DataState(m.fullState(tx), applied, timeline), applied
}
