package dataplane

import (
	"crypto/x509"
	"encoding/pem"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/fsm"
	"edgectl/pki"
)

// Certificate extension over the control channel, as routers do it before
// their certificates expire (or at start with `ziti router run --extend`):
//  1. the router sends two certificate requests (client and server);
//  2. this node signs them, keeps the new client certificate aside as
//     unverified (router.extendPending) and sends both certificates;
//  3. the router sends back the client certificate it got, showing it has
//     it; the node makes it the router's current one (router.extendVerify)
//     and answers with an empty error. The channel stays open; the router
//     uses the new certificate from its next connection on.

// extend handles a router's certificate requests.
func (m *Manager) extend(r *Router, msg *ctrlchan.Message) {
	log := m.log.With("router", r.ID)
	x, err := wire.DecodeExtendRequest(msg.Body)
	if err != nil || x.ClientCertCSR == "" || x.ServerCertCSR == "" {
		log.Warn("certificate extension refused: the request lacks its certificate requests", "error", err)
		return
	}
	if m.cfg.SignRouterCerts == nil || m.cfg.Writer == nil {
		return
	}
	clientChain, leaf, fp, serverChain, err := m.cfg.SignRouterCerts(m.cfg.Store.Read(), r.ID, x.ClientCertCSR, x.ServerCertCSR)
	if err != nil {
		log.Warn("certificate extension refused", "error", err)
		return
	}
	cmd := fsm.CmdRouterExtend
	if x.RequireVerification {
		cmd = fsm.CmdRouterExtendPending
	}
	ctx, cancel := m.timeout(writeTimeout)
	defer cancel()
	if _, err := m.cfg.Writer.Do(ctx, cmd, fsm.RouterCert{Kind: r.Kind.Table, ID: r.ID, OldFingerprint: r.currentFingerprint(),
		CertPem: leaf, Fingerprint: fp, At: m.cfg.Now().UTC()}); err != nil {
		log.Warn("certificate extension not recorded", "error", err)
		return
	}
	if err := m.send(r, ctrlchan.NewMessage(wire.EnrollmentCertsResponseType, wire.EnrollmentCerts(clientChain, serverChain, ""))); err != nil {
		return
	}
	if !x.RequireVerification {
		m.noteExtended(r, fp)
	}
	log.Info("router certificates issued", "fingerprint", fp, "verify", x.RequireVerification)
}

// extendVerify handles the router's proof that it has its new certificate.
func (m *Manager) extendVerify(r *Router, msg *ctrlchan.Message) {
	reply := func(code, text string) {
		_ = m.reply(r, msg, ctrlchan.NewMessage(wire.ErrorType, wire.Error(code, text, "")))
	}
	certPEM, _ := wire.DecodeExtendVerify(msg.Body)
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil {
		reply("MISSING_CLIENT_PEM", "no client certificate PEM")
		return
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		reply("INVALID_CLIENT_PEM", err.Error())
		return
	}
	fp := pki.Fingerprint(cert)
	if m.cfg.Writer == nil {
		reply("VERIFY_ERROR", "this node cannot write")
		return
	}
	ctx, cancel := m.timeout(writeTimeout)
	defer cancel()
	if _, err := m.cfg.Writer.Do(ctx, fsm.CmdRouterExtendVerify, fsm.RouterCert{Kind: r.Kind.Table, ID: r.ID,
		Fingerprint: fp, At: m.cfg.Now().UTC()}); err != nil {
		reply("VERIFY_ERROR", err.Error())
		return
	}
	m.noteExtended(r, fp)
	reply("", "")
}

// noteExtended moves the connected router to its new certificate (the
// channel stays open) and records the extension.
func (m *Manager) noteExtended(r *Router, fp string) {
	r.mu.Lock()
	r.fingerprint = fp
	r.mu.Unlock()
	m.metrics.extended.Inc()
	m.log.Info("router certificate extended", "router", r.ID, "fingerprint", fp)
	m.event(fsm.RouterEvent{Action: fsm.RouterCertExtended, RouterID: r.ID, Kind: r.Kind.Table, Detail: map[string]any{"fingerprint": fp}})
}
