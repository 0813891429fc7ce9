package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"edgectl/store"
)

// serve sends GET target with the session token through the server's handler.
func serveAs(s *Server, token, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("zt-session", token)
	s.Handler().ServeHTTP(rec, req)
	return rec
}

// checkSameAsOld compares the served answer of every target with the old
// encoder's answer for the same session, byte for byte.
func checkSameAsOld(t *testing.T, f *csFixture, token string, targets []string) {
	t.Helper()
	for _, target := range targets {
		rec := serveAs(f.s, token, target)
		wantCode, want := oldAnswer(f.s, token, target)
		if rec.Code != wantCode {
			t.Fatalf("%s: status %d, want %d: %s", target, rec.Code, wantCode, rec.Body)
		}
		if wantCode != http.StatusOK {
			continue
		}
		if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%s: answers differ at byte %d of %d/%d:\n got …%s\nwant …%s", target, i, len(got), len(want),
				got[max(0, i-120):min(len(got), i+120)], want[max(0, i-120):min(len(want), i+120)])
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s: Content-Type %q", target, ct)
		}
	}
}

var clientServiceTargets = []string{
	ClientPrefix + "/services?limit=100",
	ClientPrefix + "/services",
	ClientPrefix + "/services?limit=5&offset=3",
	ClientPrefix + "/services?offset=1000",
	ClientPrefix + "/services?limit=0",
	ClientPrefix + "/services?filter=" + url.QueryEscape(`name contains "1" sort by name desc limit none`),
	ClientPrefix + "/services?roleFilter=%23all&limit=500",
	ClientPrefix + "/services?roleFilter=%23visible&roleFilter=%23q%22uote&roleSemantic=AllOf",
	ClientPrefix + "/services/svc-001", // configs and overrides, a Bind grant
	ClientPrefix + "/services/svc-002", // a Bind grant with an MFA check
	ClientPrefix + "/services/svc-004", // a name JSON escapes, a posture-guarded Dial grant
	ClientPrefix + "/services/svc-003", // not visible: 404
}

// TestClientServicesAnswerSameBytesAsBefore: the hand-written encoder of the
// client service list and detail answers exactly what encoding/json of the
// old typed views answered, for services with configs (overridden per
// identity, asked for by id, by name, all or none), posture queries of every
// kind (passing, failing, timing out) and both permissions.
func TestClientServicesAnswerSameBytesAsBefore(t *testing.T) {
	t.Parallel()
	for i, types := range [][]string{{"all"}, nil, {"ct-1", "host.v1"}, {"B<&>\u2028é"}, {"all"}} {
		hidden := 0
		if i == 4 { // the caller sees few of all services: lookups, not a scan
			hidden = 2000
		}
		f := newCSFixture(t, csOptions{services: 40, guarded: 12, sessions: 3, configTypes: types, rich: true, hidden: hidden})
		for _, tok := range f.tokens {
			checkSameAsOld(t, f, tok, clientServiceTargets)
		}
		// Later: the MFA checks' remaining time has moved, one has timed out.
		f.now = f.now.Add(5 * time.Minute)
		checkSameAsOld(t, f, f.tokens[0], clientServiceTargets)
	}
}

// TestClientServicesFollowRecordChanges: fragments cached per record are
// never served for a newer version of the record (service, posture check,
// config, config type, override), nor for another caller.
func TestClientServicesFollowRecordChanges(t *testing.T) {
	t.Parallel()
	f := newCSFixture(t, csOptions{services: 30, guarded: 10, sessions: 2, configTypes: []string{"all"}, rich: true})
	list := ClientPrefix + "/services?limit=100"
	checkSameAsOld(t, f, f.tokens[0], []string{list}) // fills the caches
	before := serveAs(f.s, f.tokens[0], list).Body.String()

	tx := f.s.Store.Write()
	edit := func(k *store.Kind, id string, fn func(r store.Record) store.Record) {
		t.Helper()
		r, err := tx.Get(k, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Replace(k, fn(r)); err != nil {
			t.Fatal(err)
		}
	}
	edit(store.KindService, "svc-001", func(r store.Record) store.Record {
		n := *r.(*store.Service)
		n.Name, n.Tags, n.MaxIdleTimeMillis = "renamed <svc>", map[string]any{"new": "tag"}, 99
		return &n
	})
	edit(store.KindPostureCheck, "pc-03", func(r store.Record) store.Record {
		n := *r.(*store.PostureCheck)
		n.Tags = map[string]any{"changed": true}
		n.Process = &store.Process{OSType: "LINUX", Path: "/usr/bin/agent"}
		return &n
	})
	edit(store.KindConfig, "cfg-01", func(r store.Record) store.Record {
		n := *r.(*store.Config)
		n.Data = json.RawMessage(`{"changed":"yes"}`)
		return &n
	})
	edit(store.KindConfigType, "ct-0", func(r store.Record) store.Record {
		n := *r.(*store.ConfigType)
		n.Name = "host.v2"
		return &n
	})
	if err := tx.Remove(store.KindIdentityServiceConfig, "isc-0"); err != nil {
		t.Fatal(err)
	}
	tx.Commit()

	checkSameAsOld(t, f, f.tokens[0], clientServiceTargets)
	checkSameAsOld(t, f, f.tokens[1], clientServiceTargets)
	after := serveAs(f.s, f.tokens[0], list).Body.String()
	for _, want := range []string{`renamed \u003csvc\u003e`, `"changed":true`, `/usr/bin/agent`, `{"changed":"yes"}`, `"host.v2"`} {
		if strings.Contains(before, want) || !strings.Contains(after, want) {
			t.Fatalf("%s: not in the answer after the change", want)
		}
	}
}
