package dataplane

import (
	"context"
	"errors"
	"fmt"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
)

// Validation of a router's data model: the node sends the router its full
// state, the router builds a model of it beside its own and answers with
// the entity counts of both and every difference (what OpenZiti's
// `ziti fabric validate router-data-model` asks). A router that applied
// every change set holds the same model as the node.

// DataModelReport is a router's answer to a validation.
type DataModelReport struct {
	RouterID string `json:"routerId"`
	// Index is the node's index of the state sent.
	Index uint64 `json:"index"`
	// Expected counts the entities of the node's state, Actual the router's.
	Expected map[string]uint32 `json:"expected"`
	Actual   map[string]uint32 `json:"actual"`
	Diffs    []wire.Diff       `json:"diffs"`
}

// ErrNotConnected: the router has no control channel to this node.
var ErrNotConnected = errors.New("the router is not connected to this node")

// ValidateDataModel asks router id, connected to this node, to compare its
// data model with the node's.
func (m *Manager) ValidateDataModel(ctx context.Context, id string) (*DataModelReport, error) {
	state, applied := m.dataStateNow()
	return m.validateDataModel(ctx, id, state, applied, false)
}

// dataStateNow is the node's data model as a router gets it (DataState),
// and the applied index it is of.
func (m *Manager) dataStateNow() ([]byte, uint64) {
	applied, _ := m.cfg.Applied()
	tx := m.cfg.Store.Read()
	timeline := ""
	if k := tx.DataPlaneKeys(); k != nil {
		timeline = k.TimelineID
	}
	return wire.DataState(m.fullState(tx), applied, timeline), applied
}

// validateDataModel has router id compare its data model with state; with
// fix, a router that differs takes state as its own.
func (m *Manager) validateDataModel(ctx context.Context, id string, state []byte, applied uint64, fix bool) (*DataModelReport, error) {
	m.mu.Lock()
	r := m.routers[id]
	m.mu.Unlock()
	if r == nil || r.channel() == nil {
		return nil, ErrNotConnected
	}
	reply, err := m.request(ctx, r, ctrlchan.NewMessage(wire.ValidateDataStateRequestType, wire.ValidateRequest(state, fix)))
	if err != nil {
		return nil, err
	}
	if reply.ContentType != wire.ValidateDataStateResponseType {
		return nil, fmt.Errorf("the router answered with content type %d", reply.ContentType)
	}
	v, err := wire.DecodeValidateResponse(reply.Body)
	if err != nil {
		return nil, fmt.Errorf("the router's validation answer could not be read: %w", err)
	}
	return &DataModelReport{RouterID: id, Index: applied, Expected: v.Expected, Actual: v.Actual, Diffs: v.Diffs}, nil
}
