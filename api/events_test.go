package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
