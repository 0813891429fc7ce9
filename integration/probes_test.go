package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// probe GETs a probe path of n's API port (no authentication).
func probeGet(t *testing.T, base, path string, c *http.Client) (int, map[string]any) {
	t.Helper()
	resp, err := c.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s%s: %v", base, path, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("GET %s%s: body: %v", base, path, err)
	}
	return resp.StatusCode, m
}

// The probes answer as described on a leader, a follower and a node that
// lost its quorum, and /controllers shows a stopped member offline within 2 s.
func TestClusterProbesAndMemberStatus(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{size: 3, proxies: true})
	l := c.leader(10 * time.Second)
	fi, ki := (l+1)%3, (l+2)%3
	base := func(i int) string { return "https://" + c.nodes[i].host() }
	hc := func(i int) *http.Client { return c.nodes[i].httpc }

	for i := range c.nodes {
		if st, m := probeGet(t, base(i), "/livez", hc(i)); st != 200 || m["status"] != "ok" {
			t.Fatalf("%s /livez: %d %v", c.nodes[i].name, st, m)
		}
		st, m := probeGet(t, base(i), "/readyz", hc(i))
		if st != 200 || m["status"] != "ok" || m["nodeId"] != c.ids[i] || m["leaderId"] != c.ids[l] {
			t.Fatalf("%s /readyz: %d %v", c.nodes[i].name, st, m)
		}
		want := 503
		if i == l {
			want = 200
		}
		if st, m := probeGet(t, base(i), "/readyz?leader=true", hc(i)); st != want {
			t.Fatalf("%s /readyz?leader=true: %d, want %d: %v", c.nodes[i].name, st, want, m)
		}
	}

	// /controllers: every member online, with its applied index and lag.
	waitUntil(t, "every member shown online", 2*time.Second, func() error {
		status, m := do(t, http.MethodGet, c.nodes[fi].mgmt("/controllers"), c.token, nil)
		if status != 200 {
			return fmt.Errorf("status %d", status)
		}
		for _, v := range m["data"].([]any) {
			ctl := v.(map[string]any)
			if ctl["isOnline"] != true || ctl["lastAppliedIndex"] == nil || ctl["lag"] == nil {
				return fmt.Errorf("controller %v", ctl)
			}
		}
		return nil
	})

	// Cut a follower off (while the third node runs, so that the other two
	// keep their quorum and refuse its elections): it loses the leader and
	// is not ready; it still lives. Then heal it.
	c.proxies[fi].Cut()
	waitUntil(t, "the cut-off follower is not ready", 15*time.Second, func() error {
		st, m := probeGet(t, base(fi), "/readyz", hc(fi))
		if st != 503 || m["status"] != "unavailable" {
			return fmt.Errorf("/readyz %d %v", st, m)
		}
		return nil
	})
	if st, _ := probeGet(t, base(fi), "/livez", hc(fi)); st != 200 {
		t.Fatalf("/livez on the cut-off node: %d", st)
	}
	c.proxies[fi].Heal()
	waitUntil(t, "the healed follower is ready again", 15*time.Second, func() error {
		if st, m := probeGet(t, base(fi), "/readyz", hc(fi)); st != 200 {
			return fmt.Errorf("/readyz %d %v", st, m)
		}
		return nil
	})

	// A stopped member is offline on every other node within 2 s.
	c.nodes[ki].kill()
	killed := time.Now()
	waitUntil(t, "the killed member shown offline", 2*time.Second, func() error {
		for _, i := range []int{l, fi} {
			status, m := do(t, http.MethodGet, c.nodes[i].mgmt("/controllers"), c.token, nil)
			if status != 200 {
				return fmt.Errorf("%s: %d", c.nodes[i].name, status)
			}
			for _, v := range m["data"].([]any) {
				ctl := v.(map[string]any)
				if ctl["id"] == c.ids[ki] && ctl["isOnline"] != false {
					return fmt.Errorf("%s still shows %s online", c.nodes[i].name, c.ids[ki])
				}
			}
		}
		return nil
	})
	t.Logf("offline on both after %s", time.Since(killed).Round(time.Millisecond))
}

// The probes are on the metrics port too, over plain HTTP.
func TestProbesOnTheMetricsPort(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	n := startNode(t, nodeOpts{args: []string{"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", port), "--enable-pprof"}})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	// --enable-pprof: the profiles are on the metrics port.
	resp, err := http.Get(base + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "heap profile") {
		t.Fatalf("/debug/pprof/heap with --enable-pprof: %d %.200s", resp.StatusCode, body)
	}
	if st, m := probeGet(t, base, "/livez", http.DefaultClient); st != 200 || m["status"] != "ok" {
		t.Fatalf("/livez: %d %v", st, m)
	}
	st, m := probeGet(t, base, "/readyz?leader=true", http.DefaultClient)
	if st != 200 || m["nodeId"] != readNodeID(t, n) {
		t.Fatalf("/readyz?leader=true: %d %v", st, m)
	}
}
