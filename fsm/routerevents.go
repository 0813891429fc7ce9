package fsm

import (
	"encoding/json"

	"edgectl/store"
)

// The router namespace of the event log: what a node saw of a router's
// control channel (command version 6). The node it happened on reports it
// with CmdRouterEvent, so every member records the same event.

// CmdRouterEvent records a router's connection, disconnection, refusal or
// certificate extension on a node.
var CmdRouterEvent = command("router.event", 6)

// Router event actions.
const (
	RouterConnected    = "connected"
	RouterDisconnected = "disconnected"
	RouterRefused      = "refused"
	RouterCertExtended = "certificateExtended"
)

// RouterEvent is the payload of CmdRouterEvent. RouterID is empty for a
// refused connection whose certificate names no router.
type RouterEvent struct {
	Action   string         `json:"action"`
	RouterID string         `json:"routerId,omitempty"`
	Kind     string         `json:"kind,omitempty"` // edgeRouters or routers
	NodeID   string         `json:"nodeId"`
	Detail   map[string]any `json:"detail,omitempty"`
}

// routerEventResult is the event CmdRouterEvent's handler makes (nil with
// the event log off).
type routerEventResult struct{ event *store.Event }

func registerRouterEvents(f *FSM) {
	on(f, CmdRouterEvent, func(tx *store.Tx, p *RouterEvent) (any, error) {
		switch p.Action {
		case RouterConnected, RouterDisconnected, RouterRefused, RouterCertExtended:
		default:
			return nil, store.Invalid("action", "is not a router event", p.Action)
		}
		if !tx.Events().Enabled {
			return &routerEventResult{}, nil
		}
		typ := "edge-routers"
		if p.Kind == store.KindRouter.Table {
			typ = "routers"
		}
		e := &store.Event{Namespace: "router", Action: p.Action, EntityType: typ, EntityID: p.RouterID,
			Actor: store.EventActor{NodeID: p.NodeID}}
		if p.RouterID != "" {
			for _, k := range []*store.Kind{store.KindEdgeRouter, store.KindRouter} {
				if r, err := tx.Get(k, p.RouterID); err == nil {
					e.EntityName = r.RecordName()
					break
				}
			}
		}
		detail := map[string]any{"nodeId": p.NodeID}
		for k, v := range p.Detail {
			detail[k] = v
		}
		e.After, _ = json.Marshal(detail)
		return &routerEventResult{event: e}, nil
	})
}
