// Command loadbench measures a fresh one-node edgectl over real HTTPS:
// identity creates per second with 1 and with many concurrent clients, then
// list latency (p50, p99) with a full table of identities, plain and filtered.
//
//	go run ./bench/loadbench -bin bin/edgectl
//
// With -cluster it measures a three-node cluster instead (see cluster.go):
// creates per second next to one node, and failover times.
//
//	go run ./bench/loadbench -bin bin/edgectl -cluster -trials 7
//
// It starts the node in a temporary data dir on free loopback ports, trusts
// only the node's CA bundle, stops the node with SIGTERM at the end and
// removes the temporary dir. The figures are printed as text and as a
// markdown table for docs/performance.md.
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"edgectl/bench/benchkit"
)

const (
	mgmt        = "/edge/management/v1"
	needleCount = 10       // identities the filtered list must find
	needleMark  = "needle" // only their names contain it
)

func main() {
	bin := flag.String("bin", "bin/edgectl", "the edgectl binary to run")
	duration := flag.Duration("duration", 5*time.Second, "how long each create-rate phase runs (at most; each also stops after half of -identities)")
	identities := flag.Int("identities", 10000, "total identities in the table for the list latencies")
	clients := flag.Int("clients", 32, "concurrent clients of the concurrent phases")
	requests := flag.Int("requests", 500, "sequential requests per list latency figure")
	clusterMode := flag.Bool("cluster", false, "measure a three-node cluster: create rate next to one node, and failover time")
	trials := flag.Int("trials", 5, "failover trials of -cluster")
	flag.Parse()
	if *clusterMode {
		if *clients < 1 || *trials < 1 || *duration <= 0 {
			fmt.Fprintln(os.Stderr, "loadbench: -clients, -trials and -duration must be positive")
			os.Exit(2)
		}
		if err := runCluster(*bin, *duration, *clients, *trials); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		return
	}
	if *identities < needleCount+1 || *clients < 1 || *requests < 1 || *duration <= 0 {
		fmt.Fprintln(os.Stderr, "loadbench: -identities must be > 10, -clients, -requests and -duration positive")
		os.Exit(2)
	}
	if err := run(*bin, *duration, *identities, *clients, *requests); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func run(bin string, duration time.Duration, identities, clients, requests int) (err error) {
	if bin, err = benchkit.Binary(bin); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	n, err := startNode(ctx, bin, max(clients, 4))
	if err != nil {
		return err
	}
	defer func() {
		if serr := n.stop(); serr != nil {
			err = errors.Join(err, serr)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "---- node log (last lines) ----\n%s\n", tail(n.log.String(), 30))
		}
		os.RemoveAll(n.dir)
	}()
	fmt.Printf("node %s started in %s (data in %s)\n", n.base, n.startup.Round(time.Millisecond), n.dir)

	tok, err := n.login(ctx)
	if err != nil {
		return err
	}
	r := &report{identities: identities, clients: clients, requests: requests, duration: duration}

	// Create rate, 1 client, then many. Each phase runs for -duration or
	// until it made its share (a half) of the table, whichever comes first,
	// so that the table ends with exactly -identities for the list figures.
	budget := (identities - needleCount - 1) / 2
	r.rate1, err = createPhase(ctx, n, tok, "bench-a-", 1, duration, budget)
	if err != nil {
		return err
	}
	fmt.Printf("identity creates/s, 1 client: %.0f  (%d created in %s, %d errors%s)\n",
		r.rate1.perSec(), r.rate1.ok, r.rate1.elapsed.Round(time.Millisecond), r.rate1.errs, r.rate1.errDetail())
	r.rateN, err = createPhase(ctx, n, tok, "bench-b-", clients, duration, budget)
	if err != nil {
		return err
	}
	fmt.Printf("identity creates/s, %d clients: %.0f  (%d created in %s, %d errors%s)\n",
		clients, r.rateN.perSec(), r.rateN.ok, r.rateN.elapsed.Round(time.Millisecond), r.rateN.errs, r.rateN.errDetail())

	// Fill the table, with the needles, to the requested size.
	have, err := n.count(ctx, tok, "")
	if err != nil {
		return err
	}
	if have+needleCount > identities {
		return fmt.Errorf("the create phases made %d identities, more than -identities %d: lower -duration or raise -identities", have, identities)
	}
	for i := range needleCount {
		if st, err := n.createIdentity(ctx, tok, fmt.Sprintf("%s-%02d", needleMark, i), true); err != nil || st != http.StatusCreated {
			return fmt.Errorf("create needle identity %d: status %d, %v", i, st, err)
		}
	}
	fill := identities - have - needleCount
	fillStart := time.Now()
	fr, err := fillPhase(ctx, n, tok, "bench-f-", clients, fill)
	if err != nil {
		return err
	}
	total, err := n.count(ctx, tok, "")
	if err != nil {
		return err
	}
	fmt.Printf("filled to %d identities (%d more, %d clients) in %s: %.0f/s, %d errors%s\n",
		total, fr.ok, clients, time.Since(fillStart).Round(time.Millisecond), fr.perSec(), fr.errs, fr.errDetail())
	r.total = total
	filter := fmt.Sprintf(`name contains %q`, needleMark)
	matches, err := n.count(ctx, tok, filter)
	if err != nil {
		return err
	}
	if matches != needleCount {
		return fmt.Errorf("filter %s matches %d identities, want %d", filter, matches, needleCount)
	}

	// List latencies, sequential.
	r.plainPath = mgmt + "/identities?limit=10"
	r.filterPath = mgmt + "/identities?" + url.Values{"filter": {filter}}.Encode()
	r.filter = filter
	if r.plain, err = latency(ctx, n, tok, r.plainPath, requests, 10); err != nil {
		return err
	}
	fmt.Printf("GET /identities?limit=10 (%d identities), %d requests: p50 %s ms, p99 %s ms%s\n", total, requests, ms(r.plain.p50), ms(r.plain.p99), r.plain.client())
	if r.filtered, err = latency(ctx, n, tok, r.filterPath, requests, needleCount); err != nil {
		return err
	}
	fmt.Printf("GET /identities?filter=%s (%d of %d), %d requests: p50 %s ms, p99 %s ms%s\n", filter, needleCount, total, requests, ms(r.filtered.p50), ms(r.filtered.p99), r.filtered.client())

	r.print(os.Stdout)
	return nil
}

// node is the edgectl process under test.
type node struct {
	dir     string // temp dir holding the data dir; removed at the end
	base    string // https://127.0.0.1:PORT
	cmd     *exec.Cmd
	log     *benchkit.SyncBuffer
	done    chan struct{}
	waitErr error
	client  *http.Client
	pass    string
	startup time.Duration
}

// startNode runs the binary in a new temp dir and waits until /version
// answers over TLS verified with its CA bundle. A bind failure (another
// process took a free port first) is retried on new ports.
func startNode(ctx context.Context, bin string, conns int) (*node, error) {
	var last error
	for range 4 {
		n, err := tryStart(ctx, bin, conns)
		if err == nil {
			return n, nil
		}
		last = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, last
}

func tryStart(ctx context.Context, bin string, conns int) (*node, error) {
	dir, err := os.MkdirTemp("", "edgectl-loadbench-")
	if err != nil {
		return nil, err
	}
	apiPort, err := benchkit.FreePorts(2) // the API's and, one up, the cluster's
	if err != nil {
		return nil, err
	}
	clusterPort := apiPort + 1
	secret := make([]byte, 12)
	_, _ = rand.Read(secret)
	dataDir := filepath.Join(dir, "data")
	n := &node{dir: dir, base: fmt.Sprintf("https://127.0.0.1:%d", apiPort),
		log: &benchkit.SyncBuffer{}, done: make(chan struct{}), pass: hex.EncodeToString(secret)}
	n.cmd = exec.Command(bin, "run", "--data-dir", dataDir,
		"--api-addr", fmt.Sprintf("127.0.0.1:%d", apiPort), "--cluster-addr", fmt.Sprintf("127.0.0.1:%d", clusterPort),
		"--admin-password", n.pass, "--log-level", "warn")
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	start := time.Now()
	if err := n.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	go func() { n.waitErr = n.cmd.Wait(); close(n.done) }()
	fail := func(err error) (*node, error) {
		_ = n.cmd.Process.Kill()
		<-n.done
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w\n---- node log ----\n%s", err, tail(n.log.String(), 20))
	}
	if err := n.waitReady(ctx, dataDir, conns, start, 30*time.Second); err != nil {
		return fail(err)
	}
	return n, nil
}

// waitReady waits until the node answers /version over TLS verified with
// the CA bundle in dataDir (read once the node has written it), and records
// how long it took since start. It does not stop the node on failure.
func (n *node) waitReady(ctx context.Context, dataDir string, conns int, start time.Time, limit time.Duration) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if n.client == nil {
			if c, err := tlsClient(filepath.Join(dataDir, "pki", "ca-bundle.pem"), conns); err == nil {
				n.client = c
			}
		}
		if n.client != nil {
			if st, _, err := n.do(ctx, http.MethodGet, mgmt+"/version", "", nil); err == nil && st == http.StatusOK {
				n.startup = time.Since(start)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.done:
			return fmt.Errorf("edgectl on %s exited before it was ready: %v", dataDir, n.waitErr)
		case <-deadline.C:
			return fmt.Errorf("edgectl on %s not ready after %s", dataDir, limit)
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM and waits up to 20 s for a clean exit.
func (n *node) stop() error {
	if n.client != nil {
		n.client.CloseIdleConnections()
	}
	select {
	case <-n.done:
		return fmt.Errorf("edgectl had exited early: %v", n.waitErr)
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(20 * time.Second)
	defer t.Stop()
	select {
	case <-n.done:
		if n.waitErr != nil {
			return fmt.Errorf("edgectl exited with %v after SIGTERM", n.waitErr)
		}
		fmt.Println("node stopped cleanly (SIGTERM, exit 0)")
		return nil
	case <-t.C:
		_ = n.cmd.Process.Kill()
		<-n.done
		return errors.New("edgectl did not exit within 20s of SIGTERM; killed")
	}
}

func tlsClient(bundle string, conns int) (*http.Client, error) {
	pem, err := os.ReadFile(bundle)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no certificates", bundle)
	}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			MaxIdleConns:        conns * 2,
			MaxIdleConnsPerHost: conns * 2, // keep-alive: every client keeps its connection
			IdleConnTimeout:     time.Minute,
		},
	}, nil
}

// do sends a request and reads the whole answer (so the connection is reused).
func (n *node) do(ctx context.Context, method, path, token string, body []byte) (int, []byte, error) {
	return benchkit.Send(ctx, n.client, method, n.base+path, token, body)
}

func (n *node) login(ctx context.Context) (string, error) {
	return benchkit.Login(ctx, n.do, mgmt, "admin", n.pass)
}

func (n *node) createIdentity(ctx context.Context, tok, name string, needle bool) (int, error) {
	b := map[string]any{"name": name, "type": "Device", "isAdmin": false, "roleAttributes": []string{"bench"}}
	if needle {
		b["tags"] = map[string]any{"bench": needleMark}
	}
	raw, _ := json.Marshal(b)
	st, _, err := n.do(ctx, http.MethodPost, mgmt+"/identities", tok, raw)
	return st, err
}

// count is meta.pagination.totalCount of the identity list with filter.
func (n *node) count(ctx context.Context, tok, filter string) (int, error) {
	q := url.Values{"limit": {"1"}}
	if filter != "" {
		q.Set("filter", filter)
	}
	st, data, err := n.do(ctx, http.MethodGet, mgmt+"/identities?"+q.Encode(), tok, nil)
	if err != nil {
		return 0, err
	}
	var out struct {
		Meta struct {
			Pagination struct {
				TotalCount int `json:"totalCount"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	if st != http.StatusOK || json.Unmarshal(data, &out) != nil {
		return 0, fmt.Errorf("count identities: status %d: %.300s", st, data)
	}
	return out.Meta.Pagination.TotalCount, nil
}

// result counts the outcome of a create phase.
type result struct {
	ok, errs int64
	elapsed  time.Duration
	mu       sync.Mutex
	byKind   map[string]int64 // "409", "transport", ...
}

func (r *result) fail(kind string) {
	atomic.AddInt64(&r.errs, 1)
	r.mu.Lock()
	if r.byKind == nil {
		r.byKind = map[string]int64{}
	}
	r.byKind[kind]++
	r.mu.Unlock()
}

func (r *result) perSec() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ok) / r.elapsed.Seconds()
}

func (r *result) errDetail() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.byKind) == 0 {
		return ""
	}
	var parts []string
	for k, v := range r.byKind {
		parts = append(parts, fmt.Sprintf("%s: %d", k, v))
	}
	sort.Strings(parts)
	return ": " + strings.Join(parts, ", ")
}

func (r *result) record(st int, err error) {
	switch {
	case err != nil:
		r.fail("transport")
	case st == http.StatusCreated:
		atomic.AddInt64(&r.ok, 1)
	default:
		r.fail(fmt.Sprint(st))
	}
}

// createPhase runs `workers` clients creating identities for d, or until
// budget requests were sent.
func createPhase(ctx context.Context, n *node, tok, prefix string, workers int, d time.Duration, budget int) (*result, error) {
	r := &result{}
	var seq int64
	end := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				i := atomic.AddInt64(&seq, 1)
				if i > int64(budget) {
					return
				}
				st, err := n.createIdentity(ctx, tok, fmt.Sprintf("%s%07d", prefix, i), false)
				r.record(st, err)
			}
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	return r, ctx.Err()
}

// fillPhase creates count identities with `workers` clients.
func fillPhase(ctx context.Context, n *node, tok, prefix string, workers, count int) (*result, error) {
	r := &result{}
	var seq int64
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := atomic.AddInt64(&seq, 1)
				if i > int64(count) {
					return
				}
				st, err := n.createIdentity(ctx, tok, fmt.Sprintf("%s%07d", prefix, i), false)
				r.record(st, err)
			}
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if r.errs > 0 {
		return r, fmt.Errorf("fill: %d creates failed%s", r.errs, r.errDetail())
	}
	return r, nil
}

type report struct {
	identities, clients, requests int
	duration                      time.Duration
	total                         int
	rate1, rateN                  *result
	plain, filtered               latencies
	plainPath, filterPath, filter string
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nSummary (%s, %s/%s, %d CPUs, %s):\n", time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "  creates/s: %.0f with 1 client (%d in %s), %.0f with %d clients (%d in %s)\n",
		r.rate1.perSec(), r.rate1.ok, r.rate1.elapsed.Round(time.Millisecond), r.rateN.perSec(), r.clients, r.rateN.ok, r.rateN.elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "  list latency with %d identities, %d sequential requests each:\n", r.total, r.requests)
	fmt.Fprintf(w, "    limit=10:            p50 %s ms, p99 %s ms\n", ms(r.plain.p50), ms(r.plain.p99))
	fmt.Fprintf(w, "    filter (10 matches): p50 %s ms, p99 %s ms\n", ms(r.filtered.p50), ms(r.filtered.p99))
	if r.rate1.errs+r.rateN.errs > 0 {
		fmt.Fprintf(w, "  create errors: %d with 1 client%s; %d with %d clients%s\n", r.rate1.errs, r.rate1.errDetail(), r.rateN.errs, r.clients, r.rateN.errDetail())
	}

	fmt.Fprintf(w, "\nMarkdown (docs/performance.md):\n\n")
	fmt.Fprintf(w, "| measurement | result |\n|---|---|\n")
	fmt.Fprintf(w, "| identity creates/s, 1 client (%d in %s) | %.0f |\n", r.rate1.ok, r.rate1.elapsed.Round(10*time.Millisecond), r.rate1.perSec())
	fmt.Fprintf(w, "| identity creates/s, %d clients (%d in %s) | %.0f |\n", r.clients, r.rateN.ok, r.rateN.elapsed.Round(10*time.Millisecond), r.rateN.perSec())
	fmt.Fprintf(w, "| `GET /identities?limit=10`, %d identities, p50 / p99 | %s ms / %s ms |\n", r.total, ms(r.plain.p50), ms(r.plain.p99))
	fmt.Fprintf(w, "| `GET /identities?filter=%s` (10 of %d), p50 / p99 | %s ms / %s ms |\n",
		strings.ReplaceAll(r.filter, "|", `\|`), r.total, ms(r.filtered.p50), ms(r.filtered.p99))
	fmt.Fprintf(w, "\n%d sequential requests per latency; creates count only 201 answers (errors: %d and %d). "+
		"One node, HTTPS with keep-alive, TLS verified with the node's CA bundle; %s/%s, %d CPUs, %s.\n",
		r.requests, r.rate1.errs, r.rateN.errs, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
