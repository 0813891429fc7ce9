// Package benchkit holds what the benchmarks (bench/) and the integration
// tests share: free ports, a node's log buffer, the binary check and the
// admin login, the `ziti router` configuration they all write, a TCP proxy
// that can cut a link and an echo server (net.go), and what the tools that
// measure edgectl beside OpenZiti's controller share (compare.go). It
// starts nothing by itself.
package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago,
// never the same twice in one process. It is taken below the kernel's
// ephemeral range (ip_local_port_range), so that no outgoing connection can
// take it as its local port while the node that listens on it is down for a
// restart (a restart binds the same port again).
func FreePort() (int, error) { return FreePorts(1) }

// FreePorts is the first of n consecutive ports as FreePort gives them (for
// programs that number their ports from one base).
func FreePorts(n int) (int, error) {
	lo, hi := portRange()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		base := lo + rand.IntN(hi-lo-n)
		if !freeRun(base, n) {
			continue
		}
		for p := base; p < base+n; p++ {
			portsGiven[p] = true
		}
		return base, nil
	}
	return 0, errors.New("benchkit: no free port below the ephemeral range")
}

// freeRun reports whether ports base..base+n-1 were never given and can be
// bound now.
func freeRun(base, n int) bool {
	for p := base; p < base+n; p++ {
		if portsGiven[p] {
			return false
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return false
		}
		ln.Close()
	}
	return true
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// portRange is where FreePort picks: from 10000 to the start of the
// kernel's ephemeral ports (32768 when it cannot be read).
func portRange() (lo, hi int) {
	hi = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var from, to int
		if n, _ := fmt.Sscan(string(b), &from, &to); n == 2 && from > 11000 {
			hi = from
		}
	}
	return 10000, hi
}

// SyncBuffer is a bytes.Buffer that a node's stdout and stderr may write
// to at the same time as a reader looks at it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Binary returns the absolute path of the edgectl binary bin, which must exist.
func Binary(bin string) (string, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("-bin: %w (build it first: go build -o bin/edgectl ./cmd/edgectl)", err)
	}
	return abs, nil
}

// Requester sends one request and returns the status and body.
type Requester func(ctx context.Context, method, path, token string, body []byte) (int, []byte, error)

// Send sends body (none if nil) as JSON with method to url through client,
// with the API session token (if any) in the svc-session header, and
// reads the whole answer (so that the connection is reused).
func Send(ctx context.Context, client *http.Client, method, url, token string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("svc-session", token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// Login authenticates user with a password at apiPrefix (the Management or
// the Client API) through do and returns the API session token.
func Login(ctx context.Context, do Requester, apiPrefix, user, pass string) (string, error) {
	raw, _ := json.Marshal(map[string]string{"username": user, "password": pass})
	st, data, err := do(ctx, http.MethodPost, apiPrefix+"/authenticate?method=password", "", raw)
	if err != nil {
		return "", err
	}
	tok := TokenOf(data)
	if st != http.StatusOK || tok == "" {
		return "", fmt.Errorf("login %s: status %d: %.300s", user, st, data)
	}
	return tok, nil
}

// TokenOf is the token of an answer of the form {"data": {"token": …}}
// (an API session, a service session, a join token); "" when it has none.
func TokenOf(answer []byte) string {
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	_ = json.Unmarshal(answer, &out)
	return out.Data.Token
}

// ZitiRouterConfig is the configuration of an edge router for `ziti router
// enroll` and `ziti router run`: its identity files in dir (written by the
// enrollment), the controller at ctrl (HOST:PORT of a node's API) and its
// edge listener at edge (HOST:PORT), advertised as is. It dials links to
// the routers whose listeners are in the default group, and listens for
// none.
func ZitiRouterConfig(dir, ctrl, edge string) string {
	return ZitiMeshRouterConfig(dir, ctrl, edge, nil, []string{"default"})
}

// LinkListener is a router's link listener: where it binds (HOST:PORT),
// where its peers dial it (HOST:PORT, a proxy's for example), and the
// groups of the dialers that may dial it.
type LinkListener struct {
	Bind, Advertise string
	Groups          []string
}

// ZitiMeshRouterConfig is ZitiRouterConfig with link listeners and a link
// dialer for the given groups (none: it dials no link).
func ZitiMeshRouterConfig(dir, ctrl, edge string, listeners []LinkListener, dialGroups []string) string {
	var link strings.Builder
	if len(listeners) > 0 || len(dialGroups) > 0 {
		link.WriteString("link:\n")
	}
	if len(listeners) > 0 {
		link.WriteString("  listeners:\n")
		for _, l := range listeners {
			fmt.Fprintf(&link, "    - binding: transport\n      bind: tls:%s\n      advertise: tls:%s\n      groups: [%s]\n",
				l.Bind, l.Advertise, strings.Join(l.Groups, ", "))
		}
	}
	if len(dialGroups) > 0 {
		fmt.Fprintf(&link, "  dialers:\n    - binding: transport\n      groups: [%s]\n", strings.Join(dialGroups, ", "))
	}
	return fmt.Sprintf(`v: 3
identity:
  cert: %[1]s/client.cert
  server_cert: %[1]s/server.cert
  key: %[1]s/key.pem
  ca: %[1]s/ca.pem
ctrl:
  endpoint: tls:%[2]s
%[4]slisteners:
  - binding: edge
    address: tls:%[3]s
    options:
      advertise: %[3]s
edge:
  csr:
    country: US
    province: NC
    locality: Charlotte
    organization: edgectl
    organizationalUnit: test
    sans:
      dns: [localhost]
      ip: ["127.0.0.1"]
`, dir, ctrl, edge, link.String())
}
