package fsm

import (
	"encoding/json"
	"sort"

	"github.com/hashicorp/raft"

	"edgectl/store"
)

// The cluster namespace of the event log (command version 5, turned on by
// CmdEventsCluster): memberAdded, memberRemoved and memberChanged come
// from the configuration entries themselves, so every member derives them
// in log order; leaderChanged, snapshotTaken and restored are reported by
// the node they happened on, with CmdClusterEvent.

var (
	// CmdEventsCluster turns the cluster namespace on.
	CmdEventsCluster = command("events.cluster", 5)
	// CmdClusterEvent records what a node reports of itself.
	CmdClusterEvent = command("cluster.event", 5)
)

// Cluster event actions a node reports.
const (
	ClusterLeaderChanged = "leaderChanged"
	ClusterSnapshotTaken = "snapshotTaken"
	ClusterRestored      = "restored"
)

// ClusterEvent is the payload of CmdClusterEvent.
type ClusterEvent struct {
	Action string         `json:"action"`
	NodeID string         `json:"nodeId"`
	Term   uint64         `json:"term,omitempty"` // leaderChanged: the term won
	Detail map[string]any `json:"detail,omitempty"`
}

// clusterEventResult is what CmdClusterEvent's handler returns: the event
// to record (nil: a leaderChanged for a term already reported).
type clusterEventResult struct{ event *store.Event }

func registerClusterEvents(f *FSM) {
	on(f, CmdEventsCluster, func(tx *store.Tx, _ *struct{}) (any, error) {
		st := tx.Events()
		st.Cluster = true
		return nil, tx.SetEvents(st, tx.Now())
	})
	on(f, CmdClusterEvent, func(tx *store.Tx, p *ClusterEvent) (any, error) {
		switch p.Action {
		case ClusterLeaderChanged, ClusterSnapshotTaken, ClusterRestored:
		default:
			return nil, store.Invalid("action", "is not a cluster event a node reports", p.Action)
		}
		st := tx.Events()
		if !st.Enabled || !st.Cluster {
			return &clusterEventResult{}, nil
		}
		if p.Action == ClusterLeaderChanged {
			if p.Term <= st.LeaderTerm {
				return &clusterEventResult{}, nil // reported already (a retried proposal)
			}
			st.LeaderTerm = p.Term
			if err := tx.SetEvents(st, tx.Now()); err != nil {
				return nil, err
			}
			if p.Detail == nil {
				p.Detail = map[string]any{}
			}
			p.Detail["term"] = p.Term
		}
		e := &store.Event{Namespace: "cluster", Action: p.Action, EntityType: "controllers", EntityID: p.NodeID,
			EntityName: controllerName(tx, p.NodeID), Actor: store.EventActor{NodeID: p.NodeID}}
		if len(p.Detail) > 0 {
			e.After, _ = json.Marshal(p.Detail)
		}
		return &clusterEventResult{event: e}, nil
	})
}

func controllerName(tx *store.Tx, id string) string {
	if c := tx.Controller(id); c != nil {
		return c.Name
	}
	return ""
}

// membershipEvents records a configuration entry's members and returns
// the events of what changed (none the first time: there is nothing to
// compare with).
func membershipEvents(tx *store.Tx, c raft.Configuration, index uint64) ([]*store.Event, error) {
	cur := make([]store.Member, 0, len(c.Servers))
	for _, s := range c.Servers {
		cur = append(cur, store.Member{ID: string(s.ID), Address: string(s.Address), Suffrage: s.Suffrage.String()})
	}
	sort.Slice(cur, func(i, j int) bool { return cur[i].ID < cur[j].ID })
	prev := tx.Membership()
	if err := tx.SetMembership(cur, tx.EventsClock()); err != nil {
		return nil, err
	}
	if prev == nil {
		return nil, nil
	}
	was := map[string]store.Member{}
	for _, m := range prev {
		was[m.ID] = m
	}
	var out []*store.Event
	add := func(action string, m store.Member, before *store.Member) {
		e := &store.Event{Index: index, Namespace: "cluster", Action: action, EntityType: "controllers", EntityID: m.ID,
			EntityName: controllerName(tx, m.ID)}
		if action != "memberRemoved" {
			e.After, _ = json.Marshal(m)
		}
		if before != nil {
			e.Before, _ = json.Marshal(before)
		}
		out = append(out, e)
	}
	for _, m := range cur {
		old, ok := was[m.ID]
		switch {
		case !ok:
			add("memberAdded", m, nil)
		case old != m:
			add("memberChanged", m, &old)
		}
		delete(was, m.ID)
	}
	for _, m := range prev {
		if _, ok := was[m.ID]; ok {
			add("memberRemoved", m, &m)
		}
	}
	return out, nil
}
