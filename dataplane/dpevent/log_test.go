package dpevent

import (
	"errors"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func ids(l *Log, from int64) (out []int64, oldest int64, lost bool) {
	oldest, lost = l.After(from, func(e *Event) bool { out = append(out, e.ID); return true })
	return out, oldest, lost
}

func TestLog_KeepsTheNewestByCount(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	l := New(Config{NodeID: "n1", Count: 3, Now: c.now})
	base := l.Last()
	for i := 0; i < 5; i++ {
		l.Append(&Event{Namespace: Circuit, Action: Created})
	}
	got, oldest, lost := ids(l, 0)
	if want := []int64{base + 3, base + 4, base + 5}; len(got) != 3 || got[0] != want[0] || got[2] != want[2] {
		t.Fatalf("kept %v, want %v", got, want)
	}
	if oldest != base+3 || lost {
		t.Fatalf("oldest %d lost %v", oldest, lost)
	}
	if _, _, lost := ids(l, base+1); !lost {
		t.Fatal("a reader after an event the count dropped is not told it lost events")
	}
	if got, _, lost := ids(l, base+4); lost || len(got) != 1 || got[0] != base+5 {
		t.Fatalf("after %d: %v lost %v", base+4, got, lost)
	}
	if kept, dropped := l.Stats(); kept != 3 || dropped != 2 {
		t.Fatalf("stats %d %d", kept, dropped)
	}
}

func TestLog_DropsEventsOlderThanMaxAge(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	l := New(Config{Count: 100, MaxAge: time.Minute, Now: c.now})
	l.Append(&Event{Namespace: Link, Action: Up})
	c.t = c.t.Add(50 * time.Second)
	l.Append(&Event{Namespace: Link, Action: Down})
	c.t = c.t.Add(20 * time.Second) // the first is 70 s old
	got, _, _ := ids(l, 0)
	if len(got) != 1 {
		t.Fatalf("kept %v, want only the event younger than a minute", got)
	}
}

func TestLog_StampsNodeTimeAndIncreasingIDsAcrossRestarts(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	first := New(Config{NodeID: "n1", Now: c.now})
	e := &Event{Namespace: Router, Action: Connected}
	first.Append(e)
	if e.NodeID != "n1" || !e.At.Equal(c.t) || e.ID <= 0 {
		t.Fatalf("appended %+v", e)
	}
	c.t = c.t.Add(time.Second)
	again := New(Config{NodeID: "n1", Now: c.now})
	e2 := &Event{}
	again.Append(e2)
	if e2.ID <= e.ID {
		t.Fatalf("a restarted node's id %d is not past the last one %d", e2.ID, e.ID)
	}
}

func TestLog_ChangedWakesReaders(t *testing.T) {
	l := New(Config{})
	ch := l.Changed()
	select {
	case <-ch:
		t.Fatal("woken before an event")
	default:
	}
	l.Append(&Event{})
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("not woken by an event")
	}
}

func TestLog_NilRecordsNothing(t *testing.T) {
	var l *Log
	l.Append(&Event{}) // no panic
}

func TestFilter_MatchesDataPlaneFields(t *testing.T) {
	q, err := Compile(`namespace = "circuit" and action = "failed" and cause = "noTerminator" and identityName = "alice"`)
	if err != nil {
		t.Fatal(err)
	}
	yes := &Event{Namespace: Circuit, Action: Failed, Cause: CauseNoTerminator, IdentityName: "alice"}
	no := &Event{Namespace: Circuit, Action: Failed, Cause: CauseNoPath, IdentityName: "alice"}
	if !q.Match(yes) || q.Match(no) {
		t.Fatalf("match %v %v", q.Match(yes), q.Match(no))
	}
	q, err = Compile(`bytesIn > 100 and anyOf(path) = "r2"`)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Match(&Event{BytesIn: Uint64(101), Path: []string{"r1", "r2"}}) || q.Match(&Event{BytesIn: Uint64(5), Path: []string{"r2"}}) {
		t.Fatal("bytesIn / path conditions")
	}
}

func TestFilter_RefusesSortAndUnknownFields(t *testing.T) {
	if _, err := Compile(`namespace = "circuit" sort by id`); !errors.Is(err, ErrConditionsOnly) {
		t.Fatalf("sort: %v", err)
	}
	if _, err := Compile(`entityType = "identities"`); err == nil {
		t.Fatal("an audit field is taken")
	}
}

func TestOpenZiti_Formats(t *testing.T) {
	at := time.Unix(1737145920, 0).UTC()
	cases := []struct {
		e    *Event
		keys map[string]any
	}{
		{&Event{Namespace: Circuit, Action: Failed, NodeID: "n1", CircuitID: "c1", Cause: CauseNoPath, At: at},
			map[string]any{"namespace": "circuit", "event_type": "failed", "failure_cause": "NO_PATH", "event_src_id": "n1", "version": 2}},
		{&Event{Namespace: Circuit, Action: Ended, DurationMillis: Int64(1500), At: at},
			map[string]any{"event_type": "deleted", "duration": 1500 * time.Millisecond}},
		{&Event{Namespace: Router, Action: Disconnected, RouterID: "r1", At: at},
			map[string]any{"namespace": "router", "event_type": "router-offline", "router_id": "r1", "router_online": false}},
		{&Event{Namespace: Link, Action: Up, LinkID: "l1", SrcRouterID: "a", At: at},
			map[string]any{"event_type": "routerLinkNew", "link_id": "l1", "src_router_id": "a"}},
		{&Event{Namespace: Terminator, Action: Removed, TerminatorID: "t1", At: at},
			map[string]any{"namespace": "terminator", "event_type": "deleted", "terminator_id": "t1"}},
		{&Event{Namespace: Usage, Action: UsageCircuit, RouterID: "r1", CircuitID: "c1", Usage: map[string]uint64{"ingress.rx": 5}, At: at},
			map[string]any{"namespace": "usage", "version": 3, "source_id": "r1", "circuit_id": "c1"}},
	}
	for _, c := range cases {
		out := OpenZiti(c.e, 3)
		if len(out) != 1 {
			t.Fatalf("%s.%s: %d events", c.e.Namespace, c.e.Action, len(out))
		}
		m := out[0].(map[string]any)
		for k, v := range c.keys {
			if m[k] != v {
				t.Errorf("%s.%s: %s = %v, want %v", c.e.Namespace, c.e.Action, k, m[k], v)
			}
		}
	}
	v2 := OpenZiti(&Event{Namespace: Usage, Action: UsageCircuit, Usage: map[string]uint64{"ingress.rx": 5, "ingress.tx": 6}}, 2)
	if len(v2) != 2 || v2[0].(map[string]any)["event_type"] != "usage.ingress.rx" || v2[1].(map[string]any)["usage"] != uint64(6) {
		t.Fatalf("usage v2: %v", v2)
	}
	if OpenZiti(&Event{Namespace: Usage, Action: UsageIdentity}, 3) != nil {
		t.Fatal("usage by identity has no OpenZiti format")
	}
}
