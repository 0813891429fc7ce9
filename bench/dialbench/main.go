// Command dialbench measures dial setup through a real OpenZiti router and
// tunnelers, with edgectl and with OpenZiti's own controller (`ziti edge
// quickstart --no-router`) in turn, on this machine, in one run: the same
// router, tunnelers, echo server and REST calls for both.
//
// A dial is a TCP connection to `ziti tunnel proxy`, which dials the service
// through the router (the router asks the controller for a circuit), to
// `ziti tunnel host` and an echo server: the time from connect to the first
// byte echoed. It prints p50 and p99 of sequential dials and the dials per
// second of concurrent dialers, for both controllers, side by side.
//
//	go run ./bench/dialbench -edgectl bin/edgectl -ziti $(sh scripts/ziti.sh)
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/bench/benchkit"
)

var (
	bins        benchkit.Comparison
	dials       = flag.Int("dials", 300, "sequential dials for the latency figures")
	concurrency = flag.Int("concurrency", 16, "concurrent dialers for the rate figure")
	duration    = flag.Duration("duration", 10*time.Second, "how long the concurrent dialers run")
)

const password = "bench-Admin-1"

func main() {
	bins.Parse()
	results := benchkit.MeasureEach(&bins, measure)
	fmt.Printf("\n%-10s %10s %10s %10s %12s %14s %8s\n", "controller", "dials", "p50", "p99", "dials/s", "ctrl CPU/dial", "stolen")
	for _, r := range results {
		fmt.Printf("%-10s %10d %10s %10s %12.0f %14s %7.1f%%\n", r.name, r.n, r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond),
			r.rate, r.ctrlCPU.Round(time.Microsecond), r.stolen)
	}
	if len(results) == 2 {
		e, o := results[0], results[1]
		fmt.Printf("\nedgectl / openziti: p50 %.2fx, p99 %.2fx, dials/s %.2fx, controller CPU per dial %.2fx\n",
			float64(e.p50)/float64(o.p50), float64(e.p99)/float64(o.p99), e.rate/o.rate, float64(e.ctrlCPU)/float64(o.ctrlCPU))
		if e.nodeTime > 0 {
			// What no controller can go under: the rest of a dial is the
			// router's and the tunnelers'.
			fmt.Printf("edgectl's p50 without the node's own time per dial (%s): %s; half of OpenZiti's p50: %s\n",
				e.nodeTime.Round(10*time.Microsecond), (e.p50 - e.nodeTime).Round(10*time.Microsecond), (o.p50 / 2).Round(10*time.Microsecond))
		}
	}
}

type result struct {
	name     string
	n        int
	p50, p99 time.Duration
	rate     float64
	stolen   float64
	// ctrlCPU is the controller process's CPU time per dial over both
	// phases; nodeTime edgectl's own mean time per dial (0 for OpenZiti).
	ctrlCPU, nodeTime time.Duration
}

// metricsPort is edgectl's metrics listener in the current measurement.
var metricsPort int

// printControllerShare prints and returns the node's own mean time per
// dial (request to answer), from its edgectl_circuit_dial_seconds histogram.
func printControllerShare(port int) time.Duration {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var sum, count float64
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "edgectl_circuit_dial_seconds_sum ") {
			_, _ = fmt.Sscanf(line, "edgectl_circuit_dial_seconds_sum %g", &sum)
		}
		if strings.Contains(line, `op="createSession"`) && strings.HasPrefix(line, "edgectl_http_requests_total") {
			fmt.Println("edgectl:", line)
		}
		if strings.HasPrefix(line, "edgectl_circuit_dial_seconds_count ") {
			_, _ = fmt.Sscanf(line, "edgectl_circuit_dial_seconds_count %g", &count)
		}
	}
	if count == 0 {
		return 0
	}
	mean := time.Duration(sum / count * float64(time.Second))
	fmt.Printf("edgectl: the node's own time per dial (request to answer, route included): mean %s over %.0f dials\n",
		mean.Round(time.Microsecond), count)
	return mean
}

func measure(ctrl string) (result, error) {
	dir, err := os.MkdirTemp("", "dialbench-"+ctrl+"-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	var p benchkit.Procs
	defer p.Stop()
	apiPort := benchkit.MustFreePort()
	var edgectlArgs []string
	if ctrl == "edgectl" {
		metricsPort = benchkit.MustFreePort()
		edgectlArgs = []string{"--metrics-addr", benchkit.Loopback(metricsPort)}
	}
	ctrlCmd, err := bins.StartController(&p, ctrl, dir, apiPort, password, edgectlArgs...)
	if err != nil {
		return result{}, err
	}
	a, err := benchkit.AdminSession("https://"+benchkit.Loopback(apiPort), "admin", password, 120*time.Second)
	if err != nil {
		return result{}, err
	}
	fmt.Printf("%s: controller up\n", ctrl)

	echo, err := benchkit.EchoServer()
	if err != nil {
		return result{}, err
	}
	defer echo.Close()
	if err := network(a, dir, echo.Addr().(*net.TCPAddr).Port, &p); err != nil {
		return result{}, err
	}
	proxyPort := benchkit.MustFreePort()
	proxy := fmt.Sprintf("127.0.0.1:%d", proxyPort)
	if _, err := p.Start(dir, "proxy.log", bins.Ziti, "tunnel", "proxy", fmt.Sprintf("echo:%d", proxyPort), "-i", filepath.Join(dir, "client.json")); err != nil {
		return result{}, err
	}
	if err := benchkit.WaitFor("a first echo", 60*time.Second, func() error { _, err := dialOnce(proxy); return err }); err != nil {
		return result{}, err
	}
	fmt.Printf("%s: bytes flow; measuring\n", ctrl)
	for range 20 { // warm-up
		_, _ = dialOnce(proxy)
	}
	before, ctrlBefore := benchkit.ReadCPU(), benchkit.ProcCPU(ctrlCmd.Process.Pid)
	var lat []time.Duration
	for range *dials {
		d, err := dialOnce(proxy)
		if err != nil {
			return result{}, err
		}
		lat = append(lat, d)
	}
	p50, p99 := benchkit.P50P99(lat)
	var n atomic.Int64
	var errs atomic.Int64
	stopAt := time.Now().Add(*duration)
	var wg sync.WaitGroup
	for range *concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stopAt) {
				if _, err := dialOnce(proxy); err != nil {
					errs.Add(1)
					continue
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	after, ctrlAfter := benchkit.ReadCPU(), benchkit.ProcCPU(ctrlCmd.Process.Pid)
	var nodeTime time.Duration
	if ctrl == "edgectl" {
		nodeTime = printControllerShare(metricsPort)
	}
	if e := errs.Load(); e > 0 {
		fmt.Printf("%s: %d failed dials in the concurrent phase\n", ctrl, e)
	}
	return result{name: ctrl, n: len(lat), p50: p50, p99: p99,
		rate: float64(n.Load()) / duration.Seconds(), stolen: benchkit.StolenPct(before, after),
		ctrlCPU: (ctrlAfter - ctrlBefore) / time.Duration(int64(len(lat))+n.Load()), nodeTime: nodeTime}, nil
}

// network makes the router, the two identities, the echo service and its
// policies through the Management API, then enrolls and runs the router
// and `ziti tunnel host`.
func network(a *benchkit.API, dir string, echoPort int, p *benchkit.Procs) error {
	er, err := a.Create("/edge-routers", map[string]any{"name": "er1", "isTunnelerEnabled": true, "roleAttributes": []string{"public"}})
	if err != nil {
		return err
	}
	cfgID, err := a.Create("/configs", map[string]any{"name": "echo-host", "configTypeId": "NH5p4FpGR",
		"data": map[string]any{"protocol": "tcp", "address": "127.0.0.1", "port": echoPort}})
	if err != nil {
		return err
	}
	mk := func(path string, body map[string]any) error { _, err := a.Create(path, body); return err }
	steps := []struct {
		path string
		body map[string]any
	}{
		{"/services", map[string]any{"name": "echo", "roleAttributes": []string{"echo"}, "configs": []string{cfgID}, "encryptionRequired": true}},
		{"/service-policies", map[string]any{"name": "dial", "type": "Dial", "semantic": "AnyOf", "identityRoles": []string{"#clients"}, "serviceRoles": []string{"#echo"}}},
		{"/service-policies", map[string]any{"name": "bind", "type": "Bind", "semantic": "AnyOf", "identityRoles": []string{"#hosts"}, "serviceRoles": []string{"#echo"}}},
		{"/edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "identityRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}}},
		{"/service-edge-router-policies", map[string]any{"name": "all", "semantic": "AnyOf", "serviceRoles": []string{"#all"}, "edgeRouterRoles": []string{"#all"}}},
	}
	for _, s := range steps {
		if err := mk(s.path, s.body); err != nil {
			return err
		}
	}
	for name, attr := range map[string]string{"host": "hosts", "client": "clients"} {
		id, err := a.Create("/identities", map[string]any{"name": name, "type": "Device", "isAdmin": false,
			"roleAttributes": []string{attr}, "enrollment": map[string]any{"ott": true}})
		if err != nil {
			return err
		}
		jwt, err := a.Field("/identities/"+id, "enrollment", "ott", "jwt")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".jwt"), []byte(jwt), 0o600); err != nil {
			return err
		}
		if out, err := exec.Command(bins.Ziti, "edge", "enroll", filepath.Join(dir, name+".jwt"), "-o", filepath.Join(dir, name+".json")).CombinedOutput(); err != nil {
			return fmt.Errorf("enroll %s: %v: %s", name, err, out)
		}
	}
	jwt, err := a.Field("/edge-routers/"+er, "enrollmentJwt")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "er1.jwt"), []byte(jwt), 0o600); err != nil {
		return err
	}
	edge := benchkit.MustFreePort()
	config := benchkit.ZitiRouterConfig(dir, strings.TrimPrefix(a.Base, "https://"), fmt.Sprintf("127.0.0.1:%d", edge))
	if err := os.WriteFile(filepath.Join(dir, "er1.yml"), []byte(config), 0o600); err != nil {
		return err
	}
	if out, err := exec.Command(bins.Ziti, "router", "enroll", filepath.Join(dir, "er1.yml"), "--jwt", filepath.Join(dir, "er1.jwt")).CombinedOutput(); err != nil {
		return fmt.Errorf("router enroll: %v: %s", err, out)
	}
	if _, err := p.Start(dir, "router.log", bins.Ziti, "router", "run", filepath.Join(dir, "er1.yml")); err != nil {
		return err
	}
	if _, err := p.Start(dir, "host.log", bins.Ziti, "tunnel", "host", "-i", filepath.Join(dir, "host.json")); err != nil {
		return err
	}
	return benchkit.WaitFor("the host's terminator", 60*time.Second, func() error {
		out, err := a.Do(http.MethodGet, "/terminators", nil)
		if err != nil {
			return err
		}
		if l, _ := out["data"].([]any); len(l) == 0 {
			return errors.New("no terminator yet")
		}
		return nil
	})
}

// dialOnce connects through the proxy and times the first byte echoed.
func dialOnce(addr string) (time.Duration, error) { return benchkit.DialOnce(addr, 10*time.Second) }
