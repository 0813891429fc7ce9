package benchkit

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What the tools that measure edgectl beside OpenZiti's own controller, with
// real OpenZiti routers and tunnelers (bench/dialbench, bench/meshbench),
// share: their flags, their processes, the admin session on either
// controller, polling, and the CPU the host stole meanwhile.

// Comparison is the flags of such a tool: the two binaries and which
// controllers to measure.
type Comparison struct {
	// Edgectl and Ziti are the paths of the edgectl binary and of
	// OpenZiti's ziti v1.7.2 binary, absolute after Check.
	Edgectl, Ziti string
	// Only is "edgectl" or "openziti" to measure one controller.
	Only string
}

// Register defines -edgectl, -ziti and -only on fs.
func (c *Comparison) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Edgectl, "edgectl", "bin/edgectl", "the edgectl binary")
	fs.StringVar(&c.Ziti, "ziti", "", "OpenZiti's ziti v1.7.2 binary (sh scripts/ziti.sh)")
	fs.StringVar(&c.Only, "only", "", "edgectl or openziti: measure one controller")
}

// Check requires -ziti and makes both binaries' paths absolute; they must
// exist.
func (c *Comparison) Check() error {
	if c.Ziti == "" {
		return errors.New("-ziti is required (sh scripts/ziti.sh prints its path)")
	}
	for _, b := range []*string{&c.Edgectl, &c.Ziti} {
		abs, err := filepath.Abs(*b)
		if err != nil {
			return err
		}
		if _, err := os.Stat(abs); err != nil {
			return err
		}
		*b = abs
	}
	return nil
}

// Parse registers the flags on flag.CommandLine, parses the command line
// and checks the binaries; it exits through Fail if they do not pass.
func (c *Comparison) Parse() {
	c.Register(flag.CommandLine)
	flag.Parse()
	if err := c.Check(); err != nil {
		Fail(err)
	}
}

// Controllers are the controllers to measure, in order: edgectl, then
// openziti, or the one -only names.
func (c *Comparison) Controllers() []string {
	var cs []string
	for _, ctrl := range []string{"edgectl", "openziti"} {
		if c.Only == "" || c.Only == ctrl {
			cs = append(cs, ctrl)
		}
	}
	return cs
}

// MeasureEach runs measure for each of c's controllers in turn and returns
// the results in that order; it exits through Fail (naming the controller)
// at the first error.
func MeasureEach[R any](c *Comparison, measure func(ctrl string) (R, error)) []R {
	var results []R
	for _, ctrl := range c.Controllers() {
		r, err := measure(ctrl)
		if err != nil {
			Fail(fmt.Errorf("%s: %w", ctrl, err))
		}
		results = append(results, r)
	}
	return results
}

// StartController starts controller ctrl ("edgectl": `edgectl run`;
// otherwise OpenZiti's `ziti edge quickstart --no-router`) in dir, its
// APIs on 127.0.0.1:apiPort and its admin's password pass, logging to
// dir/controller.log. edgectlArgs are more arguments to `edgectl run`.
func (c *Comparison) StartController(p *Procs, ctrl, dir string, apiPort int, pass string, edgectlArgs ...string) (*exec.Cmd, error) {
	if ctrl == "edgectl" {
		cluster, err := FreePort()
		if err != nil {
			return nil, err
		}
		args := append([]string{"run", "--data-dir", filepath.Join(dir, "data"),
			"--api-addr", Loopback(apiPort), "--cluster-addr", Loopback(cluster), "--admin-password", pass}, edgectlArgs...)
		return p.Start(dir, "controller.log", c.Edgectl, args...)
	}
	return p.Start(dir, "controller.log", c.Ziti, "edge", "quickstart", "--home", filepath.Join(dir, "qs"),
		"--ctrl-address", "127.0.0.1", "--ctrl-port", fmt.Sprint(apiPort), "--no-router", "-p", pass)
}

// Loopback is 127.0.0.1:port.
func Loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

// Fail prints err after the program's name on stderr and exits with 1.
func Fail(err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
	os.Exit(1)
}

// MustFreePort is FreePort for a command: it exits through Fail if no
// port is free.
func MustFreePort() int {
	port, err := FreePort()
	if err != nil {
		Fail(err)
	}
	return port
}

// Procs are the processes of one measurement, stopped together at its end.
type Procs struct{ cmds []*exec.Cmd }

// Start starts bin with args in dir (also its HOME), its stdout and stderr
// in dir/logName.
func (p *Procs) Start(dir, logName, bin string, args ...string) (*exec.Cmd, error) {
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

// Stop kills the processes, the last started first, and waits for them.
func (p *Procs) Stop() {
	for i := len(p.cmds) - 1; i >= 0; i-- {
		_ = p.cmds[i].Process.Kill()
		_, _ = p.cmds[i].Process.Wait()
	}
}

// Paths of the Management and the Fabric APIs, which both controllers
// serve on the same port.
const (
	MgmtAPI   = "/edge/management/v1"
	FabricAPI = "/fabric/v1"
)

// API is an admin session on a controller's Management and Fabric APIs.
type API struct {
	Base  string // https://HOST:PORT
	Token string // the session, once logged in
	C     *http.Client
}

// AdminSession waits up to timeout for the controller at base
// (https://HOST:PORT, on loopback: its certificate is not checked, a fresh
// CA per run) to let user log in with pass, and returns the session.
func AdminSession(base, user, pass string, timeout time.Duration) (*API, error) {
	// The benches call it from many goroutines at once: without room for
	// that many idle connections (net/http keeps 2 per host), most
	// requests would pay a TLS handshake of their own.
	a := &API{Base: base, C: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 128}}}
	err := WaitFor("the controller's login", timeout, func() error {
		out, err := a.Do(http.MethodPost, "/authenticate?method=password", map[string]any{"username": user, "password": pass})
		if err != nil {
			return err
		}
		if a.Token, _ = JGet(out, "data", "token").(string); a.Token == "" {
			return fmt.Errorf("login: no token in %v", out)
		}
		return nil
	})
	return a, err
}

// Do sends body (JSON, or none if nil) to path, below the Management API
// unless path starts with FabricAPI, and returns the decoded answer; an
// error with the answer if its status is not 2xx.
func (a *API) Do(method, path string, body any) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	if !strings.HasPrefix(path, FabricAPI) {
		path = MgmtAPI + path
	}
	req, err := http.NewRequest(method, a.Base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if a.Token != "" {
		req.Header.Set("zt-session", a.Token)
	}
	resp, err := a.C.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	_, _ = io.Copy(io.Discard, resp.Body) // read to the end: else the connection is not reused
	if resp.StatusCode >= 300 {
		return out, fmt.Errorf("%s %s: %d %v", method, path, resp.StatusCode, out)
	}
	return out, nil
}

// Create posts body to path and returns the new entity's id.
func (a *API) Create(path string, body any) (string, error) {
	out, err := a.Do(http.MethodPost, path, body)
	if err != nil {
		return "", err
	}
	id, _ := JGet(out, "data", "id").(string)
	if id == "" {
		return "", fmt.Errorf("POST %s: no id in %v", path, out)
	}
	return id, nil
}

// List is the data of a list request (one page of 500).
func (a *API) List(path string) ([]any, error) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	out, err := a.Do(http.MethodGet, path+sep+"limit=500", nil)
	if err != nil {
		return nil, err
	}
	l, _ := out["data"].([]any)
	return l, nil
}

// Field is the string at keys in the data of GET path; an error if there
// is none.
func (a *API) Field(path string, keys ...string) (string, error) {
	out, err := a.Do(http.MethodGet, path, nil)
	if err != nil {
		return "", err
	}
	s, _ := JGet(out["data"], keys...).(string)
	if s == "" {
		return "", fmt.Errorf("%s has no %s", path, strings.Join(keys, "."))
	}
	return s, nil
}

// Filter is a list filter for a query string.
func Filter(f string) string { return "filter=" + url.QueryEscape(f) }

// JGet follows keys through nested JSON objects (nil where one is missing).
func JGet(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// WaitFor polls fn every 50 ms until it succeeds or timeout passes (then
// the error names what it waited for and wraps fn's last error).
func WaitFor(what string, timeout time.Duration, fn func() error) error {
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

// CPUTicks are the machine's total and stolen CPU time at one moment
// (the "cpu" line of /proc/stat, in clock ticks; zero where there is no
// /proc/stat). On a shared virtual machine the steal share tells a slow
// run from a slow program.
type CPUTicks struct{ Total, Stolen uint64 }

// ReadCPU reads the CPU ticks of /proc/stat.
func ReadCPU() CPUTicks {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTicks{}
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return CPUTicks{}
	}
	var t CPUTicks
	for i, f := range fields[1:] {
		n, _ := strconv.ParseUint(f, 10, 64)
		if i < 8 { // user nice system idle iowait irq softirq steal (guest time is in user)
			t.Total += n
		}
		if i == 7 {
			t.Stolen = n
		}
	}
	return t
}

// StolenShare is the share (0 to 1) of the CPU time between a and b (a
// read before b) that the host gave to others.
func StolenShare(a, b CPUTicks) float64 {
	if b.Total <= a.Total {
		return 0
	}
	return float64(b.Stolen-a.Stolen) / float64(b.Total-a.Total)
}

// StolenPct is StolenShare in percent.
func StolenPct(a, b CPUTicks) float64 { return 100 * StolenShare(a, b) }

// P50P99 sorts lat (not empty) and returns its elements at the 50th and
// the 99th percent of its length (index n/2 and n*99/100).
func P50P99(lat []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

// ProcCPU is the user and system CPU time process pid has used so far
// (from /proc/pid/stat; 0 where it cannot be read).
func ProcCPU(pid int) time.Duration {
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
