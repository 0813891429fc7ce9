package fabricmgmt

import (
	"reflect"
	"strings"
	"testing"

	"edgectl/dataplane/wire"
	"edgectl/store"
)

// A router's verdicts become the states OpenZiti's CLI prints; a terminator
// the router did not judge stays Unknown; the invalid ones are returned.
func TestApplyTerminatorStates(t *testing.T) {
	details := []wire.TerminatorDetail{{TerminatorID: "ok"}, {TerminatorID: "binding"}, {TerminatorID: "gone"}, {TerminatorID: "bad"}, {TerminatorID: "unjudged"}}
	for i := range details {
		details[i].State = wire.TerminatorUnknown
	}
	invalid := applyTerminatorStates(details, map[string]wire.RouterTerminatorState{
		"ok":      {Valid: true, Detail: "hosted"},
		"binding": {Reason: wire.InvalidUnknownBinding},
		"gone":    {Reason: wire.InvalidUnknownTerminator, Detail: "no such terminator"},
		"bad":     {Reason: wire.InvalidBadState},
	})
	want := []wire.TerminatorState{wire.TerminatorValid, wire.TerminatorInvalidUnknownBinding, wire.TerminatorInvalidUnknownTerminator,
		wire.TerminatorInvalidBadState, wire.TerminatorUnknown}
	for i, d := range details {
		if d.State != want[i] {
			t.Errorf("%s: state %d, want %d", d.TerminatorID, d.State, want[i])
		}
	}
	if details[0].Detail != "hosted" || details[2].Detail != "no such terminator" {
		t.Errorf("details: %+v", details)
	}
	if !reflect.DeepEqual(invalid, []string{"binding", "gone", "bad"}) {
		t.Errorf("invalid %v", invalid)
	}
}

// A router's links against the node's, as OpenZiti's controller judges them.
func TestCompareRouterLinks(t *testing.T) {
	conn := wire.LinkConn{Type: "payload", LocalAddr: "10.0.0.1:1", RemoteAddr: "10.0.0.2:2"}
	known := map[string]Link{
		"both":      {ID: "both", SrcRouterID: "A", DstRouterID: "B", Conns: []wire.LinkConn{conn}, StateIteration: 2},
		"wrongconn": {ID: "wrongconn", SrcRouterID: "A", DstRouterID: "B", Conns: []wire.LinkConn{conn}, StateIteration: 2},
		"listened":  {ID: "listened", SrcRouterID: "C", DstRouterID: "A"},
		"destgone":  {ID: "destgone", SrcRouterID: "A", DstRouterID: "D"},
		"nodeonly":  {ID: "nodeonly", SrcRouterID: "C", DstRouterID: "A"},
	}
	ic := func(c wire.LinkConn) []struct{ Type, Source, Dest string } {
		return []struct{ Type, Source, Dest string }{{c.Type, c.LocalAddr, c.RemoteAddr}}
	}
	other := conn
	other.RemoteAddr = "10.0.0.9:9"
	inspected := []wire.InspectedLink{
		{ID: "both", Dest: "B", Dialed: true, ConnStateIteration: 2, Connections: ic(conn)},
		{ID: "wrongconn", Dest: "B", Dialed: true, ConnStateIteration: 2, Connections: ic(other)},
		{ID: "listened", Dest: "C"},
		{ID: "destgone", Dest: "D", Dialed: true},
		{ID: "routeronly-up", Dest: "B", Dialed: true},
		{ID: "routeronly-down", Dest: "D"},
	}
	connected := func(id string) bool { return id != "D" }
	got := compareRouterLinks("A", inspected, known, connected)
	valid := map[string]bool{}
	for _, d := range got {
		valid[d.LinkID] = d.IsValid
	}
	want := map[string]bool{"both": true, "wrongconn": false, "listened": true, "destgone": false,
		"routeronly-up": false, "routeronly-down": true, "nodeonly": false}
	if !reflect.DeepEqual(valid, want) {
		t.Fatalf("valid %v, want %v", valid, want)
	}
	last := got[len(got)-1]
	if last.LinkID != "nodeonly" || last.RouterState != wire.LinkUnknown || last.CtrlState != wire.LinkEstablished || last.DestRouterID != "C" || last.Dialed {
		t.Fatalf("the link only the node has: %+v", last)
	}
	if got[1].Messages == nil || !strings.Contains(got[1].Messages[0], "10.0.0.9:9") {
		t.Fatalf("a connection that differs is not named: %+v", got[1])
	}
}

// A different count of connections or state iteration is noted only; a
// connection that differs makes the link wrong.
func TestConnDifferences(t *testing.T) {
	conn := wire.LinkConn{Type: "payload", LocalAddr: "a:1", RemoteAddr: "b:2"}
	l := Link{ID: "l", Conns: []wire.LinkConn{conn}, StateIteration: 3}
	same := wire.InspectedLink{ConnStateIteration: 3, Connections: []struct{ Type, Source, Dest string }{{"payload", "a:1", "b:2"}}}
	if msgs, wrong := connDifferences(l, same); msgs != nil || wrong {
		t.Fatalf("the same connections: %v %v", msgs, wrong)
	}
	for name, il := range map[string]wire.InspectedLink{
		"count":     {ConnStateIteration: 3},
		"iteration": {ConnStateIteration: 4, Connections: same.Connections},
	} {
		if msgs, wrong := connDifferences(l, il); len(msgs) != 1 || wrong {
			t.Errorf("%s: %v %v, want a note only", name, msgs, wrong)
		}
	}
	if msgs, wrong := connDifferences(l, wire.InspectedLink{ConnStateIteration: 3, Connections: []struct{ Type, Source, Dest string }{{"ack", "a:1", "b:2"}}}); len(msgs) != 1 || !wrong {
		t.Fatalf("a connection that differs: %v %v", msgs, wrong)
	}
}

// The filter of a validation selects edge routers and routers alike, in its
// order, after its skip, within its limit; one that does not compile is an
// error naming it.
func TestSelectRecords(t *testing.T) {
	s := store.New()
	tx := s.Write()
	for _, name := range []string{"er-b", "er-a", "er-c"} {
		if err := tx.CreateEdgeRouter(&store.EdgeRouter{Base: store.Base{ID: "id-" + name}, Named: store.Named{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.CreateRouter(&store.Router{Base: store.Base{ID: "id-r"}, Named: store.Named{Name: "r"}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Finish(); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	names := func(filter string) string {
		t.Helper()
		recs, err := selectRecords(s.Read(), filter, store.KindEdgeRouter, store.KindRouter)
		if err != nil {
			t.Fatalf("%q: %v", filter, err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.RecordName())
		}
		return strings.Join(out, " ")
	}
	for filter, want := range map[string]string{
		"":                            "er-a er-b er-c r",
		`name contains "er"`:          "er-a er-b er-c",
		`true sort by name desc`:      "er-c er-b er-a r",
		`true skip 1 limit 2`:         "er-b er-c",
		`true limit none`:             "er-a er-b er-c r",
		`name = "r" or name = "er-b"`: "er-b r",
	} {
		if got := names(filter); got != want {
			t.Errorf("%q: %q, want %q", filter, got, want)
		}
	}
	if _, err := selectRecords(s.Read(), `nosuchfield = 1`, store.KindEdgeRouter); err == nil || !strings.Contains(err.Error(), "nosuchfield") {
		t.Fatalf("a bad filter: %v", err)
	}
}

// A router's SDK terminators against the model's edge terminators on it.
func TestCompareSdkTerminators(t *testing.T) {
	got := compareSdkTerminators([]wire.InspectedSdkTerminator{
		{ID: "both", State: "established", CreateTime: "t0"},
		{ID: "pending", State: "establishing", OperationActive: true},
		{ID: "routeronly", State: "established"},
	}, map[string]bool{"both": true, "pending": true, "modelonly": true})
	want := []wire.RouterSdkTerminatorDetail{
		{TerminatorID: "both", CtrlState: wire.TerminatorValid, RouterState: "established", IsValid: true, CreateTime: "t0"},
		{TerminatorID: "pending", CtrlState: wire.TerminatorValid, RouterState: "establishing", OperationActive: true},
		{TerminatorID: "routeronly", CtrlState: wire.TerminatorUnknown, RouterState: "established"},
		{TerminatorID: "modelonly", CtrlState: wire.TerminatorValid, RouterState: "unknown"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}
