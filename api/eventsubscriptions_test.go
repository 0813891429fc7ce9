package api_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"edgectl/fsm"
	"edgectl/store"
	"edgectl/webhook"
)

// receiver is a webhook endpoint for tests: it checks every delivery's
// signature and keeps the event ids in the order they arrived.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	secret string
	fail   atomic.Int32 // answer 503 while > 0 (counting down)
	down   atomic.Bool  // answer 503 while set

	mu      sync.Mutex
	ids     []int64
	batches int
	badSig  int
	events  []map[string]any
}

func newReceiver(t *testing.T, secret string) *receiver {
	rc := &receiver{t: t, secret: secret}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if rc.down.Load() || rc.fail.Add(-1) >= 0 {
		http.Error(w, "receiver unavailable", http.StatusServiceUnavailable)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if r.Header.Get(webhook.SignatureHeader) != webhook.Sign(rc.secret, body) {
		rc.badSig++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var b struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.Events) == 0 || len(b.Events) > webhook.BatchSize {
		rc.t.Errorf("a delivery of %d events (%v): %.200s", len(b.Events), err, body)
	}
	rc.batches++
	for _, e := range b.Events {
		rc.ids = append(rc.ids, int64(e["id"].(float64)))
		rc.events = append(rc.events, e)
	}
	w.WriteHeader(http.StatusNoContent)
}

// caPem is the PEM of the receiver's certificate, for the subscription's caPem.
func (rc *receiver) caPem() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw}))
}

func (rc *receiver) snapshot() (ids []int64, events []map[string]any, badSig int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]int64(nil), rc.ids...), append([]map[string]any(nil), rc.events...), rc.badSig
}

// runDeliverer delivers from the in-process server as its leader would.
func runDeliverer(t *testing.T, ts *testServer) {
	ctx, cancel := context.WithCancel(context.Background())
	d := &webhook.Deliverer{Store: ts.store, IsLeader: func() bool { return true }, Log: hclog.NewNullLogger(), Poll: 20 * time.Millisecond,
		Propose: func(ctx context.Context, c fsm.CommandType, p any) error {
			_, err := ts.writer.Do(ctx, c, p)
			return err
		}}
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEventSubscriptions_DeliverInOrderSignedWithRetriesAndBacklog: the
// matching events arrive in id order, in batches of at most 100, signed;
// a receiver that fails gets them after (lastError says why meanwhile); a
// disabled subscription holds its cursor and delivers the backlog when
// enabled again; the secret is never shown.
func TestEventSubscriptions_DeliverInOrderSignedWithRetriesAndBacklog(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	const secret = "a-webhook-secret-0123456789"
	rc := newReceiver(t, secret)
	rc.fail.Store(2)
	runDeliverer(t, ts)

	st, out := ts.do(http.MethodPost, mgmt("/event-subscriptions"), map[string]any{"name": "svc-hook", "url": rc.srv.URL + "/hook",
		"secret": secret, "caPem": rc.caPem(), "filter": `namespace = "entity" and entityType = "services"`})
	if st != http.StatusCreated {
		t.Fatalf("create subscription: %d %v", st, out)
	}
	subID := dig(out, "data", "id").(string)
	var want []string
	for i := range 230 {
		want = append(want, ts.create("/services", map[string]any{"name": fmt.Sprintf("svc-%03d", i)}))
	}
	waitFor(t, "230 service events", 30*time.Second, func() bool { ids, _, _ := rc.snapshot(); return len(ids) >= 230 })
	ids, events, badSig := rc.snapshot()
	if badSig != 0 {
		t.Errorf("%d deliveries with a bad signature", badSig)
	}
	seen := map[string]bool{}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ids out of order at %d: %d after %d", i, ids[i], ids[i-1])
		}
	}
	for _, e := range events {
		if e["entityType"] != "services" || e["action"] != "created" {
			t.Fatalf("an event the filter does not match: %v", e)
		}
		seen[e["entityId"].(string)] = true
	}
	for _, id := range want {
		if !seen[id] {
			t.Fatalf("service %s's event was not delivered", id)
		}
	}
	sub := ts.get("/event-subscriptions/" + subID)
	waitFor(t, "the cursor to reach the last event", 10*time.Second, func() bool {
		sub = ts.get("/event-subscriptions/" + subID)
		return dig(sub, "pending").(float64) == 0 && dig(sub, "lastDeliveredId").(float64) >= float64(ids[len(ids)-1])
	})
	if strings.Contains(js(sub), secret) || dig(sub, "secret") != nil {
		t.Fatalf("the secret is shown: %v", sub)
	}
	if dig(sub, "lastError") != nil {
		t.Errorf("lastError after a successful delivery: %v", sub)
	}

	// A receiver that is down: lastError says why, and the backlog comes after.
	rc.down.Store(true)
	ts.create("/services", map[string]any{"name": "while-down"})
	waitFor(t, "lastError", 10*time.Second, func() bool {
		sub = ts.get("/event-subscriptions/" + subID)
		e, _ := dig(sub, "lastError").(string)
		return strings.Contains(e, "503") && dig(sub, "lastErrorAt") != nil && dig(sub, "pending").(float64) == 1
	})
	rc.down.Store(false)
	waitFor(t, "the backlog after the receiver is back", 30*time.Second, func() bool {
		_, ev, _ := rc.snapshot()
		return ev[len(ev)-1]["entityName"] == "while-down"
	})

	// Disabled: the cursor holds, the backlog comes when enabled.
	st, out = ts.do(http.MethodPatch, mgmt("/event-subscriptions/"+subID), map[string]any{"isEnabled": false})
	if st != http.StatusOK {
		t.Fatalf("disable: %d %v", st, out)
	}
	before, _, _ := rc.snapshot()
	ts.create("/services", map[string]any{"name": "while-disabled"})
	sub = ts.get("/event-subscriptions/" + subID)
	if dig(sub, "pending").(float64) != 1 {
		t.Fatalf("pending while disabled: %v", sub)
	}
	time.Sleep(100 * time.Millisecond) // five polls: a disabled subscription must not deliver
	if now, _, _ := rc.snapshot(); len(now) != len(before) {
		t.Fatalf("a disabled subscription delivered %d events", len(now)-len(before))
	}
	ts.do(http.MethodPatch, mgmt("/event-subscriptions/"+subID), map[string]any{"isEnabled": true})
	waitFor(t, "the backlog after enabling", 30*time.Second, func() bool {
		_, ev, _ := rc.snapshot()
		return ev[len(ev)-1]["entityName"] == "while-disabled"
	})
	// Deliveries are not entity changes: no event says the subscription was
	// updated but the two PATCHes.
	_, updates := ts.list("/events?filter=" + url.QueryEscape(`entityType = "event-subscriptions" and action = "updated"`))
	if updates != 2 {
		t.Errorf("%d update events of the subscription, want the 2 PATCHes", updates)
	}
}

// TestEventSubscriptions_Validation: every bad field is a 400 naming it,
// and nothing is stored.
func TestEventSubscriptions_Validation(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	good := func() map[string]any {
		return map[string]any{"name": "h", "url": "https://receiver.example:8443/x", "secret": "0123456789abcdef"}
	}
	for _, c := range []struct {
		field string
		edit  func(m map[string]any)
	}{
		{"url", func(m map[string]any) { m["url"] = "http://receiver.example/x" }},
		{"url", func(m map[string]any) { m["url"] = "not a url" }},
		{"url", func(m map[string]any) { delete(m, "url") }},
		{"secret", func(m map[string]any) { delete(m, "secret") }},
		{"secret", func(m map[string]any) { m["secret"] = "short" }},
		{"filter", func(m map[string]any) { m["filter"] = `nosuchfield = 1` }},
		{"filter", func(m map[string]any) { m["filter"] = `namespace = ` }},
		{"caPem", func(m map[string]any) { m["caPem"] = "not a certificate" }},
		{"name", func(m map[string]any) { delete(m, "name") }},
		{"isEnabled", func(m map[string]any) { m["isEnabled"] = "yes" }},
	} {
		body := good()
		c.edit(body)
		st, out := ts.do(http.MethodPost, mgmt("/event-subscriptions"), body)
		if st != http.StatusBadRequest || !strings.Contains(js(out), c.field) {
			t.Errorf("%v: %d %v, want 400 naming %s", body, st, out, c.field)
		}
	}
	if _, n := ts.list("/event-subscriptions"); n != 0 {
		t.Fatalf("%d subscriptions stored by refused requests", n)
	}
	// A PUT without the secret keeps it; the filter defaults to every event.
	id := ts.create("/event-subscriptions", good())
	body := good()
	delete(body, "secret")
	body["name"] = "renamed"
	if st, out := ts.do(http.MethodPut, mgmt("/event-subscriptions/"+id), body); st != http.StatusOK {
		t.Fatalf("PUT without the secret: %d %v", st, out)
	}
	sub := ts.get("/event-subscriptions/" + id)
	if dig(sub, "name") != "renamed" || dig(sub, "filter") != "" || dig(sub, "isEnabled") != true {
		t.Fatalf("after PUT: %v", sub)
	}
	stored, err := store.GetAs[*store.EventSubscription](ts.store.Read(), store.KindEventSubscription, id)
	if err != nil || stored.Secret != "0123456789abcdef" {
		t.Fatalf("the PUT without a secret lost it: %v %v", stored, err)
	}
}
