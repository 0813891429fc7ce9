package fsm

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"edgectl/auth"
	"edgectl/store"
)

// Every test of this package decodes its entries and snapshots with both
// encoding/json/v2 and encoding/json and panics on a difference
// (store/jsoncodec.go).
func TestMain(m *testing.M) {
	store.CrossCheckDecoding(true)
	os.Exit(m.Run())
}

// TestDecodeEntry_ReadsWhatEncodingJSONReads: entries a log may hold, including
// client bytes kept verbatim in a config's data (duplicate names, invalid
// UTF-8, odd spacing) and envelopes of other shapes, decode as encoding/json
// decodes them, or fail where it fails. A decoder with v2's own defaults
// refuses the first two, and a node that cannot decode an entry stops.
func TestDecodeEntry_ReadsWhatEncodingJSONReads(t *testing.T) {
	t.Parallel()
	at := `"at":"2026-11-23T01:00:00.123456789Z"`
	configs := []string{
		`{"type":"config.create","payload":{"id":"c1","name":"n","configTypeId":"t","data":{"a":1,"a":2}},` + at + `}`,
		`{"type":"config.create","payload":{"id":"c1","name":"n","configTypeId":"t","data":{"s":"` + "\xff\xfe" + `"}},` + at + `}`,
		`{"type":"config.create","payload":{"id":"c1","name":"n` + "\xc3" + `","configTypeId":"t","data":{ "x" : [ 1 , 2.5e3 ] } }}`,
		`{"type":"config.create","payload":{"ID":"c1","NAME":"n","data":null}}`,
		`{"type":"config.create","payload":null}`,
		`{"type":"config.create"}`,
		`{"type":"config.create","payload":{"id":"c1","unknown":{"deep":[1,{"x":null}]}},"actor":{"identityId":"a"}}`,
		`{"payload":{"id":"c1"},"type":"config.create","type":"config.update"}`,
		`{"type":"config.create","payload":{"id":"c1","data":{"a":1}`,
		`{"type":"config.create","payload":{"id":7}}`,
		`{"type":"config.create","payload":{"tags":{"k":"v","n":1.5,"b":true,"z":null}}}`,
	}
	for _, e := range configs {
		var c entryOf[store.Config]
		err := store.DecodeJSON([]byte(e), &c) // panics on a difference
		var want entryOf[store.Config]
		if werr := json.Unmarshal([]byte(e), &want); (err == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, encoding/json's %v", e, err, werr)
		}
	}
	// A config's data comes back byte for byte.
	var c entryOf[store.Config]
	raw := `{"type":"config.create","payload":{"id":"c1","data":{"a":1,"a":2,"s":"` + "\xff" + `"}}}`
	if err := store.DecodeJSON([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	if got := string(c.Payload.Data); got != `{"a":1,"a":2,"s":"`+"\xff"+`"}` {
		t.Fatalf("data %q", got)
	}

	// Every payload the benchmark's writer makes, with every optional part.
	e := identityCreateEntry(3, "bench-0000003", "e-bench-0000003")
	var ic entryOf[IdentityCreate]
	if err := store.DecodeJSON(e, &ic); err != nil {
		t.Fatal(err)
	}
	if ic.Type != CmdIdentityCreate || ic.Actor == nil || ic.Actor.IdentityName != "Default Admin" ||
		!ic.At.Equal(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)) || ic.Payload.Identity.Name != "name-bench-0000003" ||
		len(ic.Payload.Enrollments) != 1 || ic.Payload.Enrollments[0].Token != "tok-bench-0000003" {
		t.Fatalf("decoded %+v", ic)
	}
}

// identityCreateEntry is the entry of the n-th identity create of the
// benchmarks, with the identity's and the enrollment's ids: role
// attributes, an OTT enrollment, an actor.
func identityCreateEntry(n int, id, enrollmentID string) []byte {
	at := time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	actor := &store.EventActor{IdentityID: "admin", IdentityName: "Default Admin", NodeID: "n1"}
	name := fmt.Sprintf("bench-%07d", n)
	ident := identity(id, "name-"+name)
	ident.RoleAttributes = []string{"sales", fmt.Sprintf("team-%d", n%20)}
	raw, err := json.Marshal(IdentityCreate{Identity: ident, Enrollments: []*store.Enrollment{{
		Base: store.Base{ID: enrollmentID, CreatedAt: at}, IdentityID: id, Method: "ott", Token: "tok-" + name, ExpiresAt: at.Add(time.Hour)}}})
	if err != nil {
		panic(err)
	}
	return envelope(CmdIdentityCreate, raw, at, actor, "")
}

// BenchmarkDecodeEntry_IdentityCreate: the decode every node runs for an
// identity create (the cross-check off), by store.DecodeJSON and by the fast
// path (fastdecode.go).
func BenchmarkDecodeEntry_IdentityCreate(b *testing.B) {
	withoutCrossCheck(b)
	entries := identityCreateEntries(1024)
	for _, d := range []struct {
		name   string
		decode func([]byte, *entryOf[IdentityCreate]) bool
	}{
		{"store.DecodeJSON", func(e []byte, c *entryOf[IdentityCreate]) bool { return store.DecodeJSON(e, c) == nil }},
		{"fast-path", decodeIdentityCreateEntry},
	} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				var c entryOf[IdentityCreate]
				if !d.decode(entries[n%len(entries)], &c) {
					b.Fatal("not decoded")
				}
				n++
			}
		})
	}
}

// identityCreateEntries are n entries of identity creates, each with its
// own ids and names, as the nodes see them (a decoder's cache of strings
// seen before would flatter one entry decoded again and again).
func identityCreateEntries(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = identityCreateEntry(i, auth.NewID(), auth.NewID())
	}
	return out
}

// withoutCrossCheck turns the cross-check off for a benchmark, which must
// measure the decode nodes run.
func withoutCrossCheck(b *testing.B) {
	store.CrossCheckDecoding(false)
	b.Cleanup(func() { store.CrossCheckDecoding(true) })
}

// BenchmarkDecodeEntry_RouterTerminator: the same for a router's terminator
// create (peer data: a host's 32-byte key).
func BenchmarkDecodeEntry_RouterTerminator(b *testing.B) {
	withoutCrossCheck(b)
	entries := make([][]byte, 1024)
	for i := range entries {
		entries[i] = terminatorCreateEntry(b, i)
	}
	for _, d := range []struct {
		name   string
		decode func([]byte, *entryOf[RouterTerminator]) bool
	}{
		{"store.DecodeJSON", func(e []byte, c *entryOf[RouterTerminator]) bool { return store.DecodeJSON(e, c) == nil }},
		{"fast-path", decodeRouterTerminatorEntry},
	} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				var c entryOf[RouterTerminator]
				if !d.decode(entries[n%len(entries)], &c) {
					b.Fatal("not decoded")
				}
				n++
			}
		})
	}
}
