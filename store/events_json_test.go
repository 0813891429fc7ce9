package store

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// checkEventJSON fails t when the hand encoding of e differs from
// encoding/json's, and reports whether the fast path wrote it.
func checkEventJSON(t testing.TB, e *Event) bool {
	t.Helper()
	before, after := e.bodies()
	want, wantErr := e.marshalSlow(before, after)
	got, ok := e.appendEventJSON([]byte("prefix"), before, after)
	if ok {
		if wantErr != nil {
			t.Fatalf("the fast path wrote %s, encoding/json refuses the event: %v", got, wantErr)
		}
		if !bytes.Equal(got[len("prefix"):], want) || !bytes.HasPrefix(got, []byte("prefix")) {
			t.Fatalf("fast path:\n%s\nencoding/json:\n%s", got, want)
		}
	}
	// Whichever path, MarshalJSON writes encoding/json's bytes.
	m, err := e.MarshalJSON()
	if (err == nil) != (wantErr == nil) || !bytes.Equal(m, want) {
		t.Fatalf("MarshalJSON %s (%v), encoding/json %s (%v)", m, err, want, wantErr)
	}
	return ok
}

// TestEventJSON_SameBytesAsEncodingJSON: the hand-written event encoding is
// encoding/json's byte for byte, and gives up (to encoding/json) on what it
// does not copy as is: escapes, non-ASCII, tags, a body compaction would
// change, a time encoding/json refuses.
func TestEventJSON_SameBytesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 14, 3, 4, 123456789, time.UTC)
	full := func() *Event {
		return &Event{Base: Base{ID: EventKey(42), CreatedAt: at, UpdatedAt: at.Add(time.Second)}, Seq: 42, Index: 1 << 40,
			Namespace: "entity", Action: "created", EntityType: "identities", EntityID: "id-1", EntityName: "perf-1",
			Actor: EventActor{IdentityID: "admin", IdentityName: "Default Admin", APISessionID: "s1",
				SourceAddress: "127.0.0.1:5000", NodeID: "n1"},
			ChangedFields: []string{"name", "roleAttributes"},
			Before:        json.RawMessage(`{"id":"id-1","name":"old"}`), After: json.RawMessage(`{"id":"id-1","name":"perf-1","n":[1,2.5,null,true]}`)}
	}
	lazy := full()
	lazy.Lazy(&Identity{Base: Base{ID: "i", CreatedAt: at}, Named: Named{Name: "before"}},
		&Identity{Base: Base{ID: "i", CreatedAt: at, Tags: map[string]any{"k": "v"}}, Named: Named{Name: "after"}, RoleAttributes: []string{"a"}},
		func(r Record) json.RawMessage { b, _ := json.Marshal(r); return b })
	zoned := full()
	zoned.CreatedAt = at.In(time.FixedZone("x", 5*3600+30*60))

	fast := map[string]*Event{
		"every field":       full(),
		"none but required": {},
		"lazy bodies":       lazy,
		"a zone offset":     zoned,
		"empty tags":        func() *Event { e := full(); e.Tags = map[string]any{}; return e }(),
		"no bodies":         func() *Event { e := full(); e.Before, e.After = nil, json.RawMessage{}; return e }(),
		"negative seq":      func() *Event { e := full(); e.Seq = -3; return e }(),
		"only an actor id":  func() *Event { e := full(); e.Actor = EventActor{NodeID: "n"}; return e }(),
		"escaped in a body": func() *Event { e := full(); e.After = json.RawMessage(`{"a":"\u003c\"x\\"}`); return e }(),
	}
	for name, e := range fast {
		if !checkEventJSON(t, e) {
			t.Errorf("%s: not written by the fast path", name)
		}
	}
	slow := map[string]func(e *Event){
		"a quote in a name":     func(e *Event) { e.EntityName = `a"b` },
		"HTML in an action":     func(e *Event) { e.Action = "<b>" },
		"an ampersand in actor": func(e *Event) { e.Actor.IdentityName = "a&b" },
		"non-ASCII":             func(e *Event) { e.EntityName = "é" },
		"invalid UTF-8":         func(e *Event) { e.ChangedFields = []string{"\xff"} },
		"a control character":   func(e *Event) { e.Namespace = "a\tb" },
		"U+2028 in a body":      func(e *Event) { e.After = json.RawMessage("{\"a\":\"\u2028\"}") },
		"whitespace in a body":  func(e *Event) { e.Before = json.RawMessage(`{"a": 1}`) },
		"HTML in a body":        func(e *Event) { e.After = json.RawMessage(`{"a":"<"}`) },
		"tags":                  func(e *Event) { e.Tags = map[string]any{"b": 1, "a": "x"} },
		"a year past 9999":      func(e *Event) { e.UpdatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"a backslash in an id":  func(e *Event) { e.ID = `a\b` },
	}
	for name, change := range slow {
		e := full()
		change(e)
		if checkEventJSON(t, e) {
			t.Errorf("%s: written by the fast path, which should have given up", name)
		}
	}
}

// FuzzEventJSON: whatever the fast path writes is encoding/json's encoding.
func FuzzEventJSON(f *testing.F) {
	f.Add("entity", "created", "perf-1", "admin", "name", []byte(`{"a":1}`), int64(5), int64(0))
	f.Add("a<b", "", "é", "", "", []byte(`{"a": "\u2028"}`), int64(-1), int64(1<<62))
	f.Fuzz(func(t *testing.T, ns, action, name, actor, field string, body []byte, seq, nanos int64) {
		if !json.Valid(body) {
			return // bodies are valid JSON by construction
		}
		e := &Event{Base: Base{ID: EventKey(seq), CreatedAt: time.Unix(0, nanos).UTC()}, Seq: seq, Namespace: ns,
			Action: action, EntityName: name, Actor: EventActor{IdentityName: actor}, After: body}
		if field != "" {
			e.ChangedFields = strings.Split(field, ",")
		}
		checkEventJSON(t, e)
	})
}

// BenchmarkDump_Events: a snapshot of 10,000 identity-create events with
// their bodies encoded (as they are after the first snapshot).
func BenchmarkDump_Events(b *testing.B) {
	CrossCheckDecoding(false)
	b.Cleanup(func() { CrossCheckDecoding(true) })
	const n = 10_000
	r := eventStore(b, n).Read()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := r.Dump(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/event")
}

// eventStore is a model of n identity-create events (events on, kept up
// to 100,000).
func eventStore(b testing.TB, n int) *Store {
	s := New()
	tx := s.Write()
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	if err := tx.SetEvents(EventState{Enabled: true, RetentionCount: 100_000, RetentionSeconds: 3600}, at); err != nil {
		b.Fatal(err)
	}
	events := make([]*Event, n)
	for i := range events {
		id := &Identity{Base: Base{ID: EventKey(int64(i)), CreatedAt: at, UpdatedAt: at}, Named: Named{Name: "perf-" + EventKey(int64(i))},
			TypeID: "Device", AuthPolicyID: "default"}
		events[i] = &Event{Namespace: "entity", Action: "created", EntityType: "identities", EntityID: id.ID, EntityName: id.Name,
			Actor: EventActor{IdentityID: "admin", IdentityName: "Default Admin", APISessionID: "s", SourceAddress: "127.0.0.1:1"}}
		events[i].Lazy(nil, id, func(r Record) json.RawMessage { b, _ := json.Marshal(r); return b })
	}
	if err := tx.AppendEvents(events, at); err != nil {
		b.Fatal(err)
	}
	tx.Commit()
	return s
}
