package dataplane

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"

	"github.com/hashicorp/go-hclog"
)

// syncBuffer is a log output tests read while the Manager writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// count is the number of log lines holding s.
func (b *syncBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// withLog sends the Manager's log to out, every level.
func withLog(out io.Writer) netOption {
	return func(c *Config) {
		c.Log = hclog.New(&hclog.LoggerOptions{Output: out, Level: hclog.Trace})
		c.RefusalLogInterval = time.Hour // the test ends the interval itself
	}
}

// selfSignedTLS is a server certificate no router trusts, for a control
// channel's TLS in process.
func selfSignedTLS(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"node"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// knock opens one control-channel connection to m over TLS without a
// client certificate, writes first (a hello, or anything), reads what the
// node answers until it closes, and returns once ServeTLS has returned.
func knock(t *testing.T, m *Manager, cert tls.Certificate, first []byte) {
	a, b := net.Pipe()
	srv := tls.Server(a, &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert})
	cli := tls.Client(b, &tls.Config{InsecureSkipVerify: true, ServerName: "node"})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Handshake(); err != nil {
			_ = srv.Close()
			return
		}
		m.ServeTLS(srv)
		_ = srv.Close()
	}()
	if err := cli.Handshake(); err != nil {
		t.Errorf("handshake: %v", err)
	} else {
		_, _ = cli.Write(first)
		_ = cli.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.Copy(io.Discard, cli)
	}
	_ = cli.Close()
	<-done
}

// TestRefusals_AStormIsLoggedSampledAndCountedInFull: 200 connections
// with no certificate and 100 that send no hello, all from one source,
// write 5 WARN lines per reason, then one summary line per reason when the
// interval ends; the metrics count every refusal and every line left out.
func TestRefusals_AStormIsLoggedSampledAndCountedInFull(t *testing.T) {
	var out syncBuffer
	n := newTestNet(t, withLog(&out))
	cert := selfSignedTLS(t)
	hello := ctrlchan.NewMessage(ctrlchan.ContentHello, []byte("storm"))
	hello.Sequence = ctrlchan.HelloSequence
	var wg sync.WaitGroup
	for i := 0; i < 300; i++ {
		first := hello.AppendFrame(nil)
		if i%3 == 2 {
			first = []byte("GET / HTTP/1.1\r\nHost: node\r\n\r\n")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			knock(t, n.m, cert, first)
		}()
		if i%20 == 19 {
			wg.Wait() // waves of 20, as a storm from one client comes
		}
	}
	wg.Wait()

	if got := counterValue(t, n.m.metrics.refused, "reason", reasonCertificate); got != 200 {
		t.Errorf("refused (certificate) = %v, want 200", got)
	}
	if got := counterValue(t, n.m.metrics.refused, "reason", reasonProtocol); got != 100 {
		t.Errorf("refused (protocol) = %v, want 100", got)
	}
	if got := counterValue(t, n.m.metrics.refusalsUnlogged); got != 290 {
		t.Errorf("unlogged = %v, want 290", got)
	}
	if a, b := out.count("router refused:"), out.count("control channel failed before it was open:"); a != sampledFirst || b != sampledFirst {
		t.Fatalf("%d refusal and %d failure lines logged, want %d each:\n%s", a, b, sampledFirst, out.String())
	}

	// The interval ends: one summary line per reason and source.
	n.m.sampler.flush(time.Minute)
	if got := out.count("control-channel refusals not logged:"); got != 2 {
		t.Fatalf("%d summary lines, want 2:\n%s", got, out.String())
	}
	for _, want := range []string{"reason=certificate source=pipe suppressed=195 total=200", "reason=protocol source=pipe suppressed=95 total=100"} {
		if out.count(want) != 1 {
			t.Errorf("no summary line %q:\n%s", want, out.String())
		}
	}
	// A new interval logs the first refusals again.
	knock(t, n.m, cert, hello.AppendFrame(nil))
	if got := out.count("router refused:"); got != sampledFirst+1 {
		t.Errorf("%d refusal lines after the interval ended, want %d", got, sampledFirst+1)
	}
}

// TestRefusals_ManySourcesShareOneKeyPastTheBound: the sampler holds at
// most maxSampledKeys sources an interval; the others share one.
func TestRefusals_ManySourcesShareOneKeyPastTheBound(t *testing.T) {
	var out syncBuffer
	unlogged := 0
	s := newLogSampler(hclog.New(&hclog.LoggerOptions{Output: &out}), func() { unlogged++ })
	for i := 0; i < maxSampledKeys+100; i++ {
		s.warn("certificate", net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).String(), "router refused")
	}
	s.mu.Lock()
	keys := len(s.seen)
	s.mu.Unlock()
	if keys != maxSampledKeys+1 {
		t.Fatalf("%d keys, want %d", keys, maxSampledKeys+1)
	}
	if got := out.count("router refused"); got != maxSampledKeys+sampledFirst || unlogged != 100-sampledFirst {
		t.Fatalf("%d lines and %d unlogged", got, unlogged)
	}
}

// TestRefusals_ARoutersRefusedRequestsAreLoggedSampled: 50 dials refused
// (no terminator) and 50 terminators refused (an unknown API session) of
// one router write 5 lines each; the summary says how many were left out.
func TestRefusals_ARoutersRefusedRequestsAreLoggedSampled(t *testing.T) {
	var out syncBuffer
	n := newTestNet(t, withLog(&out))
	a := n.addRouter("A")
	for i := 0; i < 50; i++ {
		refused(t, n.dial("A"))
		if res, _ := createTerminator(t, a, "t", "garbage", "nope", 1); res == wire.TerminatorCreated {
			t.Fatal("a terminator was made")
		}
	}
	if d, c := out.count("dial refused:"), out.count("terminator refused:"); d != sampledFirst || c != sampledFirst {
		t.Fatalf("%d dial and %d terminator refusal lines, want %d each", d, c, sampledFirst)
	}
	n.m.sampler.flush(time.Minute)
	for _, want := range []string{"reason=dial source=A suppressed=45", fmt.Sprintf("reason=create_terminator/%d source=A suppressed=45", wire.TerminatorInvalidSession)} {
		if out.count(want) != 1 {
			t.Errorf("no summary line %q:\n%s", want, out.String())
		}
	}
}

// A storm of connections that fail their TLS handshake on the API port
// writes a few lines, not one each, and counts every one; the server's
// other lines still reach the log.
func TestHTTPErrorLog_HandshakeFailuresAreSampledAndCounted(t *testing.T) {
	out := &syncBuffer{}
	m := New(Config{Store: store.New(), Log: hclog.New(&hclog.LoggerOptions{Output: out, Level: hclog.Trace})})
	errLog := m.HTTPErrorLog(hclog.New(&hclog.LoggerOptions{Output: out, Level: hclog.Trace}))
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = errLog
	srv.StartTLS()
	defer srv.Close()

	const storm = 30
	for i := 0; i < storm; i++ {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")) // plain HTTP to a TLS port
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for counterValue(t, m.metrics.handshakeFailures) < storm {
		if time.Now().After(deadline) {
			t.Fatalf("%v handshake failures counted, want %d; the log:\n%s", counterValue(t, m.metrics.handshakeFailures), storm, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := out.count("TLS handshake failed"); got != sampledFirst {
		t.Fatalf("%d handshake failures logged, want the first %d; the log:\n%s", got, sampledFirst, out)
	}
	if got := out.count("http: TLS handshake error"); got != 0 {
		t.Fatalf("net/http's own line logged %d times", got)
	}
	errLog.Print("http: Accept error: something else")
	if out.count("Accept error: something else") != 1 {
		t.Fatalf("the server's other lines do not reach the log:\n%s", out)
	}
}
