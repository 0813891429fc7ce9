package controller

import (
	"context"

	"edgectl/fsm"
	"edgectl/webhook"
)

// startEventDelivery runs the webhook deliveries (leader only) until the
// node stops.
func (n *Node) startEventDelivery(ctx context.Context) {
	n.deliverer = &webhook.Deliverer{
		Store: n.Store,
		Propose: func(ctx context.Context, t fsm.CommandType, payload any) error {
			_, err := n.Writer.Do(ctx, t, payload)
			return err
		},
		IsLeader:  n.Raft.IsLeader,
		Endpoints: func() *webhook.Endpoints { return webhook.ClusterEndpoints(n.Store.Read(), n.listenAddrs()...) },
		Log:       n.log.Named("webhook"),
		UserAgent: "edgectl/" + n.cfg.Version,
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.deliverer.Run(ctx)
	}()
}

// listenAddrs are this node's listeners besides the API and cluster
// addresses the controller records hold.
func (n *Node) listenAddrs() []string {
	var out []string
	if n.cfg.MetricsAddr != "" {
		out = append(out, n.cfg.MetricsAddr)
	}
	if n.apiLn != nil {
		out = append(out, n.apiLn.Addr().String())
	}
	return out
}
