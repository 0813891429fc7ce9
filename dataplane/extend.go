package dataplane

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"time"

	"edgectl/ctrlchan"
	"edgectl/fsm"
	"edgectl/pki"

	"google.golang.org/protobuf/encoding/protowire"
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

// extendRequest is EnrollmentExtendRouterRequest: clientCertCsr 1, serverCertCsr 2, requireVerification 3.
type extendRequest struct {
	ClientCSR, ServerCSR string
	RequireVerification  bool
}

func decodeExtendRequest(b []byte) (extendRequest, error) {
	var x extendRequest
	err := eachField(b, func(num protowire.Number, v uint64, raw []byte) error {
		switch num {
		case 1:
			x.ClientCSR = string(raw)
		case 2:
			x.ServerCSR = string(raw)
		case 3:
			x.RequireVerification = v != 0
		}
		return nil
	})
	return x, err
}

// enrollmentCerts is EnrollmentCertsResponse: clientCertPem 1, serverCertPem 2, caCertsPem 3.
func enrollmentCerts(client, server, ca string) []byte {
	return protoBuf(nil).str(1, client).str(2, server).str(3, ca)
}

// edgeError is edge_ctrl_pb.Error: code 1, message 2, cause 3. An empty one is success.
func edgeError(code, message string) []byte {
	return protoBuf(nil).str(1, code).str(2, message)
}

// extend handles a router's certificate requests.
func (m *Manager) extend(r *Router, msg *ctrlchan.Message) {
	log := m.log.With("router", r.ID)
	x, err := decodeExtendRequest(msg.Body)
	if err != nil || x.ClientCSR == "" || x.ServerCSR == "" {
		log.Warn("certificate extension refused: the request lacks its certificate requests", "error", err)
		return
	}
	if m.cfg.SignRouterCerts == nil || m.cfg.Writer == nil {
		return
	}
	clientChain, leaf, fp, serverChain, err := m.cfg.SignRouterCerts(m.cfg.Store.Read(), r.ID, x.ClientCSR, x.ServerCSR)
	if err != nil {
		log.Warn("certificate extension refused", "error", err)
		return
	}
	cmd := fsm.CmdRouterExtend
	if x.RequireVerification {
		cmd = fsm.CmdRouterExtendPending
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.cfg.Writer.Do(ctx, cmd, fsm.RouterCert{Kind: r.Kind.Table, ID: r.ID, OldFingerprint: r.currentFingerprint(),
		CertPem: leaf, Fingerprint: fp, At: m.cfg.Now().UTC()}); err != nil {
		log.Warn("certificate extension not recorded", "error", err)
		return
	}
	if err := m.send(r, ctrlchan.NewMessage(ctEnrollmentCerts, enrollmentCerts(clientChain, serverChain, ""))); err != nil {
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
		_ = r.ch.Reply(msg, ctrlchan.NewMessage(ctError, edgeError(code, text)))
	}
	var certPEM string
	_ = eachField(msg.Body, func(num protowire.Number, _ uint64, raw []byte) error {
		if num == 1 {
			certPEM = string(raw)
		}
		return nil
	})
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
