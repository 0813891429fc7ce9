package integration

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAlertRulesAndDashboard: deploy/prometheus's alert rules pass
// `promtool check rules` and their unit tests (`promtool test rules`), and
// every edgectl metric the rules and deploy/grafana's dashboard name is
// exported by a running node.
func TestAlertRulesAndDashboard(t *testing.T) {
	t.Parallel()
	rules, _ := filepath.Abs("../deploy/prometheus/edgectl-rules.yml")
	dashboard, _ := filepath.Abs("../deploy/grafana/edgectl-dashboard.json")
	promtool, err := exec.LookPath("promtool")
	switch {
	case err == nil:
		for _, args := range [][]string{{"check", "rules", rules}, {"test", "rules", strings.TrimSuffix(rules, ".yml") + ".test.yml"}} {
			cmd := exec.Command(promtool, args...)
			cmd.Dir = filepath.Dir(rules)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
	case os.Getenv("CI") != "":
		t.Fatal("no promtool: install Debian's prometheus package (.ci/run does)")
	default:
		t.Log("no promtool (Debian's prometheus package): the rules are not checked with it here")
	}

	// The metrics the files name.
	named := map[string]bool{}
	for _, f := range []string{rules, dashboard} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`edgectl_[a-z_]+`).FindAllString(string(raw), -1) {
			named[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")] = true
		}
	}
	if len(named) < 10 {
		t.Fatalf("the rules and the dashboard name %d metrics", len(named))
	}

	// A node with a router enrolled and a webhook subscription, so that
	// every kind of series exists.
	metricsPort := freePort(t)
	n := startNode(t, nodeOpts{args: []string{"--metrics-addr", "127.0.0.1:" + strconv.Itoa(metricsPort)}})
	token := login(t, n, adminUser, n.password)
	st, m := do(t, "POST", n.mgmt("/event-subscriptions"), token, map[string]any{"name": "hook", "url": "https://127.0.0.1:9/hook", "secret": "a-webhook-secret-0123456789"})
	mustStatus(t, "event subscription", st, m, 201)
	var exported string
	waitUntil(t, "every metric the rules and the dashboard name", 10*time.Second, func() error {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		exported = string(raw)
		var missing []string
		for name := range named {
			if madeByTraffic[name] {
				continue
			}
			if !strings.Contains(exported, "\n"+name+" ") && !strings.Contains(exported, "\n"+name+"{") &&
				!strings.Contains(exported, "\n"+name+"_bucket{") {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return errString("not exported: " + strings.Join(missing, ", "))
		}
		return nil
	})
}

// madeByTraffic are the metrics the dashboard names whose series only
// exist once routers carried traffic (they are labelled by service):
// TestConsoleDataPlaneViews reads them from a node with real routers.
var madeByTraffic = map[string]bool{"edgectl_service_bytes_total": true}
