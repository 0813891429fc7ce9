package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"edgectl/bench/benchkit"
)

const (
	mgmt   = "/edge/management/v1"
	client = "/edge/client/v1"
)

// newClient is a keep-alive HTTPS client that trusts only the CA bundle of
// the node's data dir; every concurrent client keeps its own connection.
func newClient(dataDir string, conns int) (*http.Client, error) {
	pem, err := os.ReadFile(filepath.Join(dataDir, "pki", "ca-bundle.pem"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s/pki/ca-bundle.pem holds no certificates", dataDir)
	}
	return &http.Client{
		Timeout: 2 * time.Minute,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			MaxIdleConns:        conns * 4,
			MaxIdleConnsPerHost: conns * 2,
			IdleConnTimeout:     5 * time.Minute,
		},
	}, nil
}

// do sends one request to base and reads the whole answer, so that the
// connection goes back to the pool.
func (b *bench) do(ctx context.Context, base, method, path, token string, body []byte) (int, []byte, error) {
	return b.request(ctx, base, method, path, token, body, false)
}

// send is do for measured requests: a 2xx answer is read into io.Discard
// (the load generator shares the process, and so the garbage collector,
// with the node: it should allocate little), any other answer is returned.
func (b *bench) send(ctx context.Context, base, method, path, token string, body []byte) (int, []byte, error) {
	return b.request(ctx, base, method, path, token, body, true)
}

func (b *bench) request(ctx context.Context, base, method, path, token string, body []byte, discardOK bool) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("zt-session", token)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if discardOK && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil, err
	}
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// call sends a JSON body (nil: none) to the first node and expects want.
func (b *bench) call(ctx context.Context, method, path, token string, body any, want int) ([]byte, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	st, data, err := b.do(ctx, b.base, method, path, token, raw)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if st != want {
		return nil, fmt.Errorf("%s %s: status %d, want %d: %.400s", method, path, st, want, data)
	}
	return data, nil
}

// createdID creates a record and returns its id.
func (b *bench) createdID(ctx context.Context, path string, body any) (string, error) {
	data, err := b.call(ctx, http.MethodPost, mgmt+path, b.admin, body, http.StatusCreated)
	if err != nil {
		return "", err
	}
	id := idOf(data)
	if id == "" {
		return "", fmt.Errorf("POST %s: no id in %.300s", path, data)
	}
	return id, nil
}

// idOf is data.id of an answer, "" if it has none.
func idOf(data []byte) string {
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(data, &out) != nil {
		return ""
	}
	return out.Data.ID
}

// stats is the outcome of one measured phase.
type stats struct {
	name     string
	ok, errs int64
	elapsed  time.Duration
	lat      []time.Duration // of the 2xx answers, sorted
	mu       sync.Mutex
	byKind   map[string]int64 // "409", "transport", ...
	firstErr string
	gcs      uint64  // garbage collections completed during the phase
	stolen   float64 // share of the machine's CPU time the hypervisor gave to others during the phase
	// snapshot: a node was writing a raft snapshot at the start or the end
	// of the phase, or wrote one during it (a snapshot at a million
	// identities is half a GiB and seconds of a CPU beside the requests).
	snapshot bool
	faults   uint64 // minor page faults of the process (node and load generator) during the phase
	major    uint64 // major page faults (a page read from disk: the binary's own code, evicted from the page cache)
	// concurrent: many clients for a time (rate phases), not one request
	// after the other.
	concurrent bool
}

// pageFaults is the process's count of minor and major page faults
// (/proc/self/stat), or zeros where there is none.
func pageFaults() (minor, major uint64) {
	raw, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0
	}
	// The command name (field 2) may hold spaces; fields count from after its ')'.
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 10 {
		return 0, 0
	}
	minor, _ = strconv.ParseUint(f[7], 10, 64) // minflt, field 10 of the line
	major, _ = strconv.ParseUint(f[9], 10, 64) // majflt, field 12
	return minor, major
}

// snapshotCell is the report's cell for s.snapshot.
func (s *stats) snapshotCell() string {
	if s.snapshot {
		return "**during the phase**"
	}
	return "none"
}

// snapshotMark is what s.snapshot adds to a phase's line.
func (s *stats) snapshotMark() string {
	if s.snapshot {
		return "  RAFT SNAPSHOT during the phase"
	}
	return ""
}

// snapshots sums the nodes' snapshots being written and written.
func (b *bench) snapshots() (writing int, written uint64) {
	for _, n := range b.nodes {
		st := n.Raft.Stats()
		writing += st.SnapshotsWriting
		written += st.SnapshotsWritten
	}
	return writing, written
}

// watchSnapshots starts watching the nodes' snapshots for a phase; the
// returned function records in s whether one ran during it.
func (b *bench) watchSnapshots(s *stats) func() {
	writing0, written0 := b.snapshots()
	return func() {
		writing1, written1 := b.snapshots()
		s.snapshot = writing0 > 0 || writing1 > 0 || written1 != written0
	}
}

// gcCycles is the number of completed garbage collections so far.
func gcCycles() uint64 {
	ms := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(ms)
	if ms[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return ms[0].Value.Uint64()
}

func (s *stats) fail(kind, detail string) {
	atomic.AddInt64(&s.errs, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKind == nil {
		s.byKind = map[string]int64{}
	}
	s.byKind[kind]++
	if s.firstErr == "" {
		s.firstErr = detail
	}
}

// rate is 2xx answers per second.
func (s *stats) rate() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.ok) / s.elapsed.Seconds()
}

func (s *stats) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(s.lat))))
	return s.lat[max(rank, 1)-1]
}

func (s *stats) maxLat() time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[len(s.lat)-1]
}

// errText describes the errors, "none" without.
func (s *stats) errText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.errs == 0 {
		return "none"
	}
	var parts []string
	for k, v := range s.byKind {
		parts = append(parts, fmt.Sprintf("%s: %d", k, v))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d (%s; first: %.200s)", s.errs, strings.Join(parts, ", "), s.firstErr)
}

// request is one request of a phase: worker w, its i-th request. It
// answers the status (2xx counts) and the body for the error report.
type request func(ctx context.Context, w, i int) (int, []byte, error)

func (s *stats) record(st int, body []byte, err error, d time.Duration, lat *[]time.Duration) {
	switch {
	case err != nil:
		s.fail("transport", err.Error())
	case st >= 200 && st < 300:
		atomic.AddInt64(&s.ok, 1)
		*lat = append(*lat, d)
	default:
		s.fail(fmt.Sprint(st), string(body))
	}
}

// measure starts the process's and the host's counters of phase s (and
// its profile and trace when asked for); the returned function, called
// when the phase's requests are done, fills them in and adds s to the
// phases of the report's summary.
func (b *bench) measure(s *stats) (finish func()) {
	stop := b.profileRequests(s.name)
	snaps := b.watchSnapshots(s)
	f0, m0 := pageFaults()
	g0 := gcCycles()
	cpu0 := benchkit.ReadCPU()
	return func() {
		s.gcs = gcCycles() - g0
		f1, m1 := pageFaults()
		s.faults, s.major = f1-f0, m1-m0
		s.stolen = benchkit.StolenShare(cpu0, benchkit.ReadCPU())
		snaps()
		stop()
		b.phases = append(b.phases, s)
	}
}

// sequential runs warm requests not counted, then n one after the other.
func (b *bench) sequential(ctx context.Context, name string, warm, n int, fn request) *stats {
	return b.sequentialAfter(ctx, name, warm, n, nil, fn)
}

// sequentialAfter is sequential with before (when not nil) run ahead of
// each request, warm-up ones too, and not timed.
func (b *bench) sequentialAfter(ctx context.Context, name string, warm, n int, before func(ctx context.Context), fn request) *stats {
	b.settle()
	for i := range warm {
		if before != nil {
			before(ctx)
		}
		_, _, _ = fn(ctx, 0, -1-i)
		b.turns.yield()
	}
	s := &stats{name: name}
	lat := make([]time.Duration, 0, n)
	finish := b.measure(s)
	start := time.Now()
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		if before != nil {
			before(ctx)
		}
		t0 := time.Now()
		st, body, err := fn(ctx, 0, i)
		s.record(st, body, err, time.Since(t0), &lat)
		b.turns.yield()
	}
	s.elapsed = time.Since(start)
	finish()
	slices.Sort(lat)
	s.lat = lat
	b.logStats(s)
	return s
}

// concurrent runs `clients` workers for b.cfg.warmup (not counted), then
// for b.cfg.duration, each sending requests one after the other. In a
// paired run the measured time comes in turnSlices slices, each a turn.
func (b *bench) concurrent(ctx context.Context, name string, clients int, fn request) *stats {
	b.settle()
	var seq atomic.Int64
	phase := func(d time.Duration, s *stats, lats [][]time.Duration) time.Duration {
		end := time.Now().Add(d)
		start := time.Now()
		var wg sync.WaitGroup
		for w := range clients {
			wg.Go(func() {
				for time.Now().Before(end) && ctx.Err() == nil {
					i := int(seq.Add(1))
					t0 := time.Now()
					st, body, err := fn(ctx, w, i)
					s.record(st, body, err, time.Since(t0), &lats[w])
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	if b.cfg.warmup > 0 {
		phase(b.cfg.warmup, &stats{}, make([][]time.Duration, clients))
	}
	s := &stats{name: name, concurrent: true}
	lats := make([][]time.Duration, clients)
	finish := b.measure(s)
	if b.turns == nil {
		s.elapsed = phase(b.cfg.duration, s, lats)
	} else {
		// A paired run: the phase in slices, the other size's slices in
		// between, so that a slow stretch of the host falls on both sizes.
		for k := range turnSlices {
			if k > 0 {
				b.turns.yield()
			}
			s.elapsed += phase(b.cfg.duration/turnSlices, s, lats)
		}
	}
	finish()
	for _, l := range lats {
		s.lat = append(s.lat, l...)
	}
	slices.Sort(s.lat)
	b.logStats(s)
	b.turns.yield()
	return s
}

// settle runs a full garbage collection when -gc-before is set, and returns
// the memory it freed to the OS at once (debug.FreeOSMemory): a forced
// collection shrinks the heap, and the runtime's background scavenger would
// otherwise return those pages during the phase that follows (an execution
// trace at a million identities showed it running 31 ms of a 71 ms phase).
func (b *bench) settle() {
	if b.cfg.afterSnapshots {
		t0 := time.Now()
		for deadline := t0.Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if writing, _ := b.snapshots(); writing == 0 {
				break
			}
		}
		if waited := time.Since(t0); waited > 100*time.Millisecond {
			fmt.Printf("  (waited %.1f s for a raft snapshot to end)\n", waited.Seconds())
		}
	}
	if b.cfg.gcBefore {
		debug.FreeOSMemory()
	}
}

func (b *bench) logStats(s *stats) {
	fmt.Printf("  %-58s %6d ok in %6.2fs = %7.0f/s  p50 %7s  p99 %7s  max %7s  GCs ended %d  page faults %d (major %d)  CPU stolen %2.0f%%  errors: %s%s\n", s.name, s.ok, s.elapsed.Seconds(),
		s.rate(), ms(s.pct(50)), ms(s.pct(99)), ms(s.maxLat()), s.gcs, s.faults, s.major, 100*s.stolen, s.errText(), s.snapshotMark())
}

// profile starts a CPU profile of the phase when -cpuprofile is set; the
// returned function stops it.
func (b *bench) profile(name string) func() {
	return phaseFile(b.cfg.cpuprofile, name, ".pprof", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// profileRequests is profile for a phase of timed requests, which also gets
// an execution trace when -trace is set (the fills and joins would make
// traces of gigabytes).
func (b *bench) profileRequests(name string) func() {
	stopCPU := b.profile(name)
	stopTrace := phaseFile(b.cfg.trace, name, ".trace", trace.Start, trace.Stop)
	return func() { stopCPU(); stopTrace() }
}

// phaseFile starts a recording of the phase into a file of dir named after
// it (nothing when dir is empty); the returned function stops it.
func phaseFile(dir, name, ext string, start func(io.Writer) error, stop func()) func() {
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, ext, err)
		return func() {}
	}
	file := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, name)
	f, err := os.Create(filepath.Join(dir, file+ext))
	if err != nil {
		fmt.Fprintln(os.Stderr, ext, err)
		return func() {}
	}
	if err := start(f); err != nil {
		fmt.Fprintln(os.Stderr, ext, err)
		f.Close()
		return func() {}
	}
	return func() { stop(); f.Close() }
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
