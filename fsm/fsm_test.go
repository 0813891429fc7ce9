package fsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"edgectl/store"

	"github.com/hashicorp/raft"
)

var t0 = time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)

// entry encodes a command as Raft would deliver it.
func entry(t *testing.T, index uint64, typ CommandType, payload any) *raft.Log {
	t.Helper()
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(Command{Type: typ, Payload: raw})
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data}
}

// resultErr decodes the error of an Apply result, nil when it succeeded.
func resultErr(t *testing.T, v any) error {
	t.Helper()
	if v == nil {
		return nil
	}
	var r result
	if err := json.Unmarshal(v.([]byte), &r); err != nil {
		t.Fatalf("undecodable result: %v", err)
	}
	if r.Error == nil {
		return nil
	}
	return r.Error
}

func bootstrapped(t *testing.T) *FSM {
	t.Helper()
	return bootstrappedWith(t, func(b *store.Bootstrap) {
		for _, n := range []string{"User", "Device"} {
			b.IdentityTypes = append(b.IdentityTypes, &store.IdentityType{Base: store.Base{ID: n, CreatedAt: t0}, Named: store.Named{Name: n}})
		}
	})
}

// bootstrappedWith is an FSM after the bootstrap of the default auth policy
// and admin, which edit completes.
func bootstrappedWith(t *testing.T, edit func(b *store.Bootstrap)) *FSM {
	t.Helper()
	f := New(store.New())
	b := &store.Bootstrap{At: t0, PKI: []byte(`{}`),
		AuthPolicy: &store.AuthPolicy{Base: store.Base{ID: "default", CreatedAt: t0}, Named: store.Named{Name: "Default"}},
		Admin: &store.Identity{Base: store.Base{ID: "admin", CreatedAt: t0}, Named: store.Named{Name: "Default Admin"},
			TypeID: "User", IsAdmin: true, IsDefaultAdmin: true, AuthPolicyID: "default"},
		AdminAuthenticator: &store.Authenticator{Base: store.Base{ID: "a1", CreatedAt: t0}, IdentityID: "admin", Method: "updb", Username: "admin", PasswordHash: "h"},
	}
	edit(b)
	if err := resultErr(t, f.Apply(entry(t, 1, CmdBootstrap, b))); err != nil {
		t.Fatal(err)
	}
	return f
}

func identity(id, name string) *store.Identity {
	return &store.Identity{Base: store.Base{ID: id, CreatedAt: t0, UpdatedAt: t0}, Named: store.Named{Name: name},
		TypeID: "Device", AuthPolicyID: "default", RoleAttributes: []string{"a"}}
}

func TestApply_BootstrapTwiceIsAConflict(t *testing.T) {
	f := bootstrapped(t)
	err := resultErr(t, f.Apply(entry(t, 2, CmdBootstrap, &store.Bootstrap{})))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	if f.AppliedIndex() != 2 {
		t.Fatalf("applied index %d, want 2", f.AppliedIndex())
	}
}

func TestApply_IdentityCreateUpdateDelete(t *testing.T) {
	f := bootstrapped(t)
	if err := resultErr(t, f.Apply(entry(t, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")}))); err != nil {
		t.Fatal(err)
	}
	patch := store.Patch{"roleAttributes": json.RawMessage(`["b","c"]`), "name": json.RawMessage(`"uno"`)}
	if err := resultErr(t, f.Apply(entry(t, 3, CmdIdentityUpdate, Update{ID: "i1", Patch: patch, At: t0.Add(time.Hour)}))); err != nil {
		t.Fatal(err)
	}
	got, err := store.GetAs[*store.Identity](f.Store().Read(), store.KindIdentity, "i1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "uno" || len(got.RoleAttributes) != 2 || got.TypeID != "Device" || !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("patch applied wrongly: %+v", got)
	}
	if err := resultErr(t, f.Apply(entry(t, 4, CmdIdentityDelete, Delete{ID: "i1"}))); err != nil {
		t.Fatal(err)
	}
	if f.Store().Read().Exists(store.KindIdentity, "i1") {
		t.Fatal("identity still there after delete")
	}
}

func TestApply_DuplicateNameIsAConflictAndStoresNothing(t *testing.T) {
	f := bootstrapped(t)
	f.Apply(entry(t, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "same")}))
	err := resultErr(t, f.Apply(entry(t, 3, CmdIdentityCreate, IdentityCreate{Identity: identity("i2", "same")})))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	if f.Store().Read().Exists(store.KindIdentity, "i2") {
		t.Fatal("the rejected identity was stored")
	}
}

func TestApply_FailedCommandStoresNothingOfIt(t *testing.T) {
	f := bootstrapped(t)
	// The enrollment is valid, the authenticator's identity is missing: the whole command must roll back.
	p := IdentityCreate{Identity: identity("i1", "one"),
		Enrollments:    []*store.Enrollment{{Base: store.Base{ID: "e1", CreatedAt: t0}, IdentityID: "i1", Method: "ott"}},
		Authenticators: []*store.Authenticator{{Base: store.Base{ID: "a2", CreatedAt: t0}, IdentityID: "i1", Method: "updb", Username: "admin"}}}
	if err := resultErr(t, f.Apply(entry(t, 2, CmdIdentityCreate, p))); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("want a username conflict, got %v", err)
	}
	tx := f.Store().Read()
	if tx.Exists(store.KindIdentity, "i1") || tx.Exists(store.KindEnrollment, "e1") {
		t.Fatal("part of a failed command was stored")
	}
}

func TestApply_DeleteIdentityRemovesItsSessionsAndAuthenticators(t *testing.T) {
	f := bootstrapped(t)
	f.Apply(entry(t, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one"),
		Authenticators: []*store.Authenticator{{Base: store.Base{ID: "a2", CreatedAt: t0}, IdentityID: "i1", Method: "updb", Username: "user1"}}}))
	f.Apply(entry(t, 3, CmdAPISessionCreate, &store.APISession{Base: store.Base{ID: "s1", CreatedAt: t0}, IdentityID: "i1", TokenHash: "th"}))
	if err := resultErr(t, f.Apply(entry(t, 4, CmdIdentityDelete, Delete{ID: "i1"}))); err != nil {
		t.Fatal(err)
	}
	tx := f.Store().Read()
	if tx.Exists(store.KindAPISession, "s1") || tx.Exists(store.KindAuthenticator, "a2") {
		t.Fatal("dependents of the identity survived its delete")
	}
	if tx.Count(store.KindAPISession) != 0 || tx.Count(store.KindIdentity) != 1 {
		t.Fatalf("counts wrong: sessions %d identities %d", tx.Count(store.KindAPISession), tx.Count(store.KindIdentity))
	}
}

func TestApply_DefaultAdminCannotBeDeletedOrDemoted(t *testing.T) {
	f := bootstrapped(t)
	if err := resultErr(t, f.Apply(entry(t, 2, CmdIdentityDelete, Delete{ID: "admin"}))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("delete: want invalid, got %v", err)
	}
	p := store.Patch{"isAdmin": json.RawMessage(`false`)}
	if err := resultErr(t, f.Apply(entry(t, 3, CmdIdentityUpdate, Update{ID: "admin", Patch: p, At: t0}))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("demote: want invalid, got %v", err)
	}
}

func TestApply_DisableEndsSessionsAndEnableClears(t *testing.T) {
	f := bootstrapped(t)
	f.Apply(entry(t, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one")}))
	f.Apply(entry(t, 3, CmdAPISessionCreate, &store.APISession{Base: store.Base{ID: "s1", CreatedAt: t0}, IdentityID: "i1", TokenHash: "th"}))
	until := t0.Add(time.Hour)
	f.Apply(entry(t, 4, CmdIdentityDisable, Disable{ID: "i1", At: t0, Until: &until}))
	tx := f.Store().Read()
	i, _ := store.GetAs[*store.Identity](tx, store.KindIdentity, "i1")
	if !i.Disabled || !i.DisabledUntil.Equal(until) || tx.Exists(store.KindAPISession, "s1") {
		t.Fatalf("disable: %+v, session kept: %v", i, tx.Exists(store.KindAPISession, "s1"))
	}
	f.Apply(entry(t, 5, CmdIdentityEnable, Disable{ID: "i1", At: t0}))
	i, _ = store.GetAs[*store.Identity](f.Store().Read(), store.KindIdentity, "i1")
	if i.Disabled || i.DisabledUntil != nil || i.DisabledAt != nil {
		t.Fatalf("enable left disabled state: %+v", i)
	}
}

func TestApply_TouchKeepsTheLatestActivity(t *testing.T) {
	f := bootstrapped(t)
	f.Apply(entry(t, 2, CmdAPISessionCreate, &store.APISession{Base: store.Base{ID: "s1", CreatedAt: t0}, IdentityID: "admin", TokenHash: "th", CachedLastActivityAt: t0}))
	f.Apply(entry(t, 3, CmdAPISessionsTouch, Touch{Batch: []store.Activity{{ID: "s1", At: t0.Add(2 * time.Minute)}, {ID: "gone", At: t0}}}))
	f.Apply(entry(t, 4, CmdAPISessionsTouch, Touch{Batch: []store.Activity{{ID: "s1", At: t0.Add(time.Minute)}}}))
	s := f.Store().Read().APISessionByTokenHash("th")
	if !s.CachedLastActivityAt.Equal(t0.Add(2 * time.Minute)) {
		t.Fatalf("activity %v, want the later one", s.CachedLastActivityAt)
	}
}

func TestApply_UnknownCommandStopsLoudly(t *testing.T) {
	f := bootstrapped(t)
	defer func() {
		if recover() == nil {
			t.Fatal("an unknown command type must stop the node, not be skipped")
		}
	}()
	f.Apply(entry(t, 2, "no.such.command", struct{}{}))
}

func TestApply_UndecodableEntryStopsLoudly(t *testing.T) {
	f := bootstrapped(t)
	defer func() {
		if recover() == nil {
			t.Fatal("an undecodable entry must stop the node")
		}
	}()
	f.Apply(&raft.Log{Index: 2, Type: raft.LogCommand, Data: []byte("{not json")})
}

// snapshotRoundTrip snapshots f's model and restores it into a new FSM.
func snapshotRoundTrip(t *testing.T, f *FSM) *FSM {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return restored(t, snap)
}

// restored persists snap and restores it into a new FSM.
func restored(t *testing.T, snap raft.FSMSnapshot) *FSM {
	t.Helper()
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	g := New(store.New())
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	return g
}

// memSink is an in-memory raft.SnapshotSink.
type memSink struct {
	bytes.Buffer
	cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { return nil }

func TestSnapshot_RoundTripKeepsEveryRecordAndIndex(t *testing.T) {
	f := bootstrapped(t)
	f.Apply(entry(t, 2, CmdIdentityCreate, IdentityCreate{Identity: identity("i1", "one"),
		Enrollments:    []*store.Enrollment{{Base: store.Base{ID: "e1", CreatedAt: t0}, IdentityID: "i1", Method: "ott", Token: "tok"}},
		Authenticators: []*store.Authenticator{{Base: store.Base{ID: "a2", CreatedAt: t0}, IdentityID: "i1", Method: "updb", Username: "user1", PasswordHash: "x"}}}))
	f.Apply(entry(t, 3, CmdAPISessionCreate, &store.APISession{Base: store.Base{ID: "s1", CreatedAt: t0}, IdentityID: "i1", TokenHash: "th"}))
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Writes after the snapshot must not leak into it.
	f.Apply(entry(t, 4, CmdIdentityCreate, IdentityCreate{Identity: identity("i2", "two")}))
	g := restored(t, snap)
	if g.AppliedIndex() != 3 {
		t.Fatalf("restored index %d, want 3", g.AppliedIndex())
	}
	a, b := dump(t, f.Store().Read()), dump(t, g.Store().Read())
	if bytes.Equal(a, b) {
		t.Fatal("restored model equals the live one, but i2 came after the snapshot")
	}
	tx := g.Store().Read()
	for _, c := range []struct {
		k  *store.Kind
		id string
	}{{store.KindIdentity, "i1"}, {store.KindEnrollment, "e1"}, {store.KindAuthenticator, "a2"}, {store.KindAPISession, "s1"}, {store.KindAuthPolicy, "default"}, {store.KindIdentityType, "Device"}} {
		if !tx.Exists(c.k, c.id) {
			t.Errorf("%s %s missing after restore", c.k.Table, c.id)
		}
	}
	if tx.Exists(store.KindIdentity, "i2") || tx.Count(store.KindIdentity) != 2 {
		t.Fatalf("restored identities wrong: count %d", tx.Count(store.KindIdentity))
	}
	if tx.APISessionByTokenHash("th") == nil || tx.First(store.KindAuthenticator, "username", "user1") == nil {
		t.Fatal("secondary indexes not rebuilt on restore")
	}
}

func TestRestore_RefusesAnotherFormat(t *testing.T) {
	g := New(store.New())
	err := g.Restore(io.NopCloser(bytes.NewReader([]byte(`{"format":99,"index":1}` + "\n"))))
	if err == nil || !strings.Contains(err.Error(), "newer edgectl") || !strings.Contains(err.Error(), "upgrade") {
		t.Fatalf("a snapshot of a newer format: %v, want a refusal that says to upgrade", err)
	}
	if g.AppliedIndex() != 0 {
		t.Fatal("the refused snapshot moved the applied index")
	}
}

func dump(t *testing.T, tx *store.Tx) []byte {
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, tx, 0); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEnvelope_DecodesLikeTheCommandItEncodes(t *testing.T) {
	at := time.Date(2026, 11, 22, 1, 2, 3, 456, time.UTC)
	var c Command
	if err := json.Unmarshal(envelope(CmdIdentityCreate, json.RawMessage(`{"a":[1,"x"]}`), at, nil, ""), &c); err != nil {
		t.Fatal(err)
	}
	if c.Type != CmdIdentityCreate || string(c.Payload) != `{"a":[1,"x"]}` || !c.At.Equal(at) {
		t.Fatalf("decoded %+v", c)
	}
}

// An entry is applied the same whatever the shape of its envelope: the type
// is read from the front of what this release's writer (and json.Marshal of
// Command) makes, and an entry with other key order or spacing is decoded in
// full. A payload of null is the zero payload, as before.
func TestApply_EnvelopeOfAnyShape(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)
	raw, err := json.Marshal(IdentityCreate{Identity: identity("i1", "one")})
	if err != nil {
		t.Fatal(err)
	}
	actor := &store.EventActor{IdentityID: "admin", IdentityName: "Default Admin"}
	shapes := map[string][]byte{
		"writer": envelope(CmdIdentityCreate, raw, at, actor, "rid-1"),
		"payload first, spaced": []byte(`{ "payload" : ` + string(raw) + ` , "actor": {"identityId":"admin","identityName":"Default Admin"}, "at":"` +
			at.Format(time.RFC3339Nano) + `", "type" : "` + string(CmdIdentityCreate) + `" }`),
		"escaped type": []byte(`{"type":"identity\u002ecreate","payload":` + string(raw) + `,"at":"` + at.Format(time.RFC3339Nano) +
			`","actor":{"identityId":"admin","identityName":"Default Admin"}}`),
	}
	var want []byte
	for name, data := range shapes {
		f := eventsOn(t)
		if err := resultErr(t, f.Apply(&raft.Log{Index: 4, Term: 1, Type: raft.LogCommand, Data: data})); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := dump(t, f.store.Read())
		if want == nil {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s: the model differs from another shape's", name)
		}
		found := false
		f.store.Read().EventsAfter(0, func(e *store.Event) bool {
			if e.EntityID == "i1" && e.Actor.IdentityID == "admin" && e.CreatedAt.Equal(at) {
				found = true
			}
			return true
		})
		if !found {
			t.Errorf("%s: no creation event of i1 with the envelope's actor and time", name)
		}
	}
}

// An envelope that names two types is a corrupt entry, not the last type's command.
func TestApply_EnvelopeWithTwoTypesIsCorrupt(t *testing.T) {
	t.Parallel()
	f := bootstrapped(t)
	raw, _ := json.Marshal(IdentityCreate{Identity: identity("i1", "one")})
	data := []byte(`{"type":"` + string(CmdIdentityCreate) + `","payload":` + string(raw) + `,"type":"` + string(CmdBootstrap) + `"}`)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "corrupt") {
			t.Fatalf("recovered %v, want a corrupt-entry panic", r)
		}
	}()
	f.Apply(&raft.Log{Index: 2, Term: 1, Type: raft.LogCommand, Data: data})
}
