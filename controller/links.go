package controller

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"time"

	"edgectl/cluster"
	"edgectl/dataplane"
)

// An operator's change of a router link (PATCH /links/{id}: its static
// cost, or down) is made on every member: each node keeps the links its
// routers report to it and routes its own circuits over them
// (docs/openziti.md, "Links and paths"), so a change made on one node alone
// would steer only the circuits that node routes. The node that takes the
// request makes the change and sends it to the others over the cluster
// port, waiting up to linkUpdateTimeout for their answers.

// rpcLinkUpdate is the cluster RPC that carries a link change.
const rpcLinkUpdate = "edgectl.linkUpdate"

// linkUpdateTimeout bounds the wait for the other members.
const linkUpdateTimeout = 2 * time.Second

// linkUpdate is a link change on the cluster port.
type linkUpdate struct {
	ID         string `json:"id"`
	StaticCost *int   `json:"staticCost,omitempty"`
	Down       *bool  `json:"down,omitempty"`
}

// clusterRouters is the routers as the API sees them: this node's, with a
// link's change made on every member.
type clusterRouters struct {
	*dataplane.Manager
	n *Node
}

// UpdateLink changes the link on this node (ErrNoLink when it knows no such
// link), then on every other member that answers in time; a member that
// does not know the link, or does not answer, is logged.
func (c clusterRouters) UpdateLink(id string, ch dataplane.LinkChange) (dataplane.Link, error) {
	l, err := c.Manager.UpdateLink(id, ch)
	if err != nil {
		return l, err
	}
	c.n.sendLinkUpdate(linkUpdate{ID: id, StaticCost: ch.StaticCost, Down: ch.Down})
	return l, nil
}

// registerLinkUpdate answers the other members' link changes.
func (n *Node) registerLinkUpdate() {
	n.Raft.RegisterRPC(rpcLinkUpdate, func(_ context.Context, _ *x509.Certificate, req []byte) ([]byte, error) {
		var u linkUpdate
		if err := json.Unmarshal(req, &u); err != nil {
			return nil, err
		}
		if n.Routers == nil {
			return nil, dataplane.ErrNoLink
		}
		_, err := n.Routers.UpdateLink(u.ID, dataplane.LinkChange{StaticCost: u.StaticCost, Down: u.Down})
		return nil, err
	})
}

// sendLinkUpdate sends u to every other member at once and waits for their
// answers (up to linkUpdateTimeout).
func (n *Node) sendLinkUpdate(u linkUpdate) {
	body, _ := json.Marshal(u)
	ctx, cancel := context.WithTimeout(context.Background(), linkUpdateTimeout)
	defer cancel()
	err := n.eachPeer(func(id, addr string) {
		if _, err := n.Raft.CallRPC(ctx, addr, rpcLinkUpdate, body); err != nil {
			level := n.log.Warn
			if re := (*cluster.RemoteError)(nil); errors.As(err, &re) && re.Message == dataplane.ErrNoLink.Error() {
				level = n.log.Info // its routers have not reported the link (yet)
			}
			level("a link change did not reach a member", "link", u.ID, "member", id, "error", err)
		}
	})
	if err != nil {
		n.log.Warn("a link change was made on this node only", "link", u.ID, "error", err)
	}
}
