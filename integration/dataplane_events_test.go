package integration

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"edgectl/webhook"
)

// Data-plane events (docs/api-events.md) with a real router and OpenZiti's
// tunnelers: each event on the SSE stream, a webhook and the events file
// within 2 s of its cause, with the right fields; usage within 10% of what
// was sent; `ziti fabric stream events`; the CLI.

// routerMetricsYAML has the router report its metrics (and its usage)
// every second, instead of every minute.
const routerMetricsYAML = "metrics:\n  reportInterval: 1s\n"

// seenEvents are the events an outlet delivered, with when each arrived.
type seenEvents struct {
	what string
	mu   sync.Mutex
	got  []seenEvent
}

type seenEvent struct {
	arrived time.Time
	e       map[string]any
}

func (s *seenEvents) add(e map[string]any) {
	s.mu.Lock()
	s.got = append(s.got, seenEvent{time.Now(), e})
	s.mu.Unlock()
}

func (s *seenEvents) all(match func(map[string]any) bool) []seenEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []seenEvent
	for _, e := range s.got {
		if match(e.e) {
			out = append(out, e)
		}
	}
	return out
}

// is matches an event whose fields have the values of kv (pairs).
func is(kv ...any) func(map[string]any) bool {
	return func(e map[string]any) bool {
		for i := 0; i+1 < len(kv); i += 2 {
			if fmt.Sprint(jget(e, strings.Split(kv[i].(string), ".")...)) != fmt.Sprint(kv[i+1]) {
				return false
			}
		}
		return true
	}
}

// waitEvent waits for an event match accepts, recorded after cause (the
// time the test made the cause happen), on every outlet, and checks each
// came within 2 s of the node seeing its cause: of cause, or of the
// event's own time when later (the tunnelers and routers take their own
// time before they tell the node: a dial, a closed connection), which must
// then be within slowBy of cause. Every outlet carries the same id.
func waitEvent(t *testing.T, what string, cause time.Time, match func(map[string]any) bool, outlets ...*seenEvents) map[string]any {
	return waitEventOf(t, what, cause, 10*time.Second, match, outlets...)
}

// waitEventOf is waitEvent with the bound on the routers' own delay.
func waitEventOf(t *testing.T, what string, cause time.Time, slowBy time.Duration, match func(map[string]any) bool, outlets ...*seenEvents) map[string]any {
	t.Helper()
	inner := match
	match = func(e map[string]any) bool { // an event of this cause, not of one before it
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(e["at"]))
		return err == nil && !at.Before(cause) && inner(e)
	}
	var first map[string]any
	waitUntil(t, what+" on every outlet", 30*time.Second, func() error {
		for _, o := range outlets {
			if len(o.all(match)) == 0 {
				return fmt.Errorf("not on %s", o.what)
			}
		}
		return nil
	})
	for _, o := range outlets {
		got := o.all(match)[0]
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(got.e["at"]))
		if err != nil {
			t.Fatalf("%s on %s: no time: %v", what, o.what, got.e)
		}
		from := cause
		if at.After(from) {
			from = at
		}
		if at.Sub(cause) > slowBy {
			t.Fatalf("%s: recorded %s after its cause (more than %s)", what, at.Sub(cause), slowBy)
		}
		if d := got.arrived.Sub(from); d > 2*time.Second {
			t.Fatalf("%s reached %s %s after its cause (more than 2 s): %v", what, o.what, d, got.e)
		}
		if first == nil {
			first = got.e
		} else if fmt.Sprint(first["id"]) != fmt.Sprint(got.e["id"]) {
			t.Fatalf("%s: id %v on one outlet, %v on %s", what, first["id"], got.e["id"], o.what)
		}
	}
	return first
}

// followSSE reads n's data-plane event stream into s until the test ends.
func followSSE(t *testing.T, n *node, token, filter string) *seenEvents {
	t.Helper()
	s := &seenEvents{what: "the SSE stream"}
	u := n.mgmt("/data-plane-events/stream")
	if filter != "" {
		u += "?filter=" + strings.ReplaceAll(strings.ReplaceAll(filter, " ", "%20"), `"`, "%22")
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("zt-session", token)
	c := *clientFor(req.URL.Host)
	c.Timeout = 0
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("the stream answered %d: %s", resp.StatusCode, b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e map[string]any
				if json.Unmarshal([]byte(data), &e) == nil {
					s.add(e)
				}
			}
		}
	}()
	return s
}

// dataPlaneHook subscribes a webhook to n's data-plane events that filter
// matches and returns what it receives.
func dataPlaneHook(t *testing.T, n *node, token, filter string) *seenEvents {
	t.Helper()
	s := &seenEvents{what: "the webhook"}
	const secret = "a-data-plane-webhook-secret"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get(webhook.SignatureHeader) != webhook.Sign(secret, body) || r.Header.Get("X-Edgectl-Events") != "data-plane" {
			http.Error(w, "bad signature or not data-plane events", http.StatusUnauthorized)
			return
		}
		var b struct {
			Events []map[string]any `json:"events"`
		}
		_ = json.Unmarshal(body, &b)
		for _, e := range b.Events {
			s.add(e)
		}
	}))
	t.Cleanup(srv.Close)
	caPem := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	creator(t, n, token)("/event-subscriptions", map[string]any{"name": "data-plane", "url": srv.URL, "secret": secret, "caPem": caPem, "filter": filter})
	return s
}

// tailFile reads the JSON lines appended to path into s until the test ends.
func tailFile(t *testing.T, path string) *seenEvents {
	t.Helper()
	s := &seenEvents{what: "the events file"}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		var off int64
		var part []byte
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			f, err := os.Open(path)
			if err != nil {
				continue
			}
			_, _ = f.Seek(off, io.SeekStart)
			b, _ := io.ReadAll(f)
			f.Close()
			off += int64(len(b))
			part = append(part, b...)
			for {
				i := strings.IndexByte(string(part), '\n')
				if i < 0 {
					break
				}
				var e map[string]any
				if json.Unmarshal(part[:i], &e) == nil {
					s.add(e)
				}
				part = part[i+1:]
			}
		}
	}()
	return s
}

// dataPlaneNodeID is the node id n's data-plane events carry (the list's meta).
func dataPlaneNodeID(t *testing.T, n *node, token string) string {
	t.Helper()
	st, m := do(t, "GET", n.mgmt("/data-plane-events?limit=1"), token, nil)
	mustStatus(t, "list data-plane events", st, m, 200)
	id, _ := jget(m, "meta", "nodeId").(string)
	if id == "" {
		t.Fatalf("no meta.nodeId: %s", js(m))
	}
	return id
}

// sendThrough opens a connection through the proxy, echoes data, and
// closes it; it returns when the echo came back.
func sendThrough(t *testing.T, addr string, data []byte) {
	t.Helper()
	if err := echoOnce(addr, data); err != nil {
		t.Fatalf("echo of %d bytes: %v", len(data), err)
	}
}

// TestDataPlaneEvents_TunnelersOnSSEWebhookAndFile: a router connecting, a
// host's terminator, a circuit made, its usage and its end, a dial with no
// terminator, the terminator removed and the router leaving, each on the
// stream, a webhook and the file within 2 s, with the names of who and
// what; the usage of 256 KiB sent within 10%.
func TestDataPlaneEvents_TunnelersOnSSEWebhookAndFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "data-plane.jsonl")
	n := startNode(t, nodeOpts{args: []string{"--data-plane-events-file", file}})
	token := login(t, n, adminUser, adminPassword)
	nodeID := dataPlaneNodeID(t, n, token)
	filter := `namespace = "circuit" or namespace = "usage" or namespace = "terminator" or namespace = "router"`
	sse, hook, lines := followSSE(t, n, token, ""), dataPlaneHook(t, n, token, filter), tailFile(t, file)
	outlets := []*seenEvents{sse, hook, lines} // the webhook's deliverer takes the subscription within 0.2 s, long before a router is up

	start := time.Now()
	tn := newTrafficNetWith(t, n, token, routerMetricsYAML)
	waitEventOf(t, "router er1 connected", start, time.Minute, is("namespace", "router", "action", "connected", "routerName", "er1", "nodeId", nodeID), outlets...)
	waitEventOf(t, "the host's terminator created", start, time.Minute, is("namespace", "terminator", "action", "created", "serviceName", "echo", "routerName", "er1"), outlets...)

	// A known amount through the tunnelers: 256 KiB echoed.
	data := make([]byte, 256<<10)
	_, _ = rand.Read(data)
	sent := time.Now()
	sendThrough(t, tn.proxyAddr, data)
	closed := time.Now()
	created := waitEvent(t, "the circuit created", sent, is("namespace", "circuit", "action", "created", "identityName", "echo-client", "serviceName", "echo"), outlets...)
	id := created["circuitId"]
	if jget(created, "pathNames") == nil || fmt.Sprint(created["pathNames"]) != "[er1]" || created["setupMillis"] == nil {
		t.Fatalf("the created circuit's path and setup time: %v", created)
	}
	// The end's cause is the router's report that an end closed: the
	// tunnelers and the router hold a closed connection's circuit a few
	// seconds before they report it (about 5 s).
	ended := waitEvent(t, "the circuit ended", closed, is("namespace", "circuit", "action", "ended", "circuitId", id), outlets...)
	if d, ok := ended["durationMillis"].(float64); !ok || d <= 0 || d > float64(time.Since(sent).Milliseconds()) {
		t.Fatalf("the ended circuit's duration: %v", ended)
	}
	if in, out := ended["bytesIn"], ended["bytesOut"]; in == nil || out == nil {
		t.Fatalf("the ended circuit's bytes: %v", ended)
	}
	// Usage: the router's reports of the circuit, every second; their
	// ingress reads add up to what the client sent (within 10%).
	waitUntil(t, "the circuit's usage adds up to what was sent", 30*time.Second, func() error {
		var in, out float64
		var reports []any
		for _, e := range sse.all(is("namespace", "usage", "action", "circuit", "circuitId", id)) {
			v, _ := e.e["bytesIn"].(float64)
			w, _ := e.e["bytesOut"].(float64)
			in, out = in+v, out+w
			reports = append(reports, e.e["usage"])
		}
		if in < 0.9*float64(len(data)) || in > 1.1*float64(len(data)) || out < 0.9*float64(len(data)) || out > 1.1*float64(len(data)) {
			return fmt.Errorf("%.0f bytes in and %.0f out reported, %d sent (reports %v)", in, out, len(data), reports)
		}
		return nil
	})
	usage := sse.all(is("namespace", "usage", "action", "circuit", "circuitId", id))[0].e
	if usage["identityName"] != "echo-client" || usage["serviceName"] != "echo" || usage["routerName"] != "er1" || jget(usage, "usage", "ingress.rx") == nil {
		t.Fatalf("a usage event's fields: %v", usage)
	}
	for _, o := range []*seenEvents{hook, lines} {
		if len(o.all(is("namespace", "usage", "circuitId", id))) == 0 {
			t.Fatalf("no usage of the circuit on %s", o.what)
		}
	}
	if len(sse.all(is("namespace", "usage", "action", "identity", "identityName", "echo-client"))) == 0 ||
		len(sse.all(is("namespace", "usage", "action", "service", "serviceName", "echo"))) == 0 {
		t.Fatal("no usage by identity and by service")
	}

	// No host: the terminator goes, and a dial fails for want of one.
	stopped := time.Now()
	tn.host.stop()
	waitEvent(t, "the host's terminator removed", stopped, is("namespace", "terminator", "action", "removed", "serviceName", "echo"), outlets...)
	dialed := time.Now()
	if err := echoOnce(tn.proxyAddr, []byte("nobody home")); err == nil {
		t.Fatal("a dial with no host echoed")
	}
	failed := waitEvent(t, "the dial failed: no terminator", dialed, is("namespace", "circuit", "action", "failed", "cause", "noTerminator", "identityName", "echo-client", "serviceName", "echo"), outlets...)
	if failed["reason"] == nil {
		t.Fatalf("the failure's reason: %v", failed)
	}

	// The router leaves.
	left := time.Now()
	tn.router.stop()
	waitEvent(t, "router er1 disconnected", left, is("namespace", "router", "action", "disconnected", "routerName", "er1"), outlets...)

	// The list endpoint has them too, filtered; a bad filter is a 400 naming it.
	st, m := do(t, "GET", n.mgmt(`/data-plane-events?filter=`+strings.ReplaceAll(`cause%20=%20"noTerminator"`, `"`, "%22")), token, nil)
	mustStatus(t, "list data-plane events", st, m, 200)
	l, _ := m["data"].([]any) // the tunneler dials twice before it gives up
	if len(l) == 0 || jget(l[0], "circuitId") != failed["circuitId"] {
		t.Fatalf("the failed circuits listed: %v", m["data"])
	}
	for _, e := range l {
		if jget(e, "cause") != "noTerminator" {
			t.Fatalf("the filter let through %v", e)
		}
	}
	st, m = do(t, "GET", n.mgmt(`/data-plane-events?filter=entityType%20=%20%22x%22`), token, nil)
	if st != 400 || !strings.Contains(js(m), "filter") {
		t.Fatalf("a filter of an unknown field: %d %s", st, js(m))
	}
}

// TestDataPlaneEvents_ZitiStreamEventsAndCLI: `ziti fabric stream events`
// shows a circuit made through the tunnelers as OpenZiti's controller
// would; the events file in OpenZiti's format has it; `edgectl list
// circuits` shows who, what, through where and for how long; `edgectl
// events --data-plane` lists and follows.
func TestDataPlaneEvents_ZitiStreamEventsAndCLI(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "openziti-events.json")
	n := startNode(t, nodeOpts{args: []string{"--data-plane-events-file", file, "--data-plane-events-format", "openziti"}})
	token := login(t, n, adminUser, adminPassword)
	tn := newTrafficNetWith(t, n, token, routerMetricsYAML)
	lines := tailFile(t, file)

	// ziti fabric stream events, logged in as the admin.
	home := t.TempDir()
	zitiEnv := append(os.Environ(), "HOME="+home)
	login := exec.Command(zitiBinary(t), "edge", "login", n.host(), "-u", adminUser, "-p", adminPassword, "-y")
	login.Env = zitiEnv
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("ziti edge login: %v\n%s", err, out)
	}
	stream := exec.Command(zitiBinary(t), "fabric", "stream", "events", "--circuits", "--usage", "--routers")
	stream.Env = zitiEnv
	zitiOut := &seenEvents{what: "ziti fabric stream events"}
	pipe, err := stream.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stream.Process.Kill(); _ = stream.Wait() })
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				zitiOut.add(e)
			}
		}
	}()

	// edgectl events --data-plane --follow, on circuits.
	c := newCLI(t)
	if _, errOut, code := c.run(n.password+"\n", "login", "https://"+n.host(), "-u", adminUser, "--password-stdin", "--yes"); code != 0 {
		t.Fatalf("login: %s", errOut)
	}
	follow := exec.Command(binPath, "events", "--data-plane", "--follow", "-o", "json", "--filter", `namespace = "circuit"`)
	follow.Env = append(envWithout("EDGECTL_ADMIN_PASSWORD"), "XDG_CONFIG_HOME="+c.cfgDir, "EDGECTL_PROFILE=")
	cliOut := &seenEvents{what: "edgectl events --data-plane --follow"}
	fpipe, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = follow.Process.Kill(); _ = follow.Wait() })
	go func() {
		sc := bufio.NewScanner(fpipe)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				cliOut.add(e)
			}
		}
	}()

	// Both streams up: each shows circuits made by dials repeated until
	// they do (each subscribes once it has connected).
	waitUntil(t, "ziti fabric stream events and edgectl events --follow show circuits", 60*time.Second, func() error {
		_ = echoOnce(tn.proxyAddr, []byte("warm up"))
		if len(zitiOut.all(is("namespace", "circuit", "event_type", "created"))) == 0 {
			return fmt.Errorf("ziti: %d events streamed", len(zitiOut.all(func(map[string]any) bool { return true })))
		}
		if len(cliOut.all(is("namespace", "circuit", "action", "created"))) == 0 {
			return fmt.Errorf("edgectl: %d events printed", len(cliOut.all(func(map[string]any) bool { return true })))
		}
		return nil
	})
	// A circuit held open, made now: ziti shows it, as OpenZiti's controller would.
	mark := time.Now()
	conn := tn.openStream(t)
	defer conn.Close()
	var ev map[string]any
	waitUntil(t, "ziti fabric stream events shows the circuit made through the tunnelers", 10*time.Second, func() error {
		for _, e := range zitiOut.all(is("namespace", "circuit", "event_type", "created")) {
			if ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(e.e["timestamp"])); err == nil && !ts.Before(mark) {
				ev = e.e
				return nil
			}
		}
		return fmt.Errorf("no circuit created since the stream opened")
	})
	circuitID := fmt.Sprint(ev["circuit_id"])
	if ev["service_id"] != tn.serviceID || ev["client_id"] != tn.clientID || fmt.Sprint(jget(ev, "path", "nodes")) != "["+tn.router.id+"]" || ev["event_src_id"] != dataPlaneNodeID(t, n, token) || ev["version"] != float64(2) {
		t.Fatalf("ziti's circuit event: %v", ev)
	}
	waitUntil(t, "the OpenZiti-format events file has the circuit", 10*time.Second, func() error {
		if len(lines.all(is("namespace", "circuit", "event_type", "created", "circuit_id", circuitID))) == 0 {
			return fmt.Errorf("%d lines", len(lines.all(func(map[string]any) bool { return true })))
		}
		return nil
	})
	waitUntil(t, "edgectl events --follow prints the circuit", 10*time.Second, func() error {
		if len(cliOut.all(is("namespace", "circuit", "action", "created", "circuitId", circuitID))) == 0 {
			return fmt.Errorf("%d printed", len(cliOut.all(func(map[string]any) bool { return true })))
		}
		return nil
	})
	waitUntil(t, "ziti fabric stream events shows the circuit's usage (version 3)", 30*time.Second, func() error {
		if len(zitiOut.all(is("namespace", "usage", "circuit_id", circuitID, "version", 3, "source_id", tn.router.id))) == 0 {
			return fmt.Errorf("no usage yet")
		}
		return nil
	})

	// edgectl list circuits: the identity, the service, the path by name, the age in words.
	out := c.ok("list", "circuits")
	if !strings.Contains(out, "IDENTITY") || !strings.Contains(out, circuitID) || !strings.Contains(out, "echo-client") ||
		!strings.Contains(out, "echo") || !strings.Contains(out, "er1") || !(strings.Contains(out, "second") || strings.Contains(out, "minute")) {
		t.Fatalf("edgectl list circuits:\n%s", out)
	}
	if out := c.ok("list", "circuits", "-o", "json"); !strings.Contains(out, circuitID) {
		t.Fatalf("edgectl list circuits -o json:\n%s", out)
	}
	// edgectl events --data-plane lists what the node keeps, filtered; a bad filter fails.
	if out := c.ok("events", "--data-plane", "--filter", `namespace = "circuit" and action = "created"`); !strings.Contains(out, "circuit.created") ||
		!strings.Contains(out, "echo-client → echo") || !strings.Contains(out, "via er1") {
		t.Fatalf("edgectl events --data-plane:\n%s", out)
	}
	c.fails(1, "events", "--data-plane", "--filter", "nosuchfield = 1")
}

// TestDataPlaneEvents_LinksAndRerouteInAMesh: three routers' links come up;
// cutting A-C takes it down and moves the open circuit to A→B→C, each on
// the stream within 2 s of the cut, with the paths.
func TestDataPlaneEvents_LinksAndRerouteInAMesh(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, adminPassword)
	sse := followSSE(t, n, token, `namespace = "link" or namespace = "circuit"`)
	start := time.Now()
	mn := newMeshNetOn(t, n, token)
	mn.waitLinks(t, "the three links", "a-b Connected", "a-c Connected", "b-c Connected")
	up := waitEventOf(t, "link A-C up", start, time.Minute, is("namespace", "link", "action", "up", "srcRouterId", mn.a.id, "dstRouterId", mn.c.id), sse)
	if up["linkId"] == nil || up["protocol"] == nil {
		t.Fatalf("link up: %v", up)
	}
	mn.serve(t)
	stream := mn.stream(t)
	defer stream.Close()
	mn.waitPath(t, "the circuit on A→C", "a>c")

	cut := time.Now()
	mn.acProxy.Cut()
	down := waitEvent(t, "link A-C down", cut, is("namespace", "link", "action", "down", "linkId", up["linkId"]), sse)
	if down["reason"] == nil {
		t.Fatalf("link down: %v", down)
	}
	moved := waitEvent(t, "the circuit rerouted to A→B→C", cut, is("namespace", "circuit", "action", "rerouted"), sse)
	if fmt.Sprint(moved["pathNames"]) != "[router-a router-b router-c]" || fmt.Sprint(moved["previousPath"]) != fmt.Sprintf("[%s %s]", mn.a.id, mn.c.id) ||
		moved["identityName"] != "echo-client" || moved["serviceName"] != "echo" {
		t.Fatalf("rerouted: %v", moved)
	}
	if err := echoOn(stream, "after the cut"); err != nil {
		t.Fatalf("the stream broke: %v", err)
	}
}
