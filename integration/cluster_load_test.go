package integration

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A three-node cluster under write load loses its leader (SIGKILL), then the
// whole cluster is stopped and started again.

// writeOutcome is what a client can know about a write it sent.
type writeOutcome int

const (
	writeApplied    writeOutcome = iota // 2xx
	writeNotApplied                     // never sent, or refused before it was proposed
	writeMaybe                          // 503 OUTCOME_UNKNOWN, or the connection broke after sending
)

// loadWrite is one identity create of the load test.
type loadWrite struct {
	name    string
	outcome writeOutcome
	detail  string
	status  int // the answer's HTTP status, 0 when none came (the connection failed)
}

func TestClusterLeaderKilledUnderLoadLosesNoAcknowledgedWrite(t *testing.T) {
	const (
		writers = 32
		// The leader is killed a quarter in and restarted half way: 12 s
		// make about 30,000 writes on two CPUs, of which a few thousand
		// while there is no leader and while the old one catches up.
		duration = 12 * time.Second
	)
	c := startCluster(t, clusterOpts{size: 3})
	hosts := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		hosts[i] = n.host()
	}
	client, err := newTLSClient(filepath.Join(c.nodes[0].dataDir, "pki", "ca-bundle.pem"), writers)
	if err != nil {
		t.Fatal(err)
	}
	client.Timeout = 20 * time.Second // longer than a write's 5 s wait for a leader

	stop := make(chan struct{})
	results := make([][]loadWrite, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			u := fmt.Sprintf("https://%s%s/identities", hosts[w%len(hosts)], mgmtPrefix)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("load-w%02d-%06d", w, i)
				st, m, err := postJSON(client, u, c.token, map[string]any{"name": name, "type": "Device", "isAdmin": false})
				lw := classifyWrite(name, st, m, err)
				results[w] = append(results[w], lw)
				if lw.outcome != writeApplied {
					time.Sleep(20 * time.Millisecond) // a down node refuses at once: do not spin
				}
			}
		})
	}

	start := time.Now()
	at := func(d time.Duration) <-chan time.Time { return time.After(time.Until(start.Add(d))) }
	<-at(duration / 4)
	old := c.leader(10 * time.Second)
	c.nodes[old].kill()
	killed := time.Now()
	nl := c.leader(15 * time.Second)
	t.Logf("leader %s SIGKILLed at %s; %s leads %s later", c.ids[old], killed.Sub(start).Round(time.Millisecond),
		c.ids[nl], time.Since(killed).Round(time.Millisecond))
	<-at(duration / 2)
	c.restart(old)
	t.Logf("%s restarted and serving at %s", c.ids[old], time.Since(start).Round(time.Millisecond))
	<-at(duration)
	close(stop)
	wg.Wait()

	var all []loadWrite
	count := map[writeOutcome]int{}
	for _, rs := range results {
		all = append(all, rs...)
		for _, r := range rs {
			count[r.outcome]++
		}
	}
	t.Logf("%d writes in %s: %d applied, %d not applied, %d unknown outcome", len(all), duration,
		count[writeApplied], count[writeNotApplied], count[writeMaybe])
	if count[writeApplied] < 100 {
		t.Fatalf("only %d writes succeeded: the test proves nothing", count[writeApplied])
	}

	phase := time.Now()
	lists := c.convergedIdentities(30 * time.Second)
	checkWrites(t, all, lists[0])
	t.Logf("converged and compared %d identities on 3 nodes in %s", len(lists[0]), time.Since(phase).Round(time.Millisecond))

	// The whole cluster stopped and started again keeps everything.
	phase = time.Now()
	for _, n := range c.nodes {
		n.stop()
	}
	t.Logf("SIGTERM to all three: stopped in %s", time.Since(phase).Round(time.Millisecond))
	phase = time.Now()
	c.restartAll()
	c.waitMembers(c.ids, 30*time.Second)
	t.Logf("all three restarted and serving in %s", time.Since(phase).Round(time.Millisecond))
	for _, n := range c.nodes {
		got, err := listAll(t, n, c.token, "/identities")
		if err != nil {
			t.Fatal(err)
		}
		if d := sameLists(lists[0], got); d != "" {
			t.Errorf("%s after the whole cluster restarted: %s", n.name, d)
		}
	}
	createIdentity(t, c.nodes[2], c.token, map[string]any{"name": "after-full-restart", "type": "User", "isAdmin": false})
}

// postJSON sends one POST with the given client; it does not fail the test.
func postJSON(client *http.Client, u, token string, body any) (int, map[string]any, error) {
	return doWith(client, http.MethodPost, u, token, body)
}

// classifyWrite sorts a create's answer into what the client knows about it.
func classifyWrite(name string, status int, m map[string]any, err error) loadWrite {
	lw := loadWrite{name: name, status: status}
	msg, _ := jget(m, "error", "message").(string)
	switch {
	case err != nil && (errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "no running node")):
		lw.outcome, lw.detail = writeNotApplied, "connection refused"
	case err != nil:
		lw.outcome, lw.detail = writeMaybe, err.Error()
	case status == http.StatusCreated:
		lw.outcome = writeApplied
	case status == http.StatusServiceUnavailable && jget(m, "error", "code") == "CLUSTER_UNAVAILABLE":
		lw.outcome, lw.detail = writeNotApplied, msg
	case status == http.StatusServiceUnavailable && jget(m, "error", "code") == "OUTCOME_UNKNOWN":
		lw.outcome, lw.detail = writeMaybe, msg
	default:
		// Anything else (409, 500...) is wrong for a unique, valid identity; checkWrites reports it.
		lw.outcome, lw.detail = writeNotApplied, fmt.Sprintf("unexpected %d %s", status, js(m))
	}
	return lw
}

// checkWrites checks every write against the final identity list.
func checkWrites(t *testing.T, writes []loadWrite, final []any) {
	t.Helper()
	seen := map[string]int{}
	for _, name := range names(final) {
		seen[name]++
	}
	maybePresent, bad := 0, 0
	for _, w := range writes {
		if strings.HasPrefix(w.detail, "unexpected") {
			t.Errorf("write %s: %s", w.name, w.detail)
			continue
		}
		n := seen[w.name]
		switch {
		case n > 1:
			t.Errorf("write %s (%v: %s) appears %d times", w.name, w.outcome, w.detail, n)
			bad++
		case w.outcome == writeApplied && n == 0:
			t.Errorf("write %s answered 201 but is missing", w.name)
			bad++
		case w.outcome == writeNotApplied && n == 1:
			t.Errorf("write %s was refused (%s) but is present", w.name, w.detail)
			bad++
		case w.outcome == writeMaybe && n == 1:
			maybePresent++
		}
		if bad > 20 {
			t.Fatal("too many bad writes; stopping here")
		}
	}
	t.Logf("of the writes with an unknown outcome, %d were applied", maybePresent)
}

// convergedIdentities waits until every node has the same number of
// identities, then reads the full lists and checks they are identical.
func (c *testCluster) convergedIdentities(timeout time.Duration) [][]any {
	c.t.Helper()
	waitUntil(c.t, "every node has the same identity count", timeout, func() error {
		var counts []int
		for _, n := range c.nodes {
			status, m, err := doErr(http.MethodGet, n.mgmt("/identities?limit=1"), c.token, nil)
			if err != nil || status != http.StatusOK {
				return fmt.Errorf("%s: %d %v", n.name, status, err)
			}
			counts = append(counts, int(jget(m, "meta", "pagination", "totalCount").(float64)))
		}
		for _, n := range counts[1:] {
			if n != counts[0] {
				return fmt.Errorf("counts %v", counts)
			}
		}
		return nil
	})
	lists := make([][]any, len(c.nodes))
	for i, n := range c.nodes {
		var err error
		if lists[i], err = listAll(c.t, n, c.token, "/identities"); err != nil {
			c.t.Fatal(err)
		}
		if i > 0 {
			if d := sameLists(lists[0], lists[i]); d != "" {
				c.t.Errorf("identities on %s and %s differ: %s", c.nodes[0].name, n.name, d)
			}
		}
	}
	return lists
}
