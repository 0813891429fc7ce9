package integration

import (
	"bufio"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"edgectl/webhook"
)

// hookReceiver is a webhook endpoint: it checks each delivery's signature
// and keeps every event it was given, in arrival order.
type hookReceiver struct {
	srv    *httptest.Server
	secret string
	down   atomic.Bool

	mu         sync.Mutex
	got        []int64 // event ids in arrival order, duplicates included
	badSig     int
	batchOrder []string
}

func newHookReceiver(t *testing.T, secret string) *hookReceiver {
	h := &hookReceiver{secret: secret}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if h.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if r.Header.Get(webhook.SignatureHeader) != webhook.Sign(secret, body) {
			h.badSig++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var b struct {
			Events []struct {
				ID int64 `json:"id"`
			} `json:"events"`
		}
		_ = json.Unmarshal(body, &b)
		for i, e := range b.Events {
			if i > 0 && e.ID <= b.Events[i-1].ID {
				h.batchOrder = append(h.batchOrder, fmt.Sprintf("%d after %d", e.ID, b.Events[i-1].ID))
			}
			h.got = append(h.got, e.ID)
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) ids() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int64(nil), h.got...)
}

// TestEventsOnThreeNodes: every node holds the same events (one of them
// restarted after a SIGKILL, one caught up by a snapshot install), with the
// cluster's own events among them; a webhook gets every matching event, at
// least once and in id order, with valid signatures, across a SIGKILL of
// the leader in the middle of the deliveries and a receiver that was down;
// each node's events file has the same events; no secret is in any event.
func TestEventsOnThreeNodes(t *testing.T) {
	t.Parallel()
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := startCluster(t, clusterOpts{size: 3, args: func(i int) []string {
		args := []string{"--snapshot-threshold", "64", "--trailing-logs", "16", "--raft-segment-size", "16384", "--snapshot-interval", "1s", "--log-level", "debug",
			"--events-file", filepath.Join(dirs[i], "events.jsonl")}
		if i == 0 {
			args = append(args, "--metrics-addr", metricsAddr)
		}
		return args
	}})
	const secret = "hook-secret-9f8e7d6c5b4a"
	h := newHookReceiver(t, secret)
	caPem := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw}))
	status, m := do(t, http.MethodPost, c.nodes[0].mgmt("/event-subscriptions"), c.token, map[string]any{
		"name": "identities", "url": h.srv.URL, "secret": secret, "caPem": caPem,
		"filter": `namespace = "entity" and entityType = "identities"`})
	mustStatus(t, "create the subscription", status, m, http.StatusCreated)
	subID := jget(m, "data", "id").(string)

	// A URL at the controller's own API port is refused.
	status, m = do(t, http.MethodPost, c.nodes[0].mgmt("/event-subscriptions"), c.token, map[string]any{
		"name": "loop", "url": "https://127.0.0.1:" + fmt.Sprint(c.nodes[1].apiPort) + "/", "secret": secret})
	wantError(t, "a webhook at a member's API port", status, m, http.StatusBadRequest, "COULD_NOT_VALIDATE", "url")

	var created []string
	createSome := func(prefix string, n int) {
		for i := range n {
			run := c.running()
			w := run[i%len(run)]
			created = append(created, createIdentityAcrossAFailover(t, w, c.token, map[string]any{
				"name": fmt.Sprintf("%s-%02d", prefix, i), "type": "User", "isAdmin": false}))
		}
	}
	createSome("before", 30)

	// SIGKILL the leader while deliveries run; it comes back. Not before
	// it has reported winning its election (it reports every 250 ms: a
	// quick start can reach this point before).
	l := c.leader(10 * time.Second)
	waitUntil(t, "the first leader's leaderChanged event", 10*time.Second, func() error {
		_, m := do(t, http.MethodGet, c.nodes[l].mgmt("/events?consistency=linearizable&filter="+url.QueryEscape(
			`namespace = "cluster" and action = "leaderChanged"`)), c.token, nil)
		if evs, _ := jget(m, "data").([]any); len(evs) == 0 {
			return fmt.Errorf("none yet")
		}
		return nil
	})
	c.nodes[l].kill()
	createSome("after-kill", 30)
	c.restart(l)

	// A receiver that is down gets the backlog when it is back.
	h.down.Store(true)
	createSome("while-down", 10)
	waitUntil(t, "the subscription to show the receiver's error", 20*time.Second, func() error {
		_, m := do(t, http.MethodGet, c.nodes[0].mgmt("/event-subscriptions/"+subID), c.token, nil)
		if e, _ := jget(m, "data", "lastError").(string); !strings.Contains(e, "503") {
			return fmt.Errorf("lastError %v", jget(m, "data", "lastError"))
		}
		return nil
	})
	h.down.Store(false)

	// A follower stopped while the log moves past the trailing logs
	// catches up from a snapshot.
	f := (c.leader(10*time.Second) + 1) % 3
	c.nodes[f].stop()
	createSome("while-stopped", 120)
	// A snapshot on the leader now drops the log entries the stopped node
	// lacks (all but the last 16, by whole 16 KiB segments of the log): it
	// can only catch up by the snapshot.
	ldr := c.nodes[c.leader(10*time.Second)]
	status, m = do(t, http.MethodPost, ldr.mgmt("/database/snapshot"), c.token, nil)
	mustStatus(t, "a snapshot on the leader", status, m, http.StatusOK)
	// Its event is in the log when the request returns.
	snapIndex := jget(m, "data", "index")
	_, m = do(t, http.MethodGet, ldr.mgmt("/events?consistency=linearizable&filter="+url.QueryEscape(
		`namespace = "cluster" and action = "snapshotTaken" sort by id desc`)), c.token, nil)
	if evs, _ := jget(m, "data").([]any); len(evs) == 0 || jget(evs[0], "after", "index") != snapIndex {
		t.Errorf("right after a snapshot at index %v, the newest snapshotTaken event is not it: %s", snapIndex, js(m))
	}
	c.restart(f)
	waitUntil(t, c.nodes[f].name+" to catch up by a snapshot install", 20*time.Second, func() error {
		if !strings.Contains(c.nodes[f].stderr.String(), "Installed remote snapshot") {
			return fmt.Errorf("no snapshot install in its log")
		}
		return nil
	})

	// The webhook: every identity's creation, in id order, signed.
	want := map[string]bool{}
	for _, id := range created {
		want[id] = true
	}
	var hookIDs []int64
	waitUntil(t, "the webhook to receive every identity's creation", 60*time.Second, func() error {
		_, m := do(t, http.MethodGet, c.nodes[0].mgmt("/event-subscriptions/"+subID+"?consistency=linearizable"), c.token, nil)
		if p := jget(m, "data", "pending"); p != float64(0) {
			return fmt.Errorf("pending %v", p)
		}
		hookIDs = h.ids()
		return nil
	})
	h.mu.Lock()
	if h.badSig > 0 || len(h.batchOrder) > 0 {
		t.Errorf("%d deliveries with a bad signature; out of order within a batch: %v", h.badSig, h.batchOrder)
	}
	h.mu.Unlock()
	// Redeliveries after the failover repeat ids already sent, never skip
	// one: after the first time an id is seen, the ids that are new keep
	// increasing.
	firstSeen, newest := map[int64]bool{}, int64(0)
	for _, id := range hookIDs {
		if firstSeen[id] {
			continue
		}
		firstSeen[id] = true
		if id < newest {
			t.Fatalf("event %d arrived for the first time after %d", id, newest)
		}
		newest = id
	}

	// Every node: the same events.
	last := int64(0)
	for _, n := range c.nodes {
		_, m := do(t, http.MethodGet, n.mgmt("/events?limit=1&filter="+url.QueryEscape("sort by id desc")+"&consistency=linearizable"), c.token, nil)
		id, _ := jget(m, "data").([]any)[0].(map[string]any)["id"].(float64)
		if last == 0 || int64(id) < last {
			last = int64(id)
		}
	}
	var first []any
	for i, n := range c.nodes {
		events, err := listAll(t, n, c.token, "/events?filter="+url.QueryEscape(fmt.Sprintf("id <= %d", last)))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = events
			continue
		}
		if d := sameLists(first, events); d != "" {
			t.Fatalf("%s's events differ from %s's: %s", n.name, c.nodes[0].name, d)
		}
	}
	// The webhook delivered exactly the identity creations among them.
	delivered := 0
	actions := map[string]int{}
	for _, e := range first {
		ns, action := jget(e, "namespace").(string), jget(e, "action").(string)
		actions[ns+"."+action]++
		if ns == "entity" && jget(e, "entityType") == "identities" {
			if !firstSeen[int64(jget(e, "id").(float64))] {
				t.Errorf("event %v was not delivered", jget(e, "id"))
			}
			delivered++
		}
	}
	if delivered < len(created) {
		t.Errorf("%d identity events for %d identities", delivered, len(created))
	}
	for _, a := range []string{"cluster.memberAdded", "cluster.leaderChanged", "cluster.snapshotTaken", "entity.created", "authentication.login"} {
		if actions[a] == 0 {
			t.Errorf("no %s event among %v", a, actions)
		}
	}
	if actions["cluster.leaderChanged"] < 2 {
		t.Errorf("%d leaderChanged events: the first leader and the one after the SIGKILL should both be there", actions["cluster.leaderChanged"])
	}
	raw := js(first)
	for _, s := range []string{secret, adminPassword, c.nodes[0].password} {
		if s != "" && strings.Contains(raw, s) {
			t.Fatalf("a secret is in the events")
		}
	}

	// The event metrics (counted since the process started: node 0 may be
	// the one restarted, so it applies one more write first).
	createSome("for-metrics", 1)
	waitUntil(t, "the event metrics", 10*time.Second, func() error {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, want := range []string{`edgectl_events_total{namespace="entity"}`,
			`edgectl_event_subscription_lag_events{subscription="identities"}`, `edgectl_event_subscription_failing{subscription="identities"} 0`,
			"edgectl_event_stream_subscribers 0", "edgectl_events_last_id"} {
			if !strings.Contains(string(body), want) {
				return fmt.Errorf("no %s in /metrics", want)
			}
		}
		return nil
	})

	// The events file of each node: the same events (from its start on),
	// one per line, ids increasing, nothing skipped.
	byID := map[int64]string{}
	for _, e := range first {
		byID[int64(jget(e, "id").(float64))] = js(e)
	}
	for i, n := range c.nodes {
		path := filepath.Join(dirs[i], "events.jsonl")
		waitUntil(t, n.name+"'s events file to reach event "+fmt.Sprint(last), 10*time.Second, func() error {
			ids, err := fileEventIDs(path, byID)
			if err != nil {
				return err
			}
			if len(ids) == 0 || ids[len(ids)-1] < last {
				return fmt.Errorf("%d events, up to %v", len(ids), ids)
			}
			for k := 1; k < len(ids); k++ {
				if ids[k] != ids[k-1]+1 {
					t.Fatalf("%s: event %d follows %d", path, ids[k], ids[k-1])
				}
			}
			return nil
		})
	}
}

// fileEventIDs reads an events file; each event kept by the API (byID)
// must be the same there.
func fileEventIDs(path string, byID map[int64]string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: a line that is not JSON: %v", path, err)
		}
		id := int64(e["id"].(float64))
		if want, ok := byID[id]; ok && js(e) != want {
			return nil, fmt.Errorf("%s: event %d differs from the API's:\n%s\n%s", path, id, js(e), want)
		}
		ids = append(ids, id)
	}
	return ids, sc.Err()
}

// createIdentityAcrossAFailover creates an identity as a client must right
// after the leader died: a write forwarded on a connection to the dead leader
// can end 503 OUTCOME_UNKNOWN (the node cannot tell whether the leader read it
// before dying), and the client then reads it back by name with
// consistency=linearizable once a leader answers, creating it again only if
// it is not there (what the error's message says to do).
func createIdentityAcrossAFailover(t *testing.T, n *node, token string, body map[string]any) string {
	t.Helper()
	name := body["name"].(string)
	var id string
	waitUntil(t, "create identity "+name, 20*time.Second, func() error {
		status, m := do(t, http.MethodPost, n.mgmt("/identities"), token, body)
		switch {
		case status == http.StatusCreated:
			id, _ = jget(m, "data", "id").(string)
			return nil
		case status != http.StatusServiceUnavailable || jget(m, "error", "code") != "OUTCOME_UNKNOWN":
			t.Fatalf("create identity %s: status %d: %s", name, status, js(m))
		}
		q := url.Values{"filter": {fmt.Sprintf("name = %q", name)}, "consistency": {"linearizable"}}
		status, m = do(t, http.MethodGet, n.mgmt("/identities?"+q.Encode()), token, nil)
		if status != http.StatusOK {
			return fmt.Errorf("read back %s: status %d", name, status)
		}
		if data, _ := m["data"].([]any); len(data) == 1 {
			id, _ = data[0].(map[string]any)["id"].(string)
			return nil
		}
		return fmt.Errorf("%s was not created by the write whose outcome was unknown; writing it again", name)
	})
	if id == "" {
		t.Fatalf("create identity %s: no id", name)
	}
	return id
}
