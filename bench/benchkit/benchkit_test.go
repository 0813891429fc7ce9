package benchkit

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestStolenShare(t *testing.T) {
	a, b := CPUTicks{Total: 1000, Stolen: 10}, CPUTicks{Total: 1200, Stolen: 30}
	if got := StolenShare(a, b); got != 0.1 {
		t.Errorf("StolenShare = %v, want 0.1", got)
	}
	if got := StolenPct(a, b); got != 10 {
		t.Errorf("StolenPct = %v, want 10", got)
	}
	if got := StolenShare(b, a); got != 0 {
		t.Errorf("StolenShare backwards = %v, want 0", got)
	}
	if now := ReadCPU(); now.Total == 0 {
		t.Log("no /proc/stat here")
	}
}

func TestP50P99(t *testing.T) {
	var lat []time.Duration
	for i := 200; i > 0; i-- {
		lat = append(lat, time.Duration(i))
	}
	p50, p99 := P50P99(lat)
	if p50 != 101 || p99 != 199 {
		t.Errorf("P50P99 = %v, %v; want 101, 199", p50, p99)
	}
}

// The proxy forwards to an echo server, refuses while cut, forwards again
// once healed.
func TestTCPProxyCutHeal(t *testing.T) {
	echo, err := EchoServer()
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	p, err := NewTCPProxy(echo.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := DialOnce(p.Addr(), 5*time.Second); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := EchoOn(c, "before", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	if err := EchoOn(c, "after", 5*time.Second); err == nil {
		t.Error("an open connection echoed after the cut")
	}
	if _, err := DialOnce(p.Addr(), time.Second); err == nil {
		t.Error("a new connection echoed while cut")
	}
	p.Heal()
	if _, err := DialOnce(p.Addr(), 5*time.Second); err != nil {
		t.Errorf("after heal: %v", err)
	}
}

// The admin session's client keeps a connection per concurrent caller:
// with net/http's default of 2 idle connections per host, 16 callers made
// most requests pay a TLS handshake (the fleet's identities: 394/s → 3,300/s).
func TestAdminSession_ConcurrentCallersReuseTheirConnections(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":{"token":"t","id":"x"}}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	a, err := AdminSession(srv.URL, "admin", "pw", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const callers, rounds = 16, 50
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if _, err := a.Create("/identities", map[string]any{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// Without room for an idle connection per caller (net/http keeps 2)
	// hundreds of the 800 requests dial one of their own (296 and 467 in two
	// runs); with it, about one per caller, more when a slow machine makes
	// dials race the idle connections (67 for 16 callers once in CI, two
	// test packages and the race run beside it).
	if n := conns.Load(); n > callers*rounds/4 {
		t.Fatalf("%d connections for %d callers' %d requests", n, callers, callers*rounds)
	}
}

func TestTokenOf_TheDataTokenOrNothing(t *testing.T) {
	for answer, want := range map[string]string{
		`{"data":{"token":"t1","id":"x"},"meta":{}}`: "t1",
		`{"data":{"id":"x"}}`:                        "",
		`{"error":{"code":"UNAUTHORIZED"}}`:          "",
		`not json`:                                   "",
	} {
		if got := TokenOf([]byte(answer)); got != want {
			t.Errorf("TokenOf(%s) = %q, want %q", answer, got, want)
		}
	}
}
