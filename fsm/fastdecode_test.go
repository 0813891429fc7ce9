package fsm

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"edgectl/store"
)

// fullIdentityCreate is an identity create with every field of every
// struct it holds set (TestFastDecode_AFullEntryTakesTheFastPath checks
// that none is left zero), names and values that need no escapes.
func fullIdentityCreate() IdentityCreate {
	at := time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.UTC)
	later := at.Add(time.Hour)
	ext, ca, user := "ext-1", "ca-1", "user-é"
	base := func(id string) store.Base {
		return store.Base{ID: id, CreatedAt: at, UpdatedAt: later, Tags: map[string]any{"k": "v", "n": 1.5, "b": true, "z": nil, "l": []any{"x"}}}
	}
	return IdentityCreate{
		Identity: &store.Identity{
			Base: base("id-1"), Named: store.Named{Name: "Zoë's phone"}, TypeID: "Device", IsAdmin: true, IsDefaultAdmin: true,
			AppData: map[string]any{"a": map[string]any{"b": []any{1.0, "c"}}}, AuthPolicyID: "default", DefaultHostingCost: -42,
			DefaultHostingPrecedence: "required", ServiceHostingCosts: map[string]int{"s1": 7},
			ServiceHostingPrecedences: map[string]string{"s1": "failed"}, ExternalID: &ext,
			RoleAttributes: []string{"sales", "team-1", "日本"}, Disabled: true, DisabledAt: &at, DisabledUntil: &later,
			EnvInfo: &store.EnvInfo{Arch: "amd64", OS: "linux", OSRelease: "6.1", OSVersion: "1"},
			SdkInfo: &store.SdkInfo{AppID: "app", AppVersion: "1", Branch: "main", Revision: "abc", Type: "go", Version: "1.2"},
			Trace:   &store.TraceSpec{Enabled: true, TraceID: "t", Channels: []string{"c"}, Until: later},
		},
		Enrollments: []*store.Enrollment{{Base: base("e-1"), IdentityID: "id-1", Method: "ottca", CaID: &ca, Username: &user,
			Token: "tok", JWT: "a.b.c", ExpiresAt: later}},
		Authenticators: []*store.Authenticator{{Base: base("a-1"), IdentityID: "id-1", Method: "updb", Username: "u",
			PasswordHash: "h"}},
	}
}

// writtenEntry is the entry the writer proposes for an identity create's
// payload (Writer.Do).
func writtenEntry(t testing.TB, payload any, actor *store.EventActor, rid string) []byte {
	return writtenEntryOf(t, CmdIdentityCreate, payload, actor, rid)
}

func writtenEntryOf(t testing.TB, typ CommandType, payload any, actor *store.EventActor, rid string) []byte {
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return envelope(typ, raw, time.Date(2026, 11, 25, 10, 0, 0, 1, time.UTC), actor, rid)
}

// fastRead runs the identity create's fast path alone (no cross-check)
// and, when it answers, checks it read what store.DecodeJSON reads.
func fastRead(t *testing.T, entry []byte) bool {
	t.Helper()
	return fastReadOf(t, entry, decodeIdentityCreateEntry)
}

func fastReadOf[P any](t *testing.T, entry []byte, fast func([]byte, *entryOf[P]) bool) bool {
	t.Helper()
	var got entryOf[P]
	if !fast(entry, &got) {
		return false
	}
	var want entryOf[P]
	if err := store.DecodeJSON(entry, &want); err != nil {
		t.Fatalf("%s: the fast path read it, store.DecodeJSON fails: %v", entry, err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s:\nfast path  %s\nDecodeJSON %s", entry, g, w)
	}
	return true
}

// TestFastDecode_AFullEntryTakesTheFastPath: an identity create with every
// field set is read by the fast path, as store.DecodeJSON reads it. A field
// added to one of its structs fails the first check until the test sets it,
// and the second until the fast path reads it.
func TestFastDecode_AFullEntryTakesTheFastPath(t *testing.T) {
	t.Parallel()
	p := fullIdentityCreate()
	for _, v := range []any{*p.Identity, *p.Enrollments[0], *p.Identity.EnvInfo, *p.Identity.SdkInfo, *p.Identity.Trace, store.EventActor{}} {
		rv := reflect.ValueOf(v)
		for i := range rv.NumField() {
			if _, actor := v.(store.EventActor); !actor && rv.Field(i).IsZero() {
				t.Fatalf("%T.%s is not set", v, rv.Type().Field(i).Name)
			}
		}
	}
	actor := &store.EventActor{IdentityID: "admin", IdentityName: "Default Admin", APISessionID: "s", SourceAddress: "127.0.0.1:1", NodeID: "n1"}
	for _, e := range [][]byte{
		writtenEntry(t, p, actor, "rid-1"),
		writtenEntry(t, p, nil, ""),
		writtenEntry(t, IdentityCreate{Identity: p.Identity}, actor, "rid-2"),
		writtenEntry(t, IdentityCreate{Identity: &store.Identity{}, Enrollments: []*store.Enrollment{}}, nil, "r"),
		writtenEntry(t, IdentityCreate{}, nil, "r"),
		identityCreateEntry(7, "id-7", "e-7"),
	} {
		if !fastRead(t, e) {
			t.Fatalf("the fast path gave up on %s", e)
		}
	}
}

// swapper is entry e with its first old replaced by new (the test fails
// when e holds no old).
func swapper(t *testing.T, e string) func(old, new string) string {
	return func(old, new string) string {
		t.Helper()
		if !strings.Contains(e, old) {
			t.Fatalf("%q not in %s", old, e)
		}
		return strings.Replace(e, old, new, 1)
	}
}

// TestFastDecode_GivesUpOnWhatItDoesNotRead: entries of another shape
// (from clients' bytes, other writers, earlier releases) are left to
// store.DecodeJSON, and the FSM reads them as it reads them; where the fast
// path answers, it reads the same.
func TestFastDecode_GivesUpOnWhatItDoesNotRead(t *testing.T) {
	t.Parallel()
	e := string(identityCreateEntry(7, "id-7", "e-7"))
	swap := swapper(t, e)
	for _, c := range []struct {
		entry string
		fast  bool // the fast path reads it
	}{
		{swap(`"name":"name-bench-0000007"`, `"name":"a\"b"`), false},
		{swap(`"name":"name-bench-0000007"`, `"name":"a\u00e9"`), false},
		{swap(`"name":"name-bench-0000007"`, "\"name\":\"a\xffb\""), false},
		{swap(`"name":"name-bench-0000007"`, "\"name\":\"a\tb\""), false},
		{swap(`"name":"name-bench-0000007"`, `"NAME":"x"`), false},
		{swap(`"name":"name-bench-0000007"`, `"name":"x","name":"y"`), false},
		{swap(`"name":"name-bench-0000007"`, `"name" : "x"`), false},
		{swap(`"name":"name-bench-0000007"`, `"name":"x","unknown":1`), false},
		{swap(`"name":"name-bench-0000007"`, `"name":7`), false},
		{swap(`"defaultHostingCost":0`, `"defaultHostingCost":1.0`), false},
		{swap(`"defaultHostingCost":0`, `"defaultHostingCost":1e2`), false},
		{swap(`"defaultHostingCost":0`, `"defaultHostingCost":007`), false},
		{swap(`"defaultHostingCost":0`, `"defaultHostingCost":99999999999999999999`), false},
		{swap(`"defaultHostingCost":0`, `"defaultHostingCost":-17`), true},
		{swap(`"defaultHostingCost":0`, `"defaultHostingCost":null`), true},
		{swap(`"isAdmin":false`, `"isAdmin":"false"`), false},
		{swap(`"isAdmin":false`, `"isAdmin":null`), true},
		{swap(`"createdAt":"2026-11-22T01:00:00Z"`, `"createdAt":"yesterday"`), false},
		{swap(`"createdAt":"2026-11-22T01:00:00Z"`, `"createdAt":"2026-11-22T01:00:00+02:00"`), true},
		{swap(`"roleAttributes":["sales","team-7"]`, `"roleAttributes":["sales",null]`), false},
		{swap(`"roleAttributes":["sales","team-7"]`, `"roleAttributes":[]`), true},
		{swap(`"tags":null`, `"tags":{"a":1,"a":2,"s":"\u00e9"}`), true},
		{swap(`"tags":null`, `"tags":{"a":[1,{"b":"}]"}]}`), true},
		{swap(`"tags":null`, `"tags":{"a":1`), false},
		{swap(`"tags":null`, `"tags":7`), false},
		{swap(`"envInfo":null`, `"envInfo":{"arch":"x","os":"y"}`), true},
		{swap(`"externalId":null`, `"externalId":"x"`), true},
		{swap(`"disabledAt":null`, `"disabledAt":"2026-11-22T01:00:00Z"`), true},
		{swap(`"enrollments":[{`, `"enrollments":[null,{`), false},
		{swap(`"authenticators":null`, `"authenticators":[{"id":"a","method":"updb"}]`), true},
		{swap(`"payload":{`, `"payload":null,"x":{`), false},
		{swap(`{"type"`, ` {"type"`), false},
		{e + " ", false},
		{e + "x", false},
		{e[:len(e)-1], false},
	} {
		if got := fastRead(t, []byte(c.entry)); got != c.fast {
			t.Errorf("fast path read %v, want %v: %s", got, c.fast, c.entry)
		}
		// Through the FSM's handler (with the cross-check on): the same
		// result or error as store.DecodeJSON.
		var want entryOf[IdentityCreate]
		werr := store.DecodeJSON([]byte(c.entry), &want)
		h, _, err := New(store.New()).handlers[CmdIdentityCreate]([]byte(c.entry))
		if (err == nil) != (werr == nil) || (err == nil && !reflect.DeepEqual(h, want.cmdHeader)) {
			t.Errorf("%s: handler %+v, %v; store.DecodeJSON %+v, %v", c.entry, h, err, want.cmdHeader, werr)
		}
	}
}

// FuzzFastDecode: whatever the fast path reads, store.DecodeJSON reads the
// same.
func FuzzFastDecode(f *testing.F) {
	f.Add(identityCreateEntry(7, "id-7", "e-7"))
	f.Add(writtenEntry(f, fullIdentityCreate(), &store.EventActor{NodeID: "n"}, "r"))
	f.Fuzz(func(t *testing.T, entry []byte) { fuzzFast(t, entry, decodeIdentityCreateEntry) })
}

// FuzzFastDecode_RouterTerminator: the same for routers' terminators.
func FuzzFastDecode_RouterTerminator(f *testing.F) {
	f.Add(writtenEntryOf(f, CmdTerminatorCreateByRouter, fullRouterTerminator(), nil, ""))
	f.Fuzz(func(t *testing.T, entry []byte) { fuzzFast(t, entry, decodeRouterTerminatorEntry) })
}

func fuzzFast[P any](t *testing.T, entry []byte, fast func([]byte, *entryOf[P]) bool) {
	var got entryOf[P]
	if !fast(entry, &got) {
		return
	}
	var want entryOf[P]
	if err := store.DecodeJSON(entry, &want); err != nil {
		t.Fatalf("%q: the fast path read it, store.DecodeJSON fails: %v", entry, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nfast path %+v\nDecodeJSON %+v", entry, got, want)
	}
}

// fullRouterTerminator is a router's terminator create with every field
// set.
func fullRouterTerminator() RouterTerminator {
	at := time.Date(2026, 12, 7, 10, 0, 0, 123456789, time.UTC)
	return RouterTerminator{At: at, Terminator: &store.Terminator{
		Base:      store.Base{ID: "t-1", CreatedAt: at, UpdatedAt: at.Add(time.Hour), Tags: map[string]any{"k": "v"}},
		ServiceID: "svc-1", RouterID: "er-1", Binding: "edge", Address: "hosted:t-1", Identity: "instance-é",
		IdentitySecret: "secret", Cost: -3, Precedence: "required", HostID: "host-1",
		PeerData: map[uint32][]byte{3: {1, 2, 3, 0xff}, 7: {}}, IsSystem: true,
	}}
}

// TestFastDecode_ARouterTerminatorTakesTheFastPath: a router's terminator
// create with every field set, as the writer proposes it, is read by the
// fast path as store.DecodeJSON reads it (a field added to
// store.Terminator fails the test until it sets the field, and then until
// the fast path reads it); what it does not read it leaves to
// store.DecodeJSON, and the FSM's handler takes the fast path and reads
// every entry as store.DecodeJSON does.
func TestFastDecode_ARouterTerminatorTakesTheFastPath(t *testing.T) {
	t.Parallel()
	if _, ok := fastEntryDecoders[CmdTerminatorCreateByRouter].(func([]byte, *entryOf[RouterTerminator]) bool); !ok {
		t.Fatal("the FSM's handler does not take the fast path (on finds none of its payload's type)")
	}
	p := fullRouterTerminator()
	rv := reflect.ValueOf(*p.Terminator)
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			t.Fatalf("store.Terminator.%s is not set", rv.Type().Field(i).Name)
		}
	}
	actor := &store.EventActor{NodeID: "n1"}
	e := string(writtenEntryOf(t, CmdTerminatorCreateByRouter, p, nil, ""))
	swap := swapper(t, e)
	for _, c := range []struct {
		entry string
		fast  bool
	}{
		{e, true},
		{string(writtenEntryOf(t, CmdTerminatorCreateByRouter, p, actor, "rid-1")), true},
		{string(writtenEntryOf(t, CmdTerminatorCreateByRouter, RouterTerminator{Terminator: &store.Terminator{}}, nil, "")), true},
		{string(writtenEntryOf(t, CmdTerminatorCreateByRouter, RouterTerminator{}, nil, "")), true},
		{string(terminatorCreateEntry(t, 7)), true},
		{swap(`"cost":-3`, `"cost":3.5`), false},
		{swap(`"cost":-3`, `"cost":null`), true},
		{swap(`"peerData":{`, `"peerData":{"9":null,`), true},
		{swap(`"peerData":{`, `"peerData":{"x":"AA==",`), true}, // a key DecodeJSON refuses: both fail
		{swap(`"isSystem":true`, `"isSystem":true,"more":1`), false},
		{swap(`"hostId":"host-1"`, `"hostId":"host-1","hostId":"h2"`), false},
		{swap(`"address":"hosted:t-1"`, `"address":"a\"b"`), false},
	} {
		var want entryOf[RouterTerminator]
		werr := store.DecodeJSON([]byte(c.entry), &want)
		if werr != nil {
			var got entryOf[RouterTerminator]
			if decodeRouterTerminatorEntry([]byte(c.entry), &got) {
				t.Errorf("the fast path read what store.DecodeJSON refuses (%v): %s", werr, c.entry)
			}
		} else if got := fastReadOf(t, []byte(c.entry), decodeRouterTerminatorEntry); got != c.fast {
			t.Errorf("fast path read %v, want %v: %s", got, c.fast, c.entry)
		}
		h, _, err := New(store.New()).handlers[CmdTerminatorCreateByRouter]([]byte(c.entry))
		if (err == nil) != (werr == nil) || (err == nil && !reflect.DeepEqual(h, want.cmdHeader)) {
			t.Errorf("%s: handler %+v, %v; store.DecodeJSON %+v, %v", c.entry, h, err, want.cmdHeader, werr)
		}
	}
}
