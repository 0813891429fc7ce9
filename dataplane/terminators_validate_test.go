package dataplane

import (
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/store"
)

// validateTerminatorsV2Response is a router's verdicts: valid, or an
// unknown terminator.
func validateTerminatorsV2Response(valid map[string]bool) []byte {
	states := map[string]wire.RouterTerminatorState{}
	for id, ok := range valid {
		states[id] = wire.RouterTerminatorState{Valid: true}
		if !ok {
			states[id] = wire.RouterTerminatorState{Reason: wire.InvalidUnknownTerminator, Detail: "no such terminator"}
		}
	}
	return wire.ValidateTerminatorsV2Response(states)
}

// TestValidateTerminators_TheOnesTheRouterLacksAreRemoved: a router that
// connects is asked about the terminators its hosts made on it; those it
// says it does not have are removed, through the FSM; the rest, and the
// terminators made through the API, stay.
func TestValidateTerminators_TheOnesTheRouterLacksAreRemoved(t *testing.T) {
	st := store.New()
	tx := st.Write()
	for _, term := range []*store.Terminator{
		{Base: store.Base{ID: "kept"}, RouterID: "r-1", ServiceID: "svc", Binding: "edge", Address: "kept", IsSystem: true},
		{Base: store.Base{ID: "gone"}, RouterID: "r-1", ServiceID: "svc", Binding: "edge", Address: "gone", IsSystem: true},
		{Base: store.Base{ID: "by-api"}, RouterID: "r-1", ServiceID: "svc", Binding: "transport", Address: "tcp:x:1"},
		{Base: store.Base{ID: "elsewhere"}, RouterID: "r-2", ServiceID: "svc", Binding: "edge", Address: "elsewhere", IsSystem: true},
	} {
		if err := tx.Insert(store.KindTerminator, term); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
	m := New(Config{Store: st, Writer: fsm.NewWriter(newLocalProposer(fsm.New(st)), time.Now)})
	p := bareRouter(t, m, &Router{ID: "r-1"})

	go m.validateTerminators(p.r)
	req := p.next()
	if req.ContentType != wire.ValidateTerminatorsV2RequestType {
		t.Fatalf("the node sent content type %d, not a terminator validation", req.ContentType)
	}
	ans := ctrlchan.NewMessage(wire.ValidateTerminatorsV2ResponseType, validateTerminatorsV2Response(map[string]bool{"kept": true, "gone": false}))
	ans.SetReplyTo(req)
	ans.Sequence = 9
	p.send(ans)

	deadline := time.Now().Add(5 * time.Second)
	for {
		left := map[string]bool{}
		st.Read().Each(store.KindTerminator, "id", func(r store.Record) bool {
			left[r.GetID()] = true
			return true
		})
		if !left["gone"] {
			if !left["kept"] || !left["by-api"] || !left["elsewhere"] {
				t.Fatalf("terminators left: %v", left)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminator the router lacks is still there after 5 s: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
