package fabricmgmt

import (
	"context"
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

// ValidateDataModel asks router id, connected to this node, to compare its
// data model with the node's.
func ValidateDataModel(ctx context.Context, dp DataPlane, id string) (*DataModelReport, error) {
	state, applied := dp.DataState()
	return validateDataModel(ctx, dp, id, state, applied, false)
}

// validateDataModel has router id compare its data model with state; with
// fix, a router that differs takes state as its own.
func validateDataModel(ctx context.Context, dp DataPlane, id string, state []byte, applied uint64, fix bool) (*DataModelReport, error) {
	reply, err := dp.Request(ctx, id, ctrlchan.NewMessage(wire.ValidateDataStateRequestType, wire.ValidateRequest(state, fix)))
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
