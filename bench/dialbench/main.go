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
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/bench/benchkit"
)

var (
	edgectlBin  = flag.String("edgectl", "bin/edgectl", "the edgectl binary")
	zitiBin     = flag.String("ziti", "", "OpenZiti's ziti v1.7.2 binary (sh scripts/ziti.sh)")
	dials       = flag.Int("dials", 300, "sequential dials for the latency figures")
	concurrency = flag.Int("concurrency", 16, "concurrent dialers for the rate figure")
	duration    = flag.Duration("duration", 10*time.Second, "how long the concurrent dialers run")
	only        = flag.String("only", "", "edgectl or openziti: measure one controller")
)

const password = "bench-Admin-1"

func main() {
	flag.Parse()
	if *zitiBin == "" {
		fail(errors.New("-ziti is required (sh scripts/ziti.sh prints its path)"))
	}
	for _, b := range []*string{edgectlBin, zitiBin} {
		abs, err := filepath.Abs(*b)
		if err != nil {
			fail(err)
		}
		*b = abs
	}
	var results []result
	for _, ctrl := range []string{"edgectl", "openziti"} {
		if *only != "" && *only != ctrl {
			continue
		}
		r, err := measure(ctrl)
		if err != nil {
			fail(fmt.Errorf("%s: %w", ctrl, err))
		}
		results = append(results, r)
	}
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

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dialbench:", err)
	os.Exit(1)
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

// procs are the processes of one measurement, stopped at its end.
type procs struct{ cmds []*exec.Cmd }

func (p *procs) start(dir, logName, bin string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	log, err := os.Create(filepath.Join(dir, logName))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.cmds = append(p.cmds, cmd)
	return cmd, nil
}

func (p *procs) stop() {
	for i := len(p.cmds) - 1; i >= 0; i-- {
		_ = p.cmds[i].Process.Kill()
		_, _ = p.cmds[i].Process.Wait()
	}
}

func freePort() int {
	port, err := benchkit.FreePort()
	if err != nil {
		fail(err)
	}
	return port
}

// api is an admin session on a controller's Management API.
type api struct {
	base, token string
	c           *http.Client
}

func (a *api) do(method, path string, body any) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+"/edge/management/v1"+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if a.token != "" {
		req.Header.Set("zt-session", a.token)
	}
	resp, err := a.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 {
		return out, fmt.Errorf("%s %s: %d %v", method, path, resp.StatusCode, out)
	}
	return out, nil
}

func (a *api) create(path string, body any) (string, error) {
	out, err := a.do(http.MethodPost, path, body)
	if err != nil {
		return "", err
	}
	return out["data"].(map[string]any)["id"].(string), nil
}

func (a *api) field(path string, keys ...string) (string, error) {
	out, err := a.do(http.MethodGet, path, nil)
	if err != nil {
		return "", err
	}
	var v any = out["data"]
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	if s == "" {
		return "", fmt.Errorf("%s has no %s", path, strings.Join(keys, "."))
	}
	return s, nil
}

// waitFor polls fn until it succeeds or the deadline passes.
func waitFor(what string, timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
	var p procs
	defer p.stop()
	apiPort := freePort()
	base := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	var ctrlCmd *exec.Cmd
	switch ctrl {
	case "edgectl":
		metricsPort = freePort()
		if ctrlCmd, err = p.start(dir, "controller.log", *edgectlBin, "run", "--data-dir", filepath.Join(dir, "data"),
			"--api-addr", fmt.Sprintf("127.0.0.1:%d", apiPort), "--cluster-addr", fmt.Sprintf("127.0.0.1:%d", freePort()),
			"--admin-password", password, "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", metricsPort)); err != nil {
			return result{}, err
		}
	default:
		if ctrlCmd, err = p.start(dir, "controller.log", *zitiBin, "edge", "quickstart", "--home", filepath.Join(dir, "qs"),
			"--ctrl-address", "127.0.0.1", "--ctrl-port", fmt.Sprint(apiPort), "--no-router", "-p", password); err != nil {
			return result{}, err
		}
	}
	a := &api{base: base, c: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}} // loopback, a fresh CA per run
	if err := waitFor("the controller's login", 120*time.Second, func() error {
		out, err := a.do(http.MethodPost, "/authenticate?method=password", map[string]any{"username": "admin", "password": password})
		if err != nil {
			return err
		}
		a.token = out["data"].(map[string]any)["token"].(string)
		return nil
	}); err != nil {
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
	proxyPort := freePort()
	proxy := fmt.Sprintf("127.0.0.1:%d", proxyPort)
	if _, err := p.start(dir, "proxy.log", *zitiBin, "tunnel", "proxy", fmt.Sprintf("echo:%d", proxyPort), "-i", filepath.Join(dir, "client.json")); err != nil {
		return result{}, err
	}
	if err := waitFor("a first echo", 60*time.Second, func() error { _, err := dialOnce(proxy); return err }); err != nil {
		return result{}, err
	}
	fmt.Printf("%s: bytes flow; measuring\n", ctrl)
	for range 20 { // warm-up
		_, _ = dialOnce(proxy)
	}
	before, ctrlBefore := cpuStat(), procCPU(ctrlCmd.Process.Pid)
	var lat []time.Duration
	for range *dials {
		d, err := dialOnce(proxy)
		if err != nil {
			return result{}, err
		}
		lat = append(lat, d)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
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
	after, ctrlAfter := cpuStat(), procCPU(ctrlCmd.Process.Pid)
	var nodeTime time.Duration
	if ctrl == "edgectl" {
		nodeTime = printControllerShare(metricsPort)
	}
	if e := errs.Load(); e > 0 {
		fmt.Printf("%s: %d failed dials in the concurrent phase\n", ctrl, e)
	}
	return result{name: ctrl, n: len(lat), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100],
		rate: float64(n.Load()) / duration.Seconds(), stolen: stolenPct(before, after),
		ctrlCPU: (ctrlAfter - ctrlBefore) / time.Duration(int64(len(lat))+n.Load()), nodeTime: nodeTime}, nil
}

// network makes the router, the two identities, the echo service and its
// policies through the Management API, then enrolls and runs the router
// and `ziti tunnel host`.
func network(a *api, dir string, echoPort int, p *procs) error {
	er, err := a.create("/edge-routers", map[string]any{"name": "er1", "isTunnelerEnabled": true, "roleAttributes": []string{"public"}})
	if err != nil {
		return err
	}
	mk := func(path string, body map[string]any) error { _, err := a.create(path, body); return err }
	for _, step := range []struct {
		path string
		body map[string]any
	}{
		{"/configs", map[string]any{"name": "echo-host", "configTypeId": "NH5p4FpGR", "data": map[string]any{"protocol": "tcp", "address": "127.0.0.1", "port": echoPort}}},
	} {
		if err := mk(step.path, step.body); err != nil {
			return err
		}
	}
	cfg, err := a.do(http.MethodGet, "/configs?filter="+strings.ReplaceAll(`name="echo-host"`, `"`, "%22"), nil)
	if err != nil {
		return err
	}
	cfgID := cfg["data"].([]any)[0].(map[string]any)["id"].(string)
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
		id, err := a.create("/identities", map[string]any{"name": name, "type": "Device", "isAdmin": false,
			"roleAttributes": []string{attr}, "enrollment": map[string]any{"ott": true}})
		if err != nil {
			return err
		}
		jwt, err := a.field("/identities/"+id, "enrollment", "ott", "jwt")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".jwt"), []byte(jwt), 0o600); err != nil {
			return err
		}
		if out, err := exec.Command(*zitiBin, "edge", "enroll", filepath.Join(dir, name+".jwt"), "-o", filepath.Join(dir, name+".json")).CombinedOutput(); err != nil {
			return fmt.Errorf("enroll %s: %v: %s", name, err, out)
		}
	}
	jwt, err := a.field("/edge-routers/"+er, "enrollmentJwt")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "er1.jwt"), []byte(jwt), 0o600); err != nil {
		return err
	}
	edge := freePort()
	config := benchkit.ZitiRouterConfig(dir, strings.TrimPrefix(a.base, "https://"), fmt.Sprintf("127.0.0.1:%d", edge))
	if err := os.WriteFile(filepath.Join(dir, "er1.yml"), []byte(config), 0o600); err != nil {
		return err
	}
	if out, err := exec.Command(*zitiBin, "router", "enroll", filepath.Join(dir, "er1.yml"), "--jwt", filepath.Join(dir, "er1.jwt")).CombinedOutput(); err != nil {
		return fmt.Errorf("router enroll: %v: %s", err, out)
	}
	if _, err := p.start(dir, "router.log", *zitiBin, "router", "run", filepath.Join(dir, "er1.yml")); err != nil {
		return err
	}
	if _, err := p.start(dir, "host.log", *zitiBin, "tunnel", "host", "-i", filepath.Join(dir, "host.json")); err != nil {
		return err
	}
	return waitFor("the host's terminator", 60*time.Second, func() error {
		out, err := a.do(http.MethodGet, "/terminators", nil)
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

// procCPU is the CPU time (user and system) process pid has used.
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces), from field 3.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	_, _ = fmt.Sscan(f[11], &utime)
	_, _ = fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// cpuStat is the total and stolen CPU ticks of /proc/stat.
func cpuStat() [2]uint64 {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return [2]uint64{}
	}
	var f [10]uint64
	line := strings.SplitN(string(raw), "\n", 2)[0]
	_, _ = fmt.Sscanf(line, "cpu %d %d %d %d %d %d %d %d %d %d", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9])
	var total uint64
	for _, v := range f[:8] {
		total += v
	}
	return [2]uint64{total, f[7]}
}

func stolenPct(a, b [2]uint64) float64 {
	if b[0] <= a[0] {
		return 0
	}
	return 100 * float64(b[1]-a[1]) / float64(b[0]-a[0])
}
