// Package fabricmgmt holds the Fabric API's checks of the routers: the
// validations of `ziti fabric validate terminators|router-links|
// router-sdk-terminators|router-data-model` and the inspections of `ziti
// fabric inspect`. Each asks the routers connected to this node and judges
// their answers against this node's model and links.
//
// It owns no state: it reads the data plane through DataPlane (the
// dataplane Manager gives one). It must never hold a router's channel or a
// lock of the data plane, nor keep anything between two calls; its only
// write is the removal of invalid terminators a fix asks for.
package fabricmgmt

import (
	"context"
	"errors"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"
)

// DataPlane is what the validations and inspections read of this node's
// data plane.
type DataPlane interface {
	// Model is the node's model now.
	Model() *store.Tx
	// NodeID is this node's id.
	NodeID() string
	// Routers are the ids of the routers whose control channel to this
	// node is open.
	Routers() []string
	// Router says whether router id's control channel to this node is open.
	Router(id string) bool
	// Links are the links reported to this node.
	Links() []Link
	// Request sends msg to router id and waits for its answer
	// (ErrNotConnected when its channel is not open).
	Request(ctx context.Context, id string, msg *ctrlchan.Message) (*ctrlchan.Message, error)
	// DataState is the node's data model as a router gets it (DataState),
	// and the applied index it is of.
	DataState() ([]byte, uint64)
	// DeleteTerminators removes the terminators ids of router routerID
	// from the model.
	DeleteTerminators(ctx context.Context, routerID string, ids []string) error
}

// Link is a router link as this node knows it: its ends and, as its dialer
// last reported them, its connections (StateIteration orders the reports).
type Link struct {
	ID             string
	SrcRouterID    string
	DstRouterID    string
	Conns          []wire.LinkConn
	StateIteration uint32
}

// other is the end of the link that is not routerID.
func (l *Link) other(routerID string) string {
	if l.SrcRouterID == routerID {
		return l.DstRouterID
	}
	return l.SrcRouterID
}

// ErrNotConnected: the router has no control channel to this node.
var ErrNotConnected = errors.New("the router is not connected to this node")
