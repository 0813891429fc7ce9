package controller

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A request that reaches a starting node waits and is served by the API
// once the node serves: not refused, not answered before.
func TestStartGate_HoldsARequestUntilTheNodeServes(t *testing.T) {
	t.Parallel()
	g := newStartGate(make(chan struct{}))
	answered := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		w := httptest.NewRecorder()
		g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/edge/management/v1/services", nil))
		answered <- w
	}()
	select {
	case w := <-answered:
		t.Fatalf("answered %d before the node served", w.Code)
	case <-time.After(100 * time.Millisecond):
	}
	g.open(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }), nil)
	select {
	case w := <-answered:
		if w.Code != http.StatusTeapot {
			t.Fatalf("held request answered %d, want the API's answer", w.Code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held request was not served once the gate opened")
	}
}

// The probes answer at once while the node starts: alive, not ready.
func TestStartGate_ProbesAnswerAtOnce(t *testing.T) {
	t.Parallel()
	g := newStartGate(make(chan struct{}))
	g.hold = 5 * time.Second // a probe held this long answers 503: /livez would fail
	for path, want := range map[string]int{"/livez": http.StatusOK, "/readyz": http.StatusServiceUnavailable} {
		w := httptest.NewRecorder()
		g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != want {
			t.Fatalf("%s: %d, want %d", path, w.Code, want)
		}
	}
}

// A request held past the hold is answered 503 CLUSTER_UNAVAILABLE in the
// error envelope, with a Retry-After.
func TestStartGate_ALongStartAnswers503(t *testing.T) {
	t.Parallel()
	g := newStartGate(make(chan struct{}))
	g.hold = 50 * time.Millisecond
	w := httptest.NewRecorder()
	g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/edge/client/v1/version", nil))
	var body struct {
		Error struct{ Code, RequestID string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", w.Body, err)
	}
	if w.Code != http.StatusServiceUnavailable || body.Error.Code != "CLUSTER_UNAVAILABLE" || body.Error.RequestID == "" ||
		w.Header().Get("Retry-After") != "2" {
		t.Fatalf("got %d %s (Retry-After %q)", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
}

// A router's control channel is held, then handed over when the node
// serves; one held while the node stops is closed.
func TestStartGate_HoldsARoutersChannel(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	g := newStartGate(stop)
	served := make(chan *tls.Conn, 1)
	a, b := net.Pipe()
	defer b.Close()
	held := tls.Server(a, &tls.Config{})
	go g.serveRouter(nil, held, nil)
	_ = b.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := b.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("the channel was not held before the node served: %v", err)
	}
	g.open(nil, func(c *tls.Conn) { served <- c })
	select {
	case c := <-served:
		if c != held {
			t.Fatal("another connection was served")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held channel was not handed to the routers")
	}

	g = newStartGate(stop)
	c, d := net.Pipe()
	go g.serveRouter(nil, tls.Server(c, &tls.Config{}), nil)
	close(stop)
	_ = d.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := d.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("the channel held while the node stops was not closed: %v", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// Shutdown closes the API port, then the HTTP server's Shutdown closes it
// again if its Serve has not returned yet (here its Accept is held until
// the server's close): that second close must not fail the node's stop.
func TestCloseOnceListener_TheServersCloseAfterOursIsNoFailure(t *testing.T) {
	t.Parallel()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	ln := &closeOnceListener{Listener: acceptHeld{Listener: raw, release: release}}
	srv := &http.Server{Handler: http.NotFoundHandler()}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serversClose{Listener: ln, release: release}) }()
	// Serve tracks the listener once it runs: a request answered says so.
	waitServing(t, raw.Addr().String())
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("the server's shutdown after the port was closed: %v", err)
	}
	<-served
}

// acceptHeld holds an Accept that fails until release is closed.
type acceptHeld struct {
	net.Listener
	release chan struct{}
}

func (l acceptHeld) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.release
	}
	return c, err
}

// serversClose is the listener the server closes: it lets the held
// Accept go once the server has closed it.
type serversClose struct {
	net.Listener
	release chan struct{}
}

func (l serversClose) Close() error {
	err := l.Listener.Close()
	close(l.release)
	return err
}

func waitServing(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never answered: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // polling for the server, with a deadline
	}
}
