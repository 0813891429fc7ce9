package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"edgectl/bench/benchkit"
)

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

func loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

// api is an admin session on a controller's Management and Fabric APIs
// (both controllers serve both on the same port).
type api struct {
	base, token string
	c           *http.Client
}

const (
	mgmt   = "/edge/management/v1"
	fabric = "/fabric/v1"
)

func (a *api) do(method, path string, body any) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	if !strings.HasPrefix(path, fabric) {
		path = mgmt + path
	}
	req, err := http.NewRequest(method, a.base+path, rd)
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

// list is the data of a list request (one page of 500).
func (a *api) list(path string) ([]any, error) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	out, err := a.do(http.MethodGet, path+sep+"limit=500", nil)
	if err != nil {
		return nil, err
	}
	l, _ := out["data"].([]any)
	return l, nil
}

// filter is a list filter for a query string.
func filter(f string) string { return "filter=" + url.QueryEscape(f) }

func (a *api) field(path string, keys ...string) (string, error) {
	out, err := a.do(http.MethodGet, path, nil)
	if err != nil {
		return "", err
	}
	s, _ := jget(out["data"], keys...).(string)
	if s == "" {
		return "", fmt.Errorf("%s has no %s", path, strings.Join(keys, "."))
	}
	return s, nil
}

// jget follows keys through nested JSON objects.
func jget(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
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
	for _, v := range f[:8] { // user nice system idle iowait irq softirq steal (guest time is in user)
		total += v
	}
	return [2]uint64{total, f[7]}
}

// stolenPct is the share of the CPU time between a and b the host gave to others.
func stolenPct(a, b [2]uint64) float64 {
	if b[0] <= a[0] {
		return 0
	}
	return 100 * float64(b[1]-a[1]) / float64(b[0]-a[0])
}
