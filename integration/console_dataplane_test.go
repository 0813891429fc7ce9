package integration

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"edgectl/bench/benchkit"

	"github.com/chromedp/chromedp"
)

// TestConsoleDataPlaneViews: with a real router hosting an echo service
// for `ziti tunnel host`, a second router linked to it and a stream open
// through `ziti tunnel proxy`, the console (a new profile, a typed login)
// shows the open circuit live (identity, service, the routers of its path,
// its age, its bytes) and drops it once the stream ends; the service's page
// charts its traffic over the last hour; the topology shows both
// routers and their link in health colours with its latency, and turns a
// stopped router red; a router's page lists its links, terminators and
// circuits.
func TestConsoleDataPlaneViews(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	metricsPort := freePort(t)
	n := startNode(t, nodeOpts{args: []string{"--metrics-addr", "127.0.0.1:" + strconv.Itoa(metricsPort)}})
	tn := newTrafficNetWith(t, n, login(t, n, adminUser, adminPassword), routerMetricsYAML) // usage every second
	tok := tn.token

	// A second router with a link listener: er1 dials it.
	er2 := createZitiRouter(t, n, tok, "er2", "public")
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	er2.config = func(ctrl string) string {
		return benchkit.ZitiMeshRouterConfig(er2.dir, ctrl, er2.edgeAddr,
			[]benchkit.LinkListener{{Bind: listen, Advertise: listen, Groups: []string{"default"}}}, nil)
	}
	er2.enroll(n, tok)
	er2.start()
	waitOnline(t, n, tok, er2.id, true, 20*time.Second)
	waitUntil(t, "the link er1 → er2", 30*time.Second, func() error {
		links, err := listAll(t, n, tok, "/links")
		if err != nil {
			return err
		}
		if len(links) != 1 {
			return fmt.Errorf("%d links", len(links))
		}
		return nil
	})
	stream := tn.openStream(t)
	defer stream.Close()
	// 64 KiB through it, for its usage.
	if err := echoOn(stream, strings.Repeat("u", 64<<10)); err != nil {
		t.Fatal(err)
	}

	base := "https://" + n.host()
	ctx := newBrowser(t, t.TempDir())
	consoleLogin(t, ctx, base, n.password)

	// The live circuits, from the navigation.
	run(t, ctx, "open Circuits", chromedp.Click(`#nav a[href="#/circuits"]`, chromedp.ByQuery), chromedp.WaitVisible("#circuit-count", chromedp.ByID))
	row := waitText(t, ctx, "the open circuit", "#circuits-live tbody", "echo-client")
	for _, want := range []string{"echo", "er1"} {
		if !strings.Contains(row, want) {
			t.Fatalf("the circuit's row %q does not name %q", row, want)
		}
	}
	// Its bytes, once its router reported them.
	waitText(t, ctx, "the circuit's bytes", "#circuits-live tbody", "KiB sent")
	var age string
	run(t, ctx, "the circuit's age", chromedp.Evaluate(`(document.querySelector('#circuits-live tbody time')||{}).title||''`, &age))
	if age == "" {
		t.Fatal("the circuit's age has no exact time on hover")
	}
	screenshot(t, ctx, "circuits")

	// The topology.
	run(t, ctx, "open Topology", chromedp.Click(`#nav a[href="#/topology"]`, chromedp.ByQuery), chromedp.WaitVisible("#topology", chromedp.ByID))
	waitText(t, ctx, "the routers and their link", "#topology-summary", "2 routers (0 not connected to this node), 1 links (0 not healthy)")
	var routersUp, linksUp int
	var latency string
	run(t, ctx, "the map", chromedp.Evaluate(`document.querySelectorAll('#topology a.router.up').length`, &routersUp),
		chromedp.Evaluate(`document.querySelectorAll('#topology line.link.up').length`, &linksUp),
		chromedp.Evaluate(`(document.querySelector('#topology text.latency')||{}).textContent||''`, &latency))
	if routersUp != 2 || linksUp != 1 || !(strings.HasSuffix(latency, " ms") || latency == "not measured yet") {
		t.Fatalf("topology: %d routers up (want 2), %d links up (want 1), latency label %q", routersUp, linksUp, latency)
	}
	screenshot(t, ctx, "topology")

	// er1's page, from the map.
	run(t, ctx, "open er1 from the map", chromedp.Click(`#topology a.router[data-router="er1"] circle`, chromedp.ByQuery), chromedp.WaitVisible("#router-state", chromedp.ByID))
	waitText(t, ctx, "er1 is connected", "#router-state", "Connected to this node")
	waitText(t, ctx, "er1's link", "#router-links", "er2")
	waitText(t, ctx, "er1's terminator", "#router-terminators", "echo")
	waitText(t, ctx, "the circuit through er1", "#router-circuits", "echo-client")
	screenshot(t, ctx, "router")

	// The service's traffic over the last hour.
	run(t, ctx, "the service", chromedp.Navigate(base+"/console/#/r/services/"+tn.serviceID), chromedp.WaitVisible("#fields", chromedp.ByID))
	waitText(t, ctx, "the service's traffic", "#service-traffic-total", "KiB sent by its clients")
	var bars int
	run(t, ctx, "the traffic's bars", chromedp.Evaluate(`document.querySelectorAll('#service-traffic rect').length`, &bars))
	if bars == 0 {
		t.Fatal("the service's traffic chart has no bar")
	}
	screenshot(t, ctx, "service-traffic")
	// And the node's metrics count them by service.
	waitUntil(t, "the service's bytes in the metrics", 20*time.Second, func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		for _, dir := range []string{"in", "out"} {
			m := regexp.MustCompile(`edgectl_service_bytes_total\{direction="` + dir + `",service="echo",service_id="[^"]+"\} (\d+)`).FindSubmatch(raw)
			if m == nil {
				return fmt.Errorf("no edgectl_service_bytes_total of echo, %s", dir)
			}
			if v, _ := strconv.Atoi(string(m[1])); v < 64<<10 {
				return fmt.Errorf("edgectl_service_bytes_total of echo, %s: %d, want at least the 64 KiB sent", dir, v)
			}
		}
		return nil
	})

	// The edge router's record leads there too.
	run(t, ctx, "er1's record", chromedp.Navigate(base+"/console/#/r/edge-routers/"+tn.router.id), chromedp.WaitVisible("#router-data-plane", chromedp.ByID))

	// The stream ends: the live list drops it.
	run(t, ctx, "back to Circuits", chromedp.Click(`#nav a[href="#/circuits"]`, chromedp.ByQuery), chromedp.WaitVisible("#circuits-live tbody", chromedp.ByQuery))
	stream.Close()
	waitText(t, ctx, "the ended circuit is gone", "#circuits-box", "No circuit is open at this node.")

	// er2 stops: the map turns it red.
	er2.stop()
	run(t, ctx, "open Topology again", chromedp.Click(`#nav a[href="#/topology"]`, chromedp.ByQuery), chromedp.WaitVisible("#topology", chromedp.ByID))
	waitText(t, ctx, "er2 offline on the map", "#topology-summary", "2 routers (1 not connected to this node)")
	var er2Bad bool
	run(t, ctx, "er2 in red", chromedp.Evaluate(`!!document.querySelector('#topology a.router.bad[data-router="er2"]')`, &er2Bad))
	if !er2Bad {
		t.Fatal("the stopped router er2 is not drawn as unhealthy")
	}
}
