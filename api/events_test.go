package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"edgectl/fsm"
	"edgectl/store"
)

// TestEvents_EntityChangesWithTheirActor: creates, updates and deletes
// through the API yield entity events with the API's resource names, the
// changed fields, before and after, and the actor; no secret appears.
func TestEvents_EntityChangesWithTheirActor(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, start := ts.list("/events?limit=1")
	id := ts.create("/identities", map[string]any{"name": "evie", "type": "User", "isAdmin": false})
	ts.create("/authenticators", map[string]any{"identityId": id, "method": "updb", "username": "evie", "password": "Secret-pass-42"})
	ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"roleAttributes": []string{"ops"}})
	ts.do(http.MethodDelete, mgmt("/identities/"+id), nil)

	st, out := ts.do(http.MethodGet, mgmt("/events?limit=500&filter="+`entityId%3D%22`+id+`%22`), nil)
	if st != 200 {
		t.Fatalf("events: %d %v", st, out)
	}
	events := out["data"].([]any)
	if len(events) != 3 {
		t.Fatalf("%d events of the identity, want created, updated, deleted: %v", len(events), events)
	}
	for i, want := range []string{"created", "updated", "deleted"} {
		e := events[i].(map[string]any)
		if e["namespace"] != "entity" || e["action"] != want || e["entityType"] != "identities" || e["entityName"] != "evie" ||
			dig(e, "actor", "identityName") != "Default Admin" || dig(e, "actor", "apiSessionId") == "" || dig(e, "actor", "sourceAddress") == nil {
			t.Fatalf("event %d: %v", i, e)
		}
	}
	if upd := events[1].(map[string]any); !strings.Contains(js(upd["changedFields"]), "roleAttributes") ||
		dig(upd, "after", "roleAttributes") == nil {
		t.Fatalf("update event: %v", upd)
	}
	// Ids increase in log order; fromId reads after one.
	first := events[0].(map[string]any)["id"].(float64)
	st, out = ts.do(http.MethodGet, mgmt("/events?limit=500&fromId="+js(first)), nil)
	if st != 200 || len(out["data"].([]any)) == 0 || out["data"].([]any)[0].(map[string]any)["id"].(float64) != first+1 {
		t.Fatalf("fromId: %d %v", st, out)
	}
	// No secret in any event.
	_, all := ts.list("/events?limit=500")
	if all <= start {
		t.Fatal("no events")
	}
	st, out = ts.do(http.MethodGet, mgmt("/events?limit=500"), nil)
	raw := js(out)
	for _, secret := range []string{"Secret-pass-42", "passwordHash", "$argon2"} {
		if strings.Contains(raw, secret) {
			t.Fatalf("an event holds %q", secret)
		}
	}
	st, out = ts.do(http.MethodGet, mgmt("/events?fromId=x"), nil)
	wantError(t, st, out, http.StatusBadRequest, "INVALID_FILTER", "fromId")
}

// TestEvents_RetentionAndCompactedReads: the log keeps the newest events by
// count; a read from before the oldest kept one is 410 naming it.
func TestEvents_RetentionAndCompactedReads(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	if _, err := ts.writer.Do(context.Background(), fsm.CmdEventsEnable, store.EventState{RetentionCount: 3}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"s1", "s2", "s3", "s4", "s5"} {
		ts.create("/services", map[string]any{"name": n})
	}
	data, total := ts.list("/events?limit=500")
	if total != 3 || dig(data[2], "entityName") != "s5" {
		t.Fatalf("kept %d events: %v", total, data)
	}
	oldest := data[0].(map[string]any)["id"].(float64)
	st, out := ts.do(http.MethodGet, mgmt("/events?fromId=1"), nil)
	if st != http.StatusGone || !strings.Contains(js(out), js(oldest)) {
		t.Fatalf("a read from before the oldest kept event: %d %v", st, out)
	}
}

func js(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// TestEvents_Authentication: a login, the failures the lockout policy
// counts, the lockout, and the end of a session are events.
func TestEvents_Authentication(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	pol := authPolicyBody("two-tries")
	pol["primary"].(map[string]any)["updb"].(map[string]any)["maxAttempts"] = 2
	policy := ts.create("/auth-policies", pol)
	id := ts.authnIdentity("lock-me", map[string]any{"authPolicyId": policy})
	ts.create("/authenticators", map[string]any{"identityId": id, "method": "updb", "username": "lock-me", "password": "Right-pass-1"})
	tok := ts.login("lock-me", "Right-pass-1")
	ts.doAs(tok, http.MethodDelete, clientPath("/current-api-session"), nil)
	for range 2 {
		ts.doAs("", http.MethodPost, mgmt("/authenticate?method=password"), map[string]any{"username": "lock-me", "password": "Wrong-pass-1"})
	}
	data, _ := ts.list("/events?limit=500&filter=" + `namespace%20in%20%5B%22authentication%22%2C%22session%22%5D%20and%20entityName%3D%22lock-me%22`)
	var got []string
	for _, e := range data {
		got = append(got, dig(e, "namespace").(string)+"/"+dig(e, "action").(string))
	}
	want := "authentication/login session/ended authentication/loginFailed authentication/loginFailed authentication/lockout"
	if strings.Join(got, " ") != want {
		t.Fatalf("events %v, want %s", got, want)
	}
	if dig(data[0], "after", "method") != "updb" || dig(data[2], "after", "method") != "password" || dig(data[2], "actor", "sourceAddress") == nil {
		t.Fatalf("login and failure details: %v %v", data[0], data[2])
	}
}

// TestEvents_FailedLoginsOfKnownIdentitiesByDefault: a wrong password for
// an identity whose auth policy counts no failures (the default) is still an
// authentication.loginFailed event, with method, reason and a count of 0; a
// disabled identity's attempt says so; an unknown username records nothing
// and is counted in edgectl_login_failures_total.
func TestEvents_FailedLoginsOfKnownIdentitiesByDefault(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.authnIdentity("plain", nil)
	ts.create("/authenticators", map[string]any{"identityId": id, "method": "updb", "username": "plain", "password": "Right-pass-1"})
	try := func(user string) {
		if st, _ := ts.doAs("", http.MethodPost, mgmt("/authenticate?method=password"), map[string]any{"username": user, "password": "Wrong-pass-1"}); st != 401 {
			t.Fatalf("a wrong password for %s: %d", user, st)
		}
	}
	try("plain")
	try("plain")
	try("nobody-at-all")
	if st, out := ts.do(http.MethodPost, mgmt("/identities/"+id+"/disable"), map[string]any{"durationMinutes": 0}); st != 200 {
		t.Fatalf("disable: %d %v", st, out)
	}
	try("plain")
	data, _ := ts.list("/events?limit=500&filter=" + url.QueryEscape(`namespace = "authentication" and action = "loginFailed"`))
	if len(data) != 3 {
		t.Fatalf("%d loginFailed events, want 3 (the unknown username records none): %v", len(data), data)
	}
	for i, want := range []string{"the password does not match", "the password does not match", "the identity is disabled"} {
		if dig(data[i], "entityId") != id || dig(data[i], "after", "method") != "password" || dig(data[i], "after", "reason") != want ||
			dig(data[i], "after", "count") != 0.0 {
			t.Fatalf("event %d: %v", i, data[i])
		}
	}
	rec := httptest.NewRecorder()
	ts.api.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	metrics := rec.Body.String()
	for _, want := range []string{`edgectl_login_failures_total{result="recorded"} 3`, `edgectl_login_failures_total{result="unknown_username"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("the metrics lack %s", want)
		}
	}
}

// TestEvents_Stream: Server-Sent Events from ?fromId, new events as they
// are applied, and a resume with Last-Event-ID that loses nothing.
func TestEvents_Stream(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ts.create("/services", map[string]any{"name": "before-stream"})
	read := func(header map[string]string, query string, want int, during func()) []map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.base+mgmt("/events/stream"+query), nil)
		req.Header.Set("zt-session", ts.token)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req) // not the checking client: a stream does not end
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if during != nil {
			go during()
		}
		var got []map[string]any
		sc := bufio.NewScanner(resp.Body)
		var id string
		for sc.Scan() && len(got) < want {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				var e map[string]any
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
					t.Fatal(err)
				}
				if js(e["id"]) != id {
					t.Fatalf("id: %s but data id %v", id, e["id"])
				}
				got = append(got, e)
			}
		}
		if len(got) < want {
			t.Fatalf("the stream gave %d events, want %d (%v)", len(got), want, sc.Err())
		}
		return got
	}
	first := read(nil, "?fromId=0", 1, nil)
	if first[0]["id"] != float64(1) {
		t.Fatalf("from 0 the stream starts at %v", first[0]["id"])
	}
	// Live: events applied while the stream is open arrive.
	var live []map[string]any
	live = read(nil, "", 2, func() {
		ts.create("/services", map[string]any{"name": "live-1"})
		ts.create("/services", map[string]any{"name": "live-2"})
	})
	if live[0]["entityName"] != "live-1" || live[1]["entityName"] != "live-2" {
		t.Fatalf("live events: %v", live)
	}
	// Resume after live-1: live-2 comes next.
	resumed := read(map[string]string{"Last-Event-ID": js(live[0]["id"])}, "", 1, nil)
	if resumed[0]["entityName"] != "live-2" {
		t.Fatalf("resumed with %v", resumed[0])
	}
	// ?filter: only the matching events, here from the start of the log.
	matched := read(nil, "?fromId=0&filter="+url.QueryEscape(`entityName = "live-2"`), 1, nil)
	if matched[0]["entityName"] != "live-2" {
		t.Fatalf("filtered stream gave %v", matched[0])
	}
	// A filter the stream cannot take is a 400 naming the parameter.
	for _, f := range []string{`nosuchfield = 1`, `namespace = "entity" sort by id`} {
		st, out := ts.do(http.MethodGet, mgmt("/events/stream?filter="+url.QueryEscape(f)), nil)
		if st != 400 || !strings.Contains(js(out), "filter") {
			t.Fatalf("stream filter %q: %d %s", f, st, js(out))
		}
	}
}
