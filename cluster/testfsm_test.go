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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// Test fixtures: a throwaway PKI (CA + node certificates) and a key/value FSM
// implementing the package's FSM interface with snapshots.

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

	// Optional gate for raft's delivery: Apply waits until it is closed,
	// as on a follower whose raft tells it of commits late.
	delivery chan struct{}

	onApplied func([]*raft.Log, []any) // OnApplied
}

// OnApplied sets what gets each applied entry and its result before the
// applied index moves past it, as fsm.FSM.OnApplied.
func (f *kvFSM) OnApplied(fn func([]*raft.Log, []any)) {
	f.mu.Lock()
	f.onApplied = fn
	f.mu.Unlock()
}

func newKVFSM() *kvFSM { return &kvFSM{data: map[string]string{}, sig: make(chan struct{})} }

func (f *kvFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	if gate := f.delivery; gate != nil {
		f.mu.Unlock()
		<-gate
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	if l.Index <= f.applied.Load() {
		return nil // applied ahead of raft (ApplyCommitted)
	}
	return f.applyLocked(l)
}

// ApplyCommitted applies the entries up to last ahead of raft, as
// fsm.FSM.ApplyCommitted does.
func (f *kvFSM) ApplyCommitted(last uint64, read func(from, to uint64) ([]*raft.Log, error)) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	entries, ok, err := EntriesAhead(f.applied.Load(), last, read)
	if !ok {
		return false, err
	}
	for _, l := range entries {
		if l.Type == raft.LogCommand {
			f.applyLocked(l)
		}
	}
	f.advance(last)
	return true, nil
}

func (f *kvFSM) AppliedSignal() (uint64, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied.Load(), f.sig
}

// applyLocked must hold f.mu.
func (f *kvFSM) applyLocked(l *raft.Log) any {
	res := f.result(l)
	if f.onApplied != nil {
		f.onApplied([]*raft.Log{l}, []any{res})
	}
	f.advance(l.Index)
	return res
}

// result applies l to the map and returns its result; f.mu is held.
func (f *kvFSM) result(l *raft.Log) any {
	var c kvCmd
	if err := json.Unmarshal(l.Data, &c); err != nil {
		return fmt.Errorf("bad command: %w", err)
	}
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

// The test FSM applies ahead and notes results as fsm.FSM does, so every
// forwarding test of the package goes through those paths.
var (
	_ CommittedApplier = (*kvFSM)(nil)
	_ ResultNoter      = (*kvFSM)(nil)
)
