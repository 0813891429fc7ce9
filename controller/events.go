package controller

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"edgectl/cluster"
	"edgectl/fsm"
	"edgectl/store"
	"edgectl/webhook"
)

// newDeliverer makes the webhook deliverer (startEventDelivery runs it).
func (n *Node) newDeliverer() *webhook.Deliverer {
	return &webhook.Deliverer{
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
}

// startEventDelivery runs the webhook deliveries (leader only) until the
// node stops.
func (n *Node) startEventDelivery(ctx context.Context) {
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

// wantedRetention is st with the retention this node was started with.
func (n *Node) wantedRetention(st store.EventState) store.EventState {
	if n.cfg.EventRetentionCount > 0 {
		st.RetentionCount = n.cfg.EventRetentionCount
	}
	if n.cfg.EventRetention > 0 {
		st.RetentionSeconds = int64(n.cfg.EventRetention / time.Second)
	}
	return st
}

// applyEventRetention sets the cluster's event retention to the one this
// node was started with, once the event log is on, if it differs: the
// retention is replicated, so every node keeps the same events.
func (n *Node) applyEventRetention() {
	if n.cfg.EventRetentionCount == 0 && n.cfg.EventRetention == 0 {
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for wait := time.Duration(0); ; wait = time.Second {
			select {
			case <-n.stopping:
				return
			case <-time.After(wait):
			}
			cur := n.Store.Read().Events()
			if !cur.Enabled {
				continue // the bootstrap or the upgrade step turns it on with this retention
			}
			want := n.wantedRetention(cur)
			if want == cur {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := n.Writer.Do(ctx, fsm.CmdEventsEnable, want)
			cancel()
			if err == nil {
				n.log.Info("event retention set", "count", want.RetentionCount, "max_age", time.Duration(want.RetentionSeconds)*time.Second)
				return
			}
			n.log.Debug("event retention not set yet", "reason", err)
		}
	}()
}

// restoredMarker is the file `edgectl restore` leaves in the data dir: the
// restored node reports the restore as a cluster event when it first runs.
const restoredMarker = "restored.json"

// reportClusterEvents reports, as cluster events, what happens to this
// node alone: it won an election (once per term), it took a snapshot, it
// was restored from one. Each goes through the log, so every member
// records the same event; a report that cannot be written (no leader) is
// tried again while it is still true.
func (n *Node) reportClusterEvents() {
	n.snapReport.Lock()
	n.snapReported = n.Raft.Stats().LastSnapshotIndex
	n.snapReport.Unlock()
	var reportedTerm uint64
	n.every(250*time.Millisecond, func() {
		if !n.Store.Read().Events().Cluster {
			return
		}
		st := n.Raft.Stats()
		if n.Raft.IsLeader() && st.Term > reportedTerm {
			if n.reportClusterEvent(context.Background(), fsm.ClusterEvent{Action: fsm.ClusterLeaderChanged, NodeID: n.Raft.ID(), Term: st.Term}) == nil {
				reportedTerm = st.Term
			}
		}
		_ = n.reportSnapshot(context.Background(), st.LastSnapshotIndex)
		marker := filepath.Join(n.cfg.DataDir, restoredMarker)
		if raw, err := os.ReadFile(marker); err == nil {
			var detail map[string]any
			_ = json.Unmarshal(raw, &detail)
			if n.reportClusterEvent(context.Background(), fsm.ClusterEvent{Action: fsm.ClusterRestored, NodeID: n.Raft.ID(), Detail: detail}) == nil {
				_ = os.Remove(marker)
			}
		}
	})
}

// reportClusterEvent writes one cluster event through the log.
func (n *Node) reportClusterEvent(ctx context.Context, ev fsm.ClusterEvent) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := n.Writer.Do(ctx, fsm.CmdClusterEvent, ev)
	if err != nil {
		n.log.Debug("cluster event not recorded yet", "action", ev.Action, "reason", err)
	}
	return err
}

// reportSnapshot reports this node's snapshot at index as a snapshotTaken
// event, once: the periodic check (reportClusterEvents) and a snapshot an
// operator asked for (snapshotReporter) share what was reported, so an
// asked-for snapshot's event is in the log when the request returns and is
// not reported a second time.
func (n *Node) reportSnapshot(ctx context.Context, index uint64) error {
	n.snapReport.Lock()
	defer n.snapReport.Unlock()
	if index <= n.snapReported || !n.Store.Read().Events().Cluster {
		return nil
	}
	err := n.reportClusterEvent(ctx, fsm.ClusterEvent{Action: fsm.ClusterSnapshotTaken, NodeID: n.Raft.ID(),
		Detail: map[string]any{"index": index}})
	if err == nil {
		n.snapReported = index
	}
	return err
}

// snapshotReporter is the cluster the API sees: a snapshot taken on
// request is reported as a cluster event before the request returns.
type snapshotReporter struct {
	*cluster.Node
	n *Node
}

func (c snapshotReporter) Snapshot(ctx context.Context) (cluster.SnapshotInfo, error) {
	info, err := c.Node.Snapshot(ctx)
	if err != nil {
		return info, err
	}
	if err := c.n.reportSnapshot(ctx, info.Index); err != nil {
		// Taken; the periodic check reports it once the log takes writes.
		c.n.log.Warn("snapshot taken; its event is not recorded yet", "index", info.Index, "reason", err)
	}
	return info, nil
}
