package dataplane

import (
	"bytes"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"

	"google.golang.org/protobuf/encoding/protowire"
)

// fullStates are the full states sent so far: encoded for a router, and
// shared from an encoding made for another.
func (n *testNet) fullStates() (encoded, shared int) {
	return int(counterValue(n.t, n.m.metrics.fullStates, "source", "encoded")),
		int(counterValue(n.t, n.m.metrics.fullStates, "source", "shared"))
}

// perRouterState is the full state as each router's subscription encoded
// it before the encodings were shared: the model read now, at the applied
// index.
func (n *testNet) perRouterState() []byte {
	applied, _ := n.m.cfg.AppliedIndex()
	return wire.DataState(n.m.fullState(n.s.Read()), applied, "tl")
}

// quiet waits until the routers' hostnames are recorded: no write of the
// test's routers is left to move the applied index.
func (n *testNet) quiet(ids ...string) {
	n.t.Helper()
	poll(n.t, "the routers' hostnames are in the model", func() bool {
		for _, id := range ids {
			er, err := store.GetAs[*store.EdgeRouter](n.s.Read(), store.KindEdgeRouter, id)
			if err != nil || er.Hostname != "host-"+strings.ToLower(id) {
				return false
			}
		}
		return true
	})
}

// modelOf applies a full state's events, then change sets', to an empty
// router data model: "field id" → the entity's encoding, "policy id type
// related" for a policy's members.
func modelOf(t *testing.T, state []byte, sets ...[]byte) map[string]string {
	t.Helper()
	model := map[string]string{}
	apply := func(events [][]byte) {
		for _, ev := range events {
			var action uint64
			var num protowire.Number
			var raw []byte
			mustFields(t, ev, func(n protowire.Number, v uint64, b []byte) {
				switch n {
				case 1:
					action = v
				case 3:
				default:
					num, raw = n, b
				}
			})
			if num == 16 {
				var policy string
				var ids []string
				var related uint64
				var add bool
				mustFields(t, raw, func(n protowire.Number, v uint64, b []byte) {
					switch n {
					case 1:
						policy = string(b)
					case 2:
						ids = append(ids, string(b))
					case 3:
						related = v
					case 4:
						add = v == 1
					}
				})
				for _, id := range ids {
					k := fmt.Sprintf("policy %s %d %s", policy, related, id)
					if add {
						model[k] = ""
					} else {
						delete(model, k)
					}
				}
				continue
			}
			var id string
			mustFields(t, raw, func(n protowire.Number, _ uint64, b []byte) {
				if n == 1 && id == "" {
					id = string(b)
				}
			})
			k := fmt.Sprintf("%d %s", num, id)
			if wire.Action(action) == wire.Delete {
				delete(model, k)
			} else {
				model[k] = string(raw)
			}
		}
	}
	apply(fieldsNumbered(t, state, 1))
	for _, set := range sets {
		apply(fieldsNumbered(t, set, 3))
	}
	return model
}

func mustFields(t *testing.T, b []byte, fn func(protowire.Number, uint64, []byte)) {
	t.Helper()
	if err := wire.Fields(b, func(n protowire.Number, v uint64, raw []byte) error { fn(n, v, raw); return nil }); err != nil {
		t.Fatal(err)
	}
}

// fieldsNumbered are the values of field num in b.
func fieldsNumbered(t *testing.T, b []byte, num protowire.Number) [][]byte {
	t.Helper()
	var out [][]byte
	mustFields(t, b, func(n protowire.Number, _ uint64, raw []byte) {
		if n == num {
			out = append(out, raw)
		}
	})
	return out
}

// bodies are the bodies of messages.
func bodies(ms []*ctrlchan.Message) [][]byte {
	var out [][]byte
	for _, m := range ms {
		out = append(out, m.Body)
	}
	return out
}

func TestFullState_RoutersSubscribingTogetherShareOneEncodingOfTheSameBytes(t *testing.T) {
	n := newTestNet(t)
	ids := []string{"A", "B", "C", "D", "E"}
	var routers []*fakeRouter
	for _, id := range ids {
		routers = append(routers, n.addRouter(id))
		n.syncStatus(id, SyncDone)
	}
	n.quiet(ids...)
	for _, fr := range routers {
		fr.send(ctrlchan.NewMessage(wire.SubscribeToDataModelRequestType, subscribeBody(0, 60, "")))
	}
	want := n.perRouterState()
	for _, fr := range routers {
		if got := fr.gotN(wire.DataStateType, 1)[0].Body; !bytes.Equal(got, want) {
			t.Fatalf("router %s got a full state of %d bytes, not the %d bytes of its own encoding", fr.id, len(got), len(want))
		}
	}
	if encoded, shared := n.fullStates(); encoded != 1 || shared != len(ids)-1 {
		t.Fatalf("%d routers subscribing at one index: %d encodings, %d shared; want 1 and %d", len(ids), encoded, shared, len(ids)-1)
	}
}

func TestFullState_ARouterAtALaterIndexGetsTheSharedStateAndTheChangesAfterIt(t *testing.T) {
	var skew atomic.Int64
	n := newTestNet(t, func(c *Config) { c.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) } })
	a, b := n.addRouter("A"), n.addRouter("B")
	n.syncStatus("A", SyncDone)
	n.syncStatus("B", SyncDone)
	n.quiet("A", "B")
	a.send(ctrlchan.NewMessage(wire.SubscribeToDataModelRequestType, subscribeBody(0, 60, "")))
	first := a.gotN(wire.DataStateType, 1)[0].Body
	n.do(fsm.CmdServiceCreate, &store.Service{Base: store.Base{ID: "svc2"}, Named: store.Named{Name: "svc2"}})
	a.gotN(wire.DataStateChangeSetType, 1)

	// B comes after the change: A's encoding, then the change set.
	b.send(ctrlchan.NewMessage(wire.SubscribeToDataModelRequestType, subscribeBody(0, 60, "")))
	if got := b.gotN(wire.DataStateType, 1)[0].Body; !bytes.Equal(got, first) {
		t.Fatal("the router after the change did not get the encoding made for the first")
	}
	sets := b.gotN(wire.DataStateChangeSetType, 1)
	if encoded, shared := n.fullStates(); encoded != 1 || shared != 1 {
		t.Fatalf("%d encodings, %d shared; want 1 and 1", encoded, shared)
	}
	now := modelOf(t, n.perRouterState())
	if _, ok := now["11 svc2"]; !ok {
		t.Fatal("the model read now has no svc2: the check checks nothing")
	}
	for _, fr := range []*fakeRouter{a, b} {
		if got := modelOf(t, first, bodies(fr.messages(wire.DataStateChangeSetType))...); !maps.Equal(got, now) {
			t.Fatalf("router %s holds %d entries after the state and %d change sets, the model read now %d", fr.id, len(got), len(sets), len(now))
		}
	}

	// Past fullStateKeep the encoding is not offered: C is sent one of
	// the model at the index it subscribes at.
	skew.Store(int64(fullStateKeep + time.Second))
	c := n.addRouter("C")
	n.syncStatus("C", SyncDone)
	n.quiet("C")
	c.send(ctrlchan.NewMessage(wire.SubscribeToDataModelRequestType, subscribeBody(0, 60, "")))
	want := n.perRouterState()
	if got := c.gotN(wire.DataStateType, 1)[0].Body; !bytes.Equal(got, want) {
		t.Fatalf("router C got a full state of %d bytes, not the %d of the model at its index", len(got), len(want))
	}
	if encoded, _ := n.fullStates(); encoded != 2 {
		t.Fatalf("%d encodings after the first expired; want 2", encoded)
	}
	if got := modelOf(t, want); !maps.Equal(got, now) {
		t.Fatal("router C's state is not the model")
	}
}

func TestFullState_ARestoredModelIsEncodedAgain(t *testing.T) {
	n := newTestNet(t)
	a := n.addRouter("A")
	n.syncStatus("A", SyncDone)
	n.quiet("A")
	a.send(ctrlchan.NewMessage(wire.SubscribeToDataModelRequestType, subscribeBody(0, 60, "")))
	a.gotN(wire.DataStateType, 1)
	// A snapshot replaced the model at the same index: its encoding is not
	// the new model's.
	mustWrite(t, n.s, func(tx *store.Tx) error {
		return tx.Insert(store.KindService, &store.Service{Base: store.Base{ID: "restored"}, Named: store.Named{Name: "restored"}})
	})
	n.m.Restored(0)
	got := a.gotN(wire.DataStateType, 2)[1].Body
	if _, ok := modelOf(t, got)["11 restored"]; !ok {
		t.Fatal("after a restore the router got the encoding of the model before it")
	}
	if encoded, shared := n.fullStates(); encoded != 2 || shared != 0 {
		t.Fatalf("%d encodings, %d shared; want 2 and 0", encoded, shared)
	}
}
