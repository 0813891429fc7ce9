package controller

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"sync"
	"time"

	"edgectl/dataplane"
)

// An operator's change of a router link (PATCH /links/{id}: its static
// cost, or down) is made on every member: each node keeps the links its
// routers report to it and routes its own circuits over them
// (docs/openziti.md, "Links and paths"), so a change made on one node alone
// would steer only the circuits that node routes. The node that takes the
// request makes the change and sends it, with the link's iteration, to the
// others over the cluster port, waiting up to linkUpdateTimeout for their
// answers, which the API's answer lists. Like the links, the changes are in
// memory: a node that restarts has none.

// rpcLinkUpdate is the cluster RPC that carries a link change.
const rpcLinkUpdate = "edgectl.linkUpdate"

// linkUpdateTimeout bounds the wait for the other members.
const linkUpdateTimeout = 2 * time.Second

// linkUpdate is a link change on the cluster port.
type linkUpdate struct {
	ID         string `json:"id"`
	Iteration  uint32 `json:"iteration"`
	StaticCost *int   `json:"staticCost,omitempty"`
	Down       *bool  `json:"down,omitempty"`
}

// clusterDataPlane is the data plane as the API sees it: this node's, with
// a link's change made on every member.
type clusterDataPlane struct {
	*dataplane.Manager
	n *Node
}

// ChangeLinkEverywhere changes the link on this node (ErrNoLink when it has
// no such link), then on every other member, and returns what each member
// did, by node id: dataplane.LinkChanged, or why not.
func (c clusterDataPlane) ChangeLinkEverywhere(ctx context.Context, id string, ch dataplane.LinkChange) (map[string]string, error) {
	l, err := c.Manager.UpdateLink(id, ch)
	if err != nil {
		return nil, err
	}
	out := map[string]string{c.n.Raft.ID(): dataplane.LinkChanged}
	body, _ := json.Marshal(linkUpdate{ID: id, Iteration: l.Iteration, StaticCost: ch.StaticCost, Down: ch.Down})
	ctx, cancel := context.WithTimeout(ctx, linkUpdateTimeout)
	defer cancel()
	var mu sync.Mutex
	err = c.n.eachPeer(func(member, addr string) {
		res, err := c.n.Raft.CallRPC(ctx, addr, rpcLinkUpdate, body)
		what := string(res)
		if err != nil {
			what = "not reached: " + err.Error()
		}
		if what != dataplane.LinkChanged {
			c.n.log.Warn("a link change was not made on a member", "link", id, "member", member, "outcome", what)
		}
		mu.Lock()
		out[member] = what
		mu.Unlock()
	})
	if err != nil {
		c.n.log.Warn("a link change was made on this node only", "link", id, "error", err)
	}
	return out, nil
}

// registerLinkUpdate answers the other members' link changes with what this
// node did.
func (n *Node) registerLinkUpdate(routers *dataplane.Manager) {
	n.Raft.RegisterRPC(rpcLinkUpdate, func(_ context.Context, _ *x509.Certificate, req []byte) ([]byte, error) {
		var u linkUpdate
		if err := json.Unmarshal(req, &u); err != nil {
			return nil, err
		}
		return []byte(routers.ApplyLinkChange(u.ID, u.Iteration, dataplane.LinkChange{StaticCost: u.StaticCost, Down: u.Down})), nil
	})
}
