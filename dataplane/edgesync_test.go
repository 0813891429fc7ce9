package dataplane

import (
	"context"
	"slices"
	"testing"

	"edgectl/auth"
	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"

	"google.golang.org/protobuf/encoding/protowire"
)

// do proposes a command through the node's writer.
func (n *testNet) do(cmd fsm.CommandType, payload any) {
	n.t.Helper()
	if _, err := n.m.cfg.Writer.Do(context.Background(), cmd, payload); err != nil {
		n.t.Fatalf("%s: %v", cmd, err)
	}
}

// got waits for router fr to have at least k messages of content type ct.
func (fr *fakeRouter) gotN(ct int32, k int) []*ctrlchan.Message {
	fr.t.Helper()
	var ms []*ctrlchan.Message
	poll(fr.t, "router "+fr.id+" gets a message of content type", func() bool {
		ms = fr.messages(ct)
		return len(ms) >= k
	})
	return ms
}

func TestEdgeSync_HelloFullStateResyncAndTheHostnameRecorded(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	n.syncStatus("A", SyncDone)
	if full := a.gotN(wire.APISessionAddedType, 1)[0]; string(full.Headers[wire.SyncStrategyTypeHeader]) != "instant" {
		t.Fatalf("full state headers %v", full.Headers)
	}
	poll(t, "the router's hostname is in the model", func() bool {
		er, err := store.GetAs[*store.EdgeRouter](n.s.Read(), store.KindEdgeRouter, "A")
		return err == nil && er.Hostname == "host-a"
	})
	st := n.m.Status("A")
	if !st.Online || st.Hostname != "host-a" || !slices.Equal(n.m.Connected(), []string{"A"}) {
		t.Fatalf("status %+v, connected %v", st, n.m.Connected())
	}
	if n.m.Status("nope").Online {
		t.Fatal("an unknown router is online")
	}
	a.send(ctrlchan.NewMessage(wire.RequestClientReSyncType, nil))
	a.gotN(wire.APISessionAddedType, 2)
	// The API sessions the router reports: an unknown one is removed.
	hb := protowire.AppendTag(nil, 1, protowire.BytesType)
	hb = protowire.AppendString(hb, n.apiSession)
	hb = protowire.AppendTag(hb, 1, protowire.BytesType)
	hb = protowire.AppendString(hb, "unknown-token")
	a.send(ctrlchan.NewMessage(wire.APISessionHeartbeatType, hb))
	a.gotN(wire.APISessionRemovedType, 1)
	// A model restored from a snapshot: the full state again.
	n.m.Restored(0)
	a.gotN(wire.APISessionAddedType, 3)
}

func TestEdgeSync_AnEndedSessionIsSentAndEndsItsCircuits(t *testing.T) {
	n := line(t)
	id := circuitID(t, n.dial("A"))
	n.do(fsm.CmdSessionDelete, fsm.Delete{ID: "sess"})
	n.routers["A"].gotN(wire.SessionRemovedType, 1)
	poll(t, "the circuit ends", func() bool { return n.path(id) == nil })
	n.settled(id)
}

// A session removal queued together with a full state (the hello's, a
// resync's, or a router too far behind) is still sent: the full state
// holds no service sessions, so without it the router would keep the
// session's connections open.
func TestEdgeSync_ASessionRemovalQueuedWithAFullStateIsSent(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	n.syncStatus("A", SyncDone)
	before := len(a.messages(wire.APISessionAddedType))
	s := &n.m.router("A").edge
	removed := ctrlchan.NewMessage(wire.SessionRemovedType, wire.APISessionRemoved(nil, []string{"gone"}))
	s.mu.Lock() // both seen at one wake-up
	s.full = true
	s.queue = append(s.queue, syncItem{msg: removed, index: 7})
	s.mu.Unlock()
	s.signal()
	a.gotN(wire.APISessionAddedType, before+1)
	a.gotN(wire.SessionRemovedType, 1)

}

// Before the hello is done, and when a router is too far behind, the full
// state stands for the change sets queued for it; the session removals
// stay queued.
func TestEdgeSync_TheQueueKeepsTheSessionRemovals(t *testing.T) {
	removed := ctrlchan.NewMessage(wire.SessionRemovedType, wire.APISessionRemoved(nil, []string{"gone"}))
	q := routerSync{wake: make(chan struct{}, 1)}
	q.push(syncItem{set: &rdmSet{index: 1}, index: 1})
	q.push(syncItem{msg: removed, index: 2})
	if len(q.queue) != 1 || q.queue[0].msg == nil {
		t.Fatalf("before the hello: %d queued", len(q.queue))
	}
	q = routerSync{live: true, wake: make(chan struct{}, 1)}
	for i := range maxQueued - 1 {
		q.push(syncItem{set: &rdmSet{index: uint64(i + 1)}, index: uint64(i + 1)})
	}
	q.push(syncItem{msg: removed, index: maxQueued})
	if q.full || len(q.queue) != maxQueued {
		t.Fatalf("before the overflow: full %v, %d queued", q.full, len(q.queue))
	}
	q.push(syncItem{msg: removed, index: maxQueued + 1})
	if !q.full || len(q.queue) != 2 || q.queue[0].msg == nil || q.queue[1].msg == nil {
		t.Fatalf("after the overflow: full %v, %d queued", q.full, len(q.queue))
	}
}

func TestEdgeSync_AnAPISessionThatEndsEndsItsCircuitsAndSessions(t *testing.T) {
	n := line(t)
	id := circuitID(t, n.dial("A"))
	n.m.Applied([]fsm.Changes{{Index: 99, Changes: []store.Change{{Kind: store.KindAPISession, Old: &store.APISession{Base: store.Base{ID: "as"}}}}}})
	poll(t, "the circuit ends", func() bool { return n.path(id) == nil })
	n.settled(id)
}

// subscribeBody is a SubscribeToDataModelRequest.
func subscribeBody(index uint64, seconds uint64, timeline string) []byte {
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, index)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, seconds)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	return protowire.AppendString(b, timeline)
}

func TestRouterDataModel_FullStateThenChangeSetsThenCatchUp(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	n.syncStatus("A", SyncDone)
	a.send(ctrlchan.NewMessage(wire.SubscribeToDataModelRequestType, subscribeBody(0, 60, "")))
	a.gotN(wire.DataStateType, 1)
	n.do(fsm.CmdServiceCreate, &store.Service{Base: store.Base{ID: "svc2"}, Named: store.Named{Name: "svc2"}})
	sets := a.gotN(wire.DataStateChangeSetType, 1)
	if n.m.syncLag() < 0 {
		t.Fatal("a negative lag")
	}
	// A router of this timeline at the index before the change gets the
	// change set again, not the full state.
	idx := fieldsOf(sets[0].Body)[1].v
	before := len(a.messages(wire.DataStateType))
	a.send(ctrlchan.NewMessage(wire.SubscribeToDataModelRequestType, subscribeBody(idx-1, 60, "tl")))
	a.gotN(wire.DataStateChangeSetType, 2)
	if len(a.messages(wire.DataStateType)) != before {
		t.Fatal("a router that was behind by one set got the full state")
	}
	// Another timeline: the full state.
	a.send(ctrlchan.NewMessage(wire.SubscribeToDataModelRequestType, subscribeBody(idx, 60, "other")))
	a.gotN(wire.DataStateType, before+1)
}

func TestHeartbeat_KnownSessionsAreTouched(t *testing.T) {
	act := auth.NewActivity()
	n := newTestNet(t, func(c *Config) { c.Activity = act })
	a := n.addRouter("A")
	n.syncStatus("A", SyncDone)
	hb := protowire.AppendTag(nil, 1, protowire.BytesType)
	hb = protowire.AppendString(hb, n.apiSession)
	a.send(ctrlchan.NewMessage(wire.APISessionHeartbeatType, hb))
	a.barrier()
	if len(a.messages(wire.APISessionRemovedType)) != 0 {
		t.Fatal("a known API session was removed")
	}
}
