package dataplane

import (
	"context"
	"errors"
	"fmt"

	"edgectl/ctrlchan"

	"google.golang.org/protobuf/encoding/protowire"
)

// Validation of a router's data model: the node sends the router its full
// state, the router builds a model of it beside its own and answers with
// the entity counts of both and every difference (what OpenZiti's
// `ziti fabric validate router-data-model` asks). A router that applied
// every change set holds the same model as the node.

const (
	ctValidateDataState         = 20503
	ctValidateDataStateResponse = 20504
)

// DataModelDiff is one difference the router reported.
type DataModelDiff struct {
	EntityType string `json:"entityType"`
	EntityID   string `json:"entityId"`
	DiffType   string `json:"diffType"`
	Detail     string `json:"detail"`
}

// DataModelReport is a router's answer to a validation.
type DataModelReport struct {
	RouterID string `json:"routerId"`
	// Index is the node's index of the state sent.
	Index uint64 `json:"index"`
	// Expected counts the entities of the node's state, Actual the router's.
	Expected map[string]uint32 `json:"expected"`
	Actual   map[string]uint32 `json:"actual"`
	Diffs    []DataModelDiff   `json:"diffs"`
}

// ErrNotConnected: the router has no control channel to this node.
var ErrNotConnected = errors.New("the router is not connected to this node")

// ValidateDataModel asks router id, connected to this node, to compare its
// data model with the node's.
func (m *Manager) ValidateDataModel(ctx context.Context, id string) (*DataModelReport, error) {
	m.mu.Lock()
	r := m.routers[id]
	m.mu.Unlock()
	if r == nil || r.ch == nil {
		return nil, ErrNotConnected
	}
	applied, _ := m.cfg.Applied()
	tx := m.cfg.Store.Read()
	timeline := ""
	if k := tx.DataPlaneKeys(); k != nil {
		timeline = k.TimelineID
	}
	req := protoBuf(nil).msg(1, dataState(m.fullState(tx), applied, timeline))
	reply, err := m.request(ctx, r, ctrlchan.NewMessage(ctValidateDataState, req))
	if err != nil {
		return nil, err
	}
	if reply.ContentType != ctValidateDataStateResponse {
		return nil, fmt.Errorf("the router answered with content type %d", reply.ContentType)
	}
	rep := &DataModelReport{RouterID: id, Index: applied, Expected: map[string]uint32{}, Actual: map[string]uint32{}, Diffs: []DataModelDiff{}}
	counts := func(dst map[string]uint32, raw []byte) error {
		var k string
		var v uint64
		err := eachField(raw, func(num protowire.Number, val uint64, b []byte) error {
			switch num {
			case 1:
				k = string(b)
			case 2:
				v = val
			}
			return nil
		})
		dst[k] = uint32(v)
		return err
	}
	err = eachField(reply.Body, func(num protowire.Number, _ uint64, raw []byte) error {
		switch num {
		case 1:
			return counts(rep.Expected, raw)
		case 2:
			return counts(rep.Actual, raw)
		case 3:
			if len(rep.Diffs) >= 10000 {
				return nil
			}
			var d DataModelDiff
			err := eachField(raw, func(num protowire.Number, _ uint64, b []byte) error {
				switch num {
				case 1:
					d.EntityType = string(b)
				case 2:
					d.EntityID = string(b)
				case 3:
					d.DiffType = string(b)
				case 4:
					d.Detail = string(b)
				}
				return nil
			})
			rep.Diffs = append(rep.Diffs, d)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the router's validation answer could not be read: %w", err)
	}
	return rep, nil
}
