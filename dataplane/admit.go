package dataplane

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// Admission: a router's control channel is served once its certificate
// names an enrolled, enabled router not already connected (admit); its
// hello is answered (join) and its messages served (serve) until the
// channel closes (drop). watch closes the channel of a router that is
// disabled, deleted or enrolled again.

// ServeTLS serves one control-channel connection whose TLS handshake is
// done (it negotiated ALPN "ziti-ctrl"); it returns when the channel
// closes. It is the API server's TLSNextProto handler.
func (m *Manager) ServeTLS(conn *tls.Conn) {
	_ = conn.SetDeadline(time.Time{})
	r, err := m.admit(conn)
	if err != nil {
		var ref *refusal
		if errors.As(err, &ref) {
			m.metrics.refused.WithLabelValues(ref.reason).Inc()
			m.sampler.warn(ref.reason, sourceOf(conn.RemoteAddr()), "router refused",
				"remote", conn.RemoteAddr().String(), "reason", ref.reason, "detail", ref.detail)
			m.refusedEvent(ref, conn.RemoteAddr().String())
		} else {
			m.metrics.refused.WithLabelValues(reasonProtocol).Inc()
			m.sampler.warn(reasonProtocol, sourceOf(conn.RemoteAddr()), "control channel failed before it was open",
				"remote", conn.RemoteAddr().String(), "reason", reasonProtocol, "error", err)
			_ = conn.Close()
		}
		return
	}
	m.serve(r)
}

// serve waits for router r's channel to close, then forgets the router.
func (m *Manager) serve(r *Router) {
	<-r.channel().Done()
	m.drop(r)
	m.event(fsm.RouterEvent{Action: fsm.RouterDisconnected, RouterID: r.ID, Kind: r.Kind.Table,
		Detail: map[string]any{"reason": fmt.Sprint(r.channel().Err()), "connectedAt": r.ConnectedAt}})
}

// Refusal reasons, the label of the refused-routers metric.
const (
	reasonProtocol      = "protocol"
	reasonCertificate   = "certificate"
	reasonUnknown       = "not_enrolled"
	reasonDisabled      = "disabled"
	reasonIDMismatch    = "id_mismatch"
	reasonDuplicate     = "already_connected"
	reasonShuttingDown  = "shutting_down"
	reasonModelNotReady = "not_ready"
)

type refusal struct {
	reason, detail string
	// what is known of the router: its certificate, and its record
	fingerprint, routerID, kind string
}

func (r *refusal) Error() string { return r.reason + ": " + r.detail }

// admit reads the router's hello and decides: a certificate that chains to
// the cluster's CA, the current certificate of an enrolled router that is
// not disabled, the hello's id that router's, and no other channel of it
// to this node. A refused router gets a failed hello result that says only
// that it was refused.
func (m *Manager) admit(conn *tls.Conn) (*Router, error) {
	hello, err := ctrlchan.ReadHello(conn, time.Now().Add(m.cfg.HelloTimeout))
	if err != nil {
		return nil, err
	}
	ref := &refusal{}
	refuse := func(reason, detail string) (*Router, error) {
		// The reason stays in the node's log, metric and events: a peer
		// that is refused learns nothing of why.
		ctrlchan.Refuse(conn, hello, "refused by the controller")
		ref.reason, ref.detail = reason, detail
		return nil, ref
	}
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return refuse(reasonCertificate, "no client certificate")
	}
	tx := m.cfg.Store.Read()
	a, err := m.cfg.Authority(tx)
	if err != nil {
		return refuse(reasonModelNotReady, "the cluster's CA is not loaded: "+err.Error())
	}
	chain := append(append([]*x509.Certificate{}, certs...), a.Intermediates()...)
	if err := pki.VerifyClientChain(chain, a.Pool(), m.cfg.Now(), false); err != nil {
		return refuse(reasonCertificate, "the client certificate does not chain to the cluster's CA: "+err.Error())
	}
	fp := pki.Fingerprint(certs[0])
	ref.fingerprint = fp
	rec, kind := enrolledRouter(tx, fp)
	if rec == nil {
		return refuse(reasonUnknown, "no enrolled router has the certificate "+fp)
	}
	ref.routerID, ref.kind = rec.GetID(), kind.Table
	if routerDisabled(rec) {
		return refuse(reasonDisabled, "router "+rec.GetID()+" is disabled")
	}
	if id := string(hello.Body); id != rec.GetID() {
		return refuse(reasonIDMismatch, fmt.Sprintf("the hello names router %q, the certificate is router %s's", id, rec.GetID()))
	}
	listeners, err := wire.DecodeListeners(hello.Headers[wire.ListenersHeader])
	if err != nil {
		return refuse(reasonProtocol, "the hello's link listeners could not be read: "+err.Error())
	}
	r := &Router{ID: rec.GetID(), Kind: kind, fingerprint: fp, ConnectedAt: m.cfg.Now().UTC(), sync: SyncNew,
		Version: decodeVersionInfo(hello.Headers[ctrlchan.HeaderHelloVersion]), listeners: listeners}
	if err := m.join(conn, hello, r); err != nil {
		if jr, ok := err.(*refusal); ok {
			ref.reason, ref.detail = jr.reason, jr.detail
			return nil, ref
		}
		return nil, err
	}
	m.event(fsm.RouterEvent{Action: fsm.RouterConnected, RouterID: r.ID, Kind: kind.Table,
		Detail: map[string]any{"remoteAddress": conn.RemoteAddr().String(), "version": r.Version.Version, "fingerprint": fp}})
	m.onConnect(r)
	return r, nil
}

// join takes admitted router r on conn, whose hello it answers: it
// refuses (a *refusal) a second channel of the router, and any while the
// node shuts down.
func (m *Manager) join(conn net.Conn, hello *ctrlchan.Message, r *Router) error {
	r.edge.wake = make(chan struct{}, 1)
	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		ctrlchan.Refuse(conn, hello, "refused by the controller")
		return &refusal{reason: reasonShuttingDown, detail: "the controller node is shutting down"}
	case m.routers[r.ID] != nil:
		m.mu.Unlock()
		ctrlchan.Refuse(conn, hello, "refused by the controller")
		return &refusal{reason: reasonDuplicate, detail: "router " + r.ID + " already has a control channel to this node"}
	}
	m.routers[r.ID] = r // held before the answer, so a second hello racing this one is refused
	awaySince, wasAway := m.returnedLocked(r.ID)
	r.returned = wasAway
	m.mu.Unlock()
	_, err := ctrlchan.AcceptThen(conn, hello, m.helloHeaders(), m.cfg.Channel, m.handlers(r), m.unhandled, func(ch *ctrlchan.Channel) { r.ch.Store(ch) })
	m.mu.Lock()
	closed := m.closed
	if err != nil || closed {
		delete(m.routers, r.ID)
	}
	m.mu.Unlock()
	if err != nil {
		if wasAway { // its hello failed: it is still away, since it went
			m.keepAway(r.ID, r.Kind, awaySince)
		}
		return err
	}
	if closed { // Stop ran during the hello: it could not close this channel
		r.channel().CloseWith(errors.New("the controller node is shutting down"))
		return &refusal{reason: reasonShuttingDown, detail: "the controller node is shutting down"}
	}
	m.metrics.connected.Inc()
	m.log.Info("router connected", "router", r.ID, "kind", r.Kind.Entity, "remote", conn.RemoteAddr().String(), "version", r.Version.Version)
	return nil
}

// drop forgets a router whose channel closed. The router is away, not
// gone (away.go): its circuits and links stay until it returns or its
// grace passes; one closed because it was deleted, disabled or enrolled
// again is gone at once. A channel this node closed as it shuts down is
// not the router leaving: the router keeps its circuits and their traffic
// goes on, as when the node is killed (a rolling restart must not cut the
// streams this node routed).
func (m *Manager) drop(r *Router) {
	m.lostUnroutes(r) // before it is forgotten: an Unroute sent meanwhile fails, and is kept
	r.mu.Lock()
	gone := r.goneWhy
	r.mu.Unlock()
	m.mu.Lock()
	if m.routers[r.ID] == r {
		delete(m.routers, r.ID)
	}
	closing := m.closed
	var a *awayRouter
	if !closing && gone == "" {
		// Away from now, before another channel of the router can join:
		// that one finds it away, and is reconciled.
		a = m.awayLocked(r.ID, r.Kind, m.cfg.Now())
	}
	m.mu.Unlock()
	m.metrics.connected.Dec()
	m.retire(r)
	if !closing {
		m.away(r, gone, a)
	}
	m.log.Info("router disconnected", "router", r.ID, "reason", fmt.Sprint(r.channel().Err()))
}

// enrolledRouter is the verified edge router or router whose current
// certificate has fingerprint fp.
func enrolledRouter(tx *store.Tx, fp string) (store.Record, *store.Kind) {
	for _, k := range []*store.Kind{store.KindEdgeRouter, store.KindRouter} {
		if rec := tx.First(k, "fingerprint", fp); rec != nil && enrollmentOf(rec).IsVerified {
			return rec, k
		}
	}
	return nil, nil
}

func enrollmentOf(rec store.Record) *store.RouterEnrollment {
	switch v := rec.(type) {
	case *store.EdgeRouter:
		return &v.RouterEnrollment
	case *store.Router:
		return &v.RouterEnrollment
	}
	return &store.RouterEnrollment{}
}

func routerDisabled(rec store.Record) bool {
	switch v := rec.(type) {
	case *store.EdgeRouter:
		return v.Disabled
	case *store.Router:
		return v.Disabled
	}
	return false
}

// stillAdmitted says why a connected router may no longer stay connected
// ("" when it may): deleted, disabled or enrolled again. A certificate
// extension keeps the channel: the router moves to the new certificate on
// its next connection.
func stillAdmitted(tx *store.Tx, r *Router) string {
	if why := recordRefuses(tx, r.Kind, r.ID); why != "" {
		return why
	}
	rec, _ := tx.Get(r.Kind, r.ID)
	r.mu.Lock()
	r.fingerprint = *enrollmentOf(rec).Fingerprint
	r.mu.Unlock()
	return ""
}

// whyDeleted: a router's record is gone.
const whyDeleted = "the router was deleted"

// recordRefuses says why router id of kind may not be connected ("" when
// it may): its record deleted, disabled, or enrolled again.
func recordRefuses(tx *store.Tx, kind *store.Kind, id string) string {
	rec, err := tx.Get(kind, id)
	if err != nil {
		return whyDeleted
	}
	e := enrollmentOf(rec)
	switch {
	case !e.IsVerified || e.Fingerprint == nil:
		return "the router was enrolled again"
	case routerDisabled(rec):
		return "the router was disabled"
	}
	return ""
}

// watch re-checks the connected routers' records each time the model moves.
func (m *Manager) watch() {
	_, moved := m.cfg.AppliedIndex()
	for {
		select {
		case <-m.stop:
			return
		case <-moved:
		}
		// The next signal before the read: a change applied after the read
		// wakes the next round. Taken after the checks (as before), a change
		// applied between the read and it was missed until the next one: a
		// deleted router away stayed away for its grace (seen once in CI,
		// TestRouterAway_GoneAtOnceWhenDeleted).
		_, moved = m.cfg.AppliedIndex()
		// The routers first, then the model: a router that connected
		// before the read has its record in it (a router's record is
		// written before it can connect).
		routers := m.connectedWhere(nil)
		tx := m.cfg.Store.Read()
		for _, r := range routers {
			if why := stillAdmitted(tx, r); why != "" {
				m.log.Info("closing a router's control channel", "router", r.ID, "reason", why)
				r.mu.Lock()
				r.goneWhy = why
				r.mu.Unlock()
				r.channel().CloseWith(errors.New(why))
			}
		}
		m.checkAways(tx)
	}
}
