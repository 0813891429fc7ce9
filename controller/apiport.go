package controller

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"edgectl/api"
	"edgectl/dataplane"
)

// Holding times of what reaches the API port while the node starts.
const (
	// startHold bounds how long a request or a router's control channel is
	// held for a node that does not serve yet. A request held that long is
	// answered 503 (api.Starting); a router's channel is closed, and the
	// router dials again after its 5 s pause, as when it was refused.
	startHold = 10 * time.Second
	// startRetryAfter is the Retry-After of that 503.
	startRetryAfter = 2 * time.Second
)

// listenAPI opens the API port and serves it through the start gate, which
// holds what arrives until startAPI opens it.
func (n *Node) listenAPI(certs *certMaterial) error {
	ln := n.cfg.APIListener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", n.cfg.APIAddr); err != nil {
			return fmt.Errorf("API listener: %w", err)
		}
	} else if _, want, _ := net.SplitHostPort(n.cfg.APIAddr); want != "0" && !strings.HasSuffix(ln.Addr().String(), ":"+want) {
		// The advertised address comes from --api-addr.
		return fmt.Errorf("the API socket passed to the node listens on %s, not on --api-addr %s", ln.Addr(), n.cfg.APIAddr)
	}
	// Shutdown closes it before the HTTP server does (below); the server's
	// own close must then not fail the shutdown.
	ln = &closeOnceListener{Listener: ln}
	n.apiLn = ln
	n.gate = newStartGate(n.stopping)
	// Failed TLS handshakes are logged sampled once the routers' manager
	// exists (a connection storm would write a line each).
	n.httpErrors = newLateWriter(n.log.Named("http").StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}))
	// Routers reach the node on the API port, told apart by ALPN: a
	// handshake that settles on "ziti-ctrl" is handed to the control
	// channel, everything else is HTTP/1.1 or HTTP/2 as before.
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	n.http = &http.Server{
		Handler:   n.gate,
		Protocols: protocols,
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){
			dataplane.ALPN: n.gate.serveRouter,
		},
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{certs.api},
			// Ask for a client certificate without requiring one: cert authentication and routers read it.
			ClientAuth: tls.RequestClientCert,
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"h2", "http/1.1", dataplane.ALPN},
		},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          stdlog.New(n.httpErrors, "", 0),
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		// Shutdown closes the listener first (net.ErrClosed).
		if err := n.http.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			n.log.Error("API server stopped", "error", err)
		}
	}()
	n.log.Info("API port open: requests are held until the node has caught up with the cluster", "addr", ln.Addr().String())
	return nil
}

// startGate stands in front of the API port's two services (HTTP and the
// routers' control channels) from the moment the port opens, right after
// the TLS material is loaded, until the node serves. A connection is never
// refused while the node starts: an OpenZiti router refused on its first
// dial after the node restarted waits 5 s before it dials again, well past
// the moment the node is ready. What arrives is held until the node has
// restored its model and caught up with the cluster (open), so nothing is
// answered, and no router admitted, from a model that is behind.
type startGate struct {
	ready chan struct{}   // closed by open
	stop  <-chan struct{} // the node's stopping: held requests are let go
	// api and routers serve what the gate held; set by open, before ready
	// closes.
	api     http.Handler
	routers func(*tls.Conn)
	hold    time.Duration
}

func newStartGate(stop <-chan struct{}) *startGate {
	return &startGate{ready: make(chan struct{}), stop: stop, hold: startHold}
}

// open hands the held and all later requests to api, the held and later
// control channels to routers.
func (g *startGate) open(api http.Handler, routers func(*tls.Conn)) {
	g.api, g.routers = api, routers
	close(g.ready)
}

// wait reports whether the gate opened within the hold.
func (g *startGate) wait(done <-chan struct{}) bool {
	select {
	case <-g.ready:
		return true
	default:
	}
	t := time.NewTimer(g.hold)
	defer t.Stop()
	select {
	case <-g.ready:
		return true
	case <-t.C:
	case <-g.stop:
	case <-done:
	}
	return false
}

// ServeHTTP is the API server's handler: the probes say at once that the
// node is alive and not ready; other requests wait for the node.
func (g *startGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case <-g.ready:
		g.api.ServeHTTP(w, r)
		return
	default:
	}
	if !api.IsProbe(r) && g.wait(r.Context().Done()) {
		g.api.ServeHTTP(w, r)
		return
	}
	api.Starting(w, r, startRetryAfter)
}

// serveRouter is the API server's handler of a control channel (ALPN
// "ziti-ctrl"). The router's hello waits unread: OpenZiti's router waits
// for the answer without a deadline.
func (g *startGate) serveRouter(_ *http.Server, c *tls.Conn, _ http.Handler) {
	if !g.wait(nil) {
		_ = c.Close()
		return
	}
	g.routers(c)
}

// closeOnceListener is a listener closed once: a second Close does nothing
// and returns nil. Shutdown closes the API port before the routers'
// channels, and the HTTP server's Shutdown closes it again unless its
// Serve saw the first close already: without this, whether a node's stop
// failed ("use of closed network connection", exit status 1) depended on
// which came first.
type closeOnceListener struct {
	net.Listener
	once sync.Once
	err  error
}

func (l *closeOnceListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}

// lateWriter is the API server's error log while the node starts: its
// lines go to the plain log until the sampled one exists (set).
type lateWriter struct {
	w atomic.Pointer[io.Writer]
}

func newLateWriter(w io.Writer) *lateWriter {
	l := &lateWriter{}
	l.set(w)
	return l
}

func (l *lateWriter) set(w io.Writer) { l.w.Store(&w) }

func (l *lateWriter) Write(p []byte) (int, error) { return (*l.w.Load()).Write(p) }
