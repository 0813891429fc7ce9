package integration

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"edgectl/ctrlchan"
)

// TestRouters_AConnectionStormIsLoggedSampled: 210 control-channel
// connections (ALPN ziti-ctrl on the API port) with no client certificate
// and 90 that send no hello, from one address, write 5 WARN lines per
// reason to the node's log, not 300; the metrics count every refusal and
// every line left out.
func TestRouters_AConnectionStormIsLoggedSampled(t *testing.T) {
	t.Parallel()
	metricsPort := freePort(t)
	n := startNode(t, nodeOpts{args: []string{"--metrics-addr", "127.0.0.1:" + strconv.Itoa(metricsPort)}})
	hello := ctrlchan.NewMessage(ctrlchan.ContentHello, []byte("storm"))
	hello.Sequence = ctrlchan.HelloSequence
	knock := func(first []byte) error {
		c, err := tls.Dial("tcp", n.host(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"ziti-ctrl"}})
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Write(first); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, err = io.Copy(io.Discard, c)
		return err
	}
	start := time.Now()
	for wave := 0; wave < 15; wave++ {
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := 0; i < 20; i++ {
			first := hello.AppendFrame(nil)
			if i%3 == 2 {
				first = []byte("GET / HTTP/1.1\r\nHost: node\r\n\r\n")
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := knock(first); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("a connection of the storm: %v", err)
		}
	}
	t.Logf("300 refused connections in %s", time.Since(start).Round(time.Millisecond))

	want := map[string]string{
		`edgectl_routers_refused_total{reason="certificate"}`: "210",
		`edgectl_routers_refused_total{reason="protocol"}`:    "90",
		`edgectl_router_refusals_unlogged_total`:              "290",
	}
	waitUntil(t, "the refusals counted", 10*time.Second, func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		for series, v := range want {
			if !strings.Contains(string(raw), "\n"+series+" "+v+"\n") {
				return fmt.Errorf("want %s %s:\n%s", series, v, grepLines(string(raw), "edgectl_routers_refused_total{"))
			}
		}
		return nil
	})
	logs := n.stdout.String() + n.stderr.String()
	if a, b := strings.Count(logs, "router refused:"), strings.Count(logs, "control channel failed before it was open:"); a != 5 || b != 5 {
		t.Fatalf("%d refusal and %d failure lines in the node's log, want 5 each", a, b)
	}
}

// grepLines are the lines of s that hold sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
