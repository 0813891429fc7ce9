package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// ---- test PKI ----

type testPKI struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestPKI(tb testing.TB, name string) *testPKI {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testPKI{cert: cert, key: key, pool: pool}
}

var serial atomic.Int64

// tlsConfig issues a node certificate (SANs: localhost, 127.0.0.1) and
// returns the config a node would get from the internal PKI.
func (p *testPKI) tlsConfig(tb testing.TB, cn string) *tls.Config {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1) + 1),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	if err != nil {
		tb.Fatal(err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		RootCAs:      p.pool,
		ClientCAs:    p.pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}
}

var (
	sharedPKIOnce sync.Once
	sharedPKI     *testPKI
)

func clusterPKI(tb testing.TB) *testPKI {
	sharedPKIOnce.Do(func() { sharedPKI = newTestPKI(tb, "edgectl test cluster CA") })
	return sharedPKI
}

// ---- test FSM: a key/value map with JSON commands ----

type kvCmd struct {
	Op    string `json:"op"` // "set" or "fail"
	Key   string `json:"k,omitempty"`
	Value string `json:"v,omitempty"`
}

func setCmd(k, v string) []byte {
	b, _ := json.Marshal(kvCmd{Op: "set", Key: k, Value: v})
	return b
}

type kvFSM struct {
	mu      sync.Mutex
	data    map[string]string
	applied atomic.Uint64
	sig     chan struct{} // closed and replaced after every apply

	// Optional gate for snapshot tests: Persist signals persisting and
	// then waits for release.
	persisting chan struct{}
	release    chan struct{}
}

func newKVFSM() *kvFSM { return &kvFSM{data: map[string]string{}, sig: make(chan struct{})} }

func (f *kvFSM) Apply(l *raft.Log) any {
	var c kvCmd
	if err := json.Unmarshal(l.Data, &c); err != nil {
		return fmt.Errorf("bad command: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.advance(l.Index)
	switch c.Op {
	case "set":
		prev, ok := f.data[c.Key]
		f.data[c.Key] = c.Value
		if !ok {
			return nil
		}
		return []byte(prev)
	case "fail":
		return errors.New("kv: refused by fsm")
	}
	return fmt.Errorf("unknown op %q", c.Op)
}

// advance must hold f.mu.
func (f *kvFSM) advance(idx uint64) {
	f.applied.Store(idx)
	close(f.sig)
	f.sig = make(chan struct{})
}

func (f *kvFSM) get(k string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.data[k]
	return v, ok
}

func (f *kvFSM) AppliedIndex() uint64 { return f.applied.Load() }

func (f *kvFSM) WaitApplied(ctx context.Context, idx uint64) error {
	for {
		f.mu.Lock()
		ch := f.sig
		f.mu.Unlock()
		if f.applied.Load() >= idx {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type kvState struct {
	Applied uint64            `json:"applied"`
	Data    map[string]string `json:"data"`
}

func (f *kvFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := kvState{Applied: f.applied.Load(), Data: make(map[string]string, len(f.data))}
	for k, v := range f.data {
		st.Data[k] = v
	}
	return &kvSnapshot{st: st, f: f}, nil
}

func (f *kvFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var st kvState
	if err := json.NewDecoder(rc).Decode(&st); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data = st.Data
	f.advance(st.Applied)
	return nil
}

type kvSnapshot struct {
	st kvState
	f  *kvFSM
}

func (s *kvSnapshot) Persist(sink raft.SnapshotSink) error {
	if s.f.persisting != nil {
		close(s.f.persisting)
		<-s.f.release
	}
	if err := json.NewEncoder(sink).Encode(s.st); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *kvSnapshot) Release() {}

// ---- nodes and clusters ----

// testLogWriter sends raft's logs to t.Log until the test is over (raft
// goroutines may log after cleanup, which t.Log would turn into a panic).
type testLogWriter struct {
	mu   sync.Mutex
	tb   testing.TB
	done bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.tb.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func testLogger(tb testing.TB) hclog.Logger {
	w := &testLogWriter{tb: tb}
	tb.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	level := hclog.Warn
	if l := os.Getenv("CLUSTER_TEST_LOG"); l != "" {
		level = hclog.LevelFromString(l)
	}
	return hclog.New(&hclog.LoggerOptions{Name: tb.Name(), Output: w, Level: level})
}

type testNode struct {
	*Node
	fsm     *kvFSM
	cfg     Config
	stopped bool
}

// testConfig returns a config for a node of the shared test PKI. The raft
// timeouts are the package defaults: short enough for fast tests, generous
// enough for a loaded 2-core CI machine.
func testConfig(tb testing.TB, id string) Config {
	return Config{
		NodeID:   id,
		DataDir:  tb.TempDir(),
		BindAddr: "127.0.0.1:0",
		TLS:      clusterPKI(tb).tlsConfig(tb, id),
		FSM:      newKVFSM(),
		Logger:   testLogger(tb),
	}
}

// mustNewNode starts a node (not bootstrapped) and shuts it down at cleanup.
func mustNewNode(tb testing.TB, opts ...func(*Config)) *testNode {
	tb.Helper()
	cfg := testConfig(tb, fmt.Sprintf("node-%d", serial.Add(1)))
	for _, o := range opts {
		o(&cfg)
	}
	return mustStartNode(tb, cfg)
}

func mustStartNode(tb testing.TB, cfg Config) *testNode {
	tb.Helper()
	n, err := New(cfg)
	if err != nil {
		tb.Fatalf("New(%s): %v", cfg.NodeID, err)
	}
	tn := &testNode{Node: n, fsm: cfg.FSM.(*kvFSM), cfg: cfg}
	tb.Cleanup(func() { tn.stop(tb) })
	return tn
}

func (tn *testNode) stop(tb testing.TB) {
	if tn.stopped {
		return
	}
	tn.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tn.Shutdown(ctx); err != nil {
		tb.Errorf("shutdown %s: %v", tn.ID(), err)
	}
}

// kill stops a node abruptly, like a crash: no leadership transfer, the
// listener and every connection just disappear.
func (tn *testNode) kill() {
	tn.stopped = true
	tn.closed.Store(true)
	tn.mux.close()
	tn.raft.Shutdown().Error()
	tn.cancel()
	tn.pool.close()
	tn.trans.Close()
	tn.store.Close()
}

func mustBootstrapped(tb testing.TB, opts ...func(*Config)) *testNode {
	tb.Helper()
	n := mustNewNode(tb, opts...)
	if err := n.BootstrapSelf(); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.WaitForLeader(ctx); err != nil {
		tb.Fatal(err)
	}
	testPoll(tb, n.IsLeader, 10*time.Second)
	return n
}

type testCluster struct {
	tb    testing.TB
	nodes []*testNode
}

// mustNewCluster bootstraps the first node and has it add the others, which
// start empty, as voters.
func mustNewCluster(tb testing.TB, size int, opts ...func(*Config)) *testCluster {
	tb.Helper()
	c := &testCluster{tb: tb, nodes: []*testNode{mustBootstrapped(tb, opts...)}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 1; i < size; i++ {
		n := mustNewNode(tb, opts...)
		if n.HasState() {
			tb.Fatal("fresh node reports existing state")
		}
		if err := c.nodes[0].AddVoter(ctx, n.ID(), n.Addr()); err != nil {
			tb.Fatalf("AddVoter(%s): %v", n.ID(), err)
		}
		c.nodes = append(c.nodes, n)
	}
	// Every node must know the full membership and the leader.
	testPoll(tb, func() bool {
		for _, n := range c.nodes {
			m, err := n.Members()
			if id, _ := n.Leader(); err != nil || len(m) != size || id == "" {
				return false
			}
		}
		return true
	}, 20*time.Second)
	return c
}

func (c *testCluster) running() []*testNode {
	var out []*testNode
	for _, n := range c.nodes {
		if !n.stopped {
			out = append(out, n)
		}
	}
	return out
}

// Leader waits until one running node leads and returns it.
func (c *testCluster) Leader() *testNode {
	c.tb.Helper()
	var l *testNode
	testPoll(c.tb, func() bool {
		l = nil
		for _, n := range c.running() {
			if n.IsLeader() {
				l = n
			}
		}
		return l != nil
	}, 15*time.Second)
	return l
}

// Followers returns the running nodes other than the current leader.
func (c *testCluster) Followers() []*testNode {
	l := c.Leader()
	var out []*testNode
	for _, n := range c.running() {
		if n != l {
			out = append(out, n)
		}
	}
	return out
}

// WaitForNewLeader waits until a running node other than old leads.
func (c *testCluster) WaitForNewLeader(old *testNode) *testNode {
	c.tb.Helper()
	var l *testNode
	testPoll(c.tb, func() bool {
		for _, n := range c.running() {
			if n != old && n.IsLeader() {
				l = n
				return true
			}
		}
		return false
	}, 15*time.Second)
	return l
}

// testPoll polls cond every few milliseconds until it holds or timeout.
func testPoll(tb testing.TB, cond func() bool, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("condition not met within %s", timeout)
		}
		<-tick.C
	}
}

func ctxTimeout(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}
