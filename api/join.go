package api

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"edgectl/auth"
	"edgectl/cluster"
	"edgectl/fsm"
	"edgectl/pki"
	"edgectl/store"
)

// Join: a new node proves it holds a join token, gets its certificates, starts
// Raft, then asks (with its new node certificate) to be added as a voter.

// nodeCertValidity is the validity of node and server certificates issued at join.
const nodeCertValidity = 2 * 365 * 24 * time.Hour

// joinRoutes are the operations a joining node and the admin who lets it in use.
func (s *Server) joinRoutes() []route {
	return []route{
		{managementAPI, post, "/cluster/join-tokens", "createJoinToken", "Cluster", admin, s.createJoinToken},
		{managementAPI, get, "/cluster/join-tokens", "listJoinTokens", "Cluster", admin, s.listJoinTokens},
		{managementAPI, del, "/cluster/join-tokens/:id", "deleteJoinToken", "Cluster", admin, s.deleteJoinToken},
		{managementAPI, post, "/cluster/join", "joinCluster", "Cluster", public, s.join},
		{managementAPI, post, "/cluster/join/complete", "completeClusterJoin", "Cluster", public, s.completeJoin},
	}
}

// createJoinToken makes a join token valid for ttlSeconds (default one hour),
// stores it through Raft and answers its printable form.
func (s *Server) createJoinToken(c *call) error {
	var b struct {
		TTLSeconds *int64 `json:"ttlSeconds"`
	}
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	ttl := time.Hour
	if b.TTLSeconds != nil {
		if *b.TTLSeconds < 1 || *b.TTLSeconds > 7*24*3600 {
			return invalidField("ttlSeconds", "must be between 1 and 604800 (7 days)", *b.TTLSeconds)
		}
		ttl = time.Duration(*b.TTLSeconds) * time.Second
	}
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	root, err := rootOf(a)
	if err != nil {
		return err
	}
	var urls []string
	c.tx.Controllers(func(ctrl *store.Controller) bool { urls = append(urls, ctrl.APIURL); return true })
	tok := &auth.JoinToken{Secret: auth.NewToken(), CAFingerprint: auth.CAFingerprint(root.Raw), URLs: urls}
	now := s.now()
	exp := now.Add(ttl)
	rec := &store.JoinToken{Base: store.Base{ID: tok.ID(), CreatedAt: now, UpdatedAt: now}, ExpiresAt: exp}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdJoinTokenCreate, rec); err != nil {
		return err
	}
	c.write(http.StatusCreated, map[string]any{"data": map[string]any{"id": rec.ID, "token": tok.Encode(), "expiresAt": exp}, "meta": meta(nil)})
	return nil
}

// listJoinTokens lists the outstanding join tokens: their ids and expiry,
// never the secret (which only the answer that created a token shows).
func (s *Server) listJoinTokens(c *call) error {
	out := []any{}
	c.tx.Each(store.KindJoinToken, "id", func(r store.Record) bool {
		t := r.(*store.JoinToken)
		out = append(out, map[string]any{"id": t.ID, "createdAt": t.CreatedAt, "expiresAt": t.ExpiresAt})
		return true
	})
	c.okMeta(out, map[string]any{"pagination": map[string]any{"limit": len(out), "offset": 0, "totalCount": len(out)}})
	return nil
}

// deleteJoinToken revokes an outstanding join token (a leaked one, say).
// It is a command of version 2, which every release applies (v0.1.0, the
// oldest a cluster may upgrade from, applies up to version 8).
func (s *Server) deleteJoinToken(c *call) error {
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdJoinTokenDelete, fsm.Delete{ID: c.param("id")}); err != nil {
		return err
	}
	c.empty()
	return nil
}

// rootOf returns the self-signed root of the internal CA chain.
func rootOf(a *pki.Authority) (*x509.Certificate, error) {
	certs, err := pki.ParseCertsPEM(a.BundlePEM())
	if err != nil {
		return nil, err
	}
	for _, c := range certs {
		if c.IsCA && c.CheckSignatureFrom(c) == nil {
			return c, nil
		}
	}
	return certs[0], nil
}

// JoinRequest is what a joining node sends.
type JoinRequest struct {
	Token       string `json:"token"`
	NodeID      string `json:"nodeId"`
	ClusterAddr string `json:"clusterAddr"`
	NodeCSR     string `json:"nodeCsr"`
	ServerCSR   string `json:"serverCsr"`
	// CommandVersion is the newest command version the joining binary
	// applies (every release sends it; absent counts as version 1, below
	// every release's, so such a node cannot join).
	CommandVersion int `json:"commandVersion,omitempty"`
}

// JoinResponse is what it gets back.
type JoinResponse struct {
	CABundle   string `json:"caBundle"`
	NodeCert   string `json:"nodeCert"`
	ServerCert string `json:"serverCert"`
}

var nodeIDPattern = regexp.MustCompile(`^[A-Za-z0-9._\-]{1,64}$`)

func (s *Server) join(c *call) error {
	var b JoinRequest
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	tok, err := auth.DecodeJoinToken(b.Token)
	if err != nil {
		return invalidField("token", err.Error(), nil)
	}
	if !nodeIDPattern.MatchString(b.NodeID) {
		return invalidField("nodeId", "must be 1 to 64 letters, digits, '.', '_' or '-'", b.NodeID)
	}
	if !hostPort.MatchString(b.ClusterAddr) {
		return invalidField("clusterAddr", "must be HOST:PORT", b.ClusterAddr)
	}
	// Look the token up before anything costs: an unknown, used or expired
	// token is refused without signing or proposing anything, and counts
	// toward the throttle of the caller's address.
	now := s.now()
	keys := map[string]auth.Limit{"join:" + clientIP(c.r): limitCredential, addrKey(c.r): limitAddress}
	if err := s.throttled(c, now, keys); err != nil {
		return err
	}
	if err := checkJoinToken(c.tx, tok.ID(), now); err != nil {
		if !c.rejudge() || checkJoinToken(c.tx, tok.ID(), now) != nil {
			s.failed(now, keys)
			return err
		}
	}
	if members, err := s.Cluster.Members(); err == nil {
		least := fsm.CommandVersion
		for _, m := range members {
			if m.ID == b.NodeID {
				return &apiError{status: http.StatusConflict, code: codeConflict, message: "a member with id " + b.NodeID + " is already in the cluster"}
			}
			cv := 1
			if ctrl := c.tx.Controller(m.ID); ctrl != nil {
				cv = max(ctrl.CommandVersion, 1)
			}
			least = min(least, cv)
		}
		// Every member applies commands of version least, so the log may
		// hold some: a node that cannot apply them would stop on them.
		if joiner := max(b.CommandVersion, 1); joiner < least {
			return invalidField("commandVersion", fmt.Sprintf("the members apply command version %d and the log may hold such commands; this node applies %d: upgrade it before it joins", least, joiner), b.CommandVersion)
		}
	}
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	nodeCert, err := a.SignCSR(now, []byte(b.NodeCSR), "node:"+b.NodeID, nodeCertValidity, pki.UsageClientServer)
	if err != nil {
		return invalidField("nodeCsr", err.Error(), nil)
	}
	host := b.ClusterAddr[:strings.LastIndex(b.ClusterAddr, ":")]
	serverCert, err := a.SignCSR(now, []byte(b.ServerCSR), strings.Trim(host, "[]"), nodeCertValidity, pki.UsageServer)
	if err != nil {
		return invalidField("serverCsr", err.Error(), nil)
	}
	// The token is used up only once everything else checked out, and through Raft: a token works once cluster-wide.
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdJoinTokenConsume, fsm.JoinTokenConsume{ID: tok.ID(), At: now}); err != nil {
		return err
	}
	chain := string(a.ChainPEM())
	c.ok(JoinResponse{CABundle: string(a.BundlePEM()), NodeCert: string(nodeCert) + chain, ServerCert: string(serverCert) + chain})
	return nil
}

// checkJoinToken refuses a join token that is not outstanding at now, with
// the answer the join command itself would give.
func checkJoinToken(tx *store.Tx, id string, now time.Time) error {
	t, err := store.GetAs[*store.JoinToken](tx, store.KindJoinToken, id)
	if err != nil {
		return invalidField("token", "the join token is unknown or was already used", nil)
	}
	if !now.Before(t.ExpiresAt) {
		return invalidField("token", "the join token expired at "+t.ExpiresAt.Format(time.RFC3339), nil)
	}
	return nil
}

// JoinCompleteRequest is what a joining node sends, with its node
// certificate, to be added as a voter: its cluster address and the fields of
// its controller record (every release sends them; a node that sends no
// apiUrl writes its record itself once it is a member, seconds later).
type JoinCompleteRequest struct {
	ClusterAddr    string          `json:"clusterAddr"`
	APIURL         string          `json:"apiUrl,omitempty"`
	Version        string          `json:"version,omitempty"`
	CommandVersion int             `json:"commandVersion,omitempty"`
	JWK            json.RawMessage `json:"jwk,omitempty"`
}

var apiURLPattern = regexp.MustCompile(`^https://[A-Za-z0-9._\-\[\]:]+:[0-9]{1,5}$`)

// check names the first field of b that is not valid.
func (b *JoinCompleteRequest) check() error {
	var jwk map[string]any
	switch {
	case !hostPort.MatchString(b.ClusterAddr):
		return invalidField("clusterAddr", "must be HOST:PORT", b.ClusterAddr)
	case b.APIURL != "" && !apiURLPattern.MatchString(b.APIURL):
		return invalidField("apiUrl", "must be https://HOST:PORT", b.APIURL)
	case len(b.Version) > 64:
		return invalidField("version", "must be at most 64 characters", b.Version)
	case b.CommandVersion < 0:
		return invalidField("commandVersion", "must not be negative", b.CommandVersion)
	case len(b.JWK) > 0 && json.Unmarshal(b.JWK, &jwk) != nil:
		return invalidField("jwk", "must be a JSON Web Key (an object)", string(b.JWK))
	}
	return nil
}

// completeJoin adds the caller as a voter. Only a node certificate of this
// cluster (CN node:ID, presented as the TLS client certificate) may ask.
//
// The node's controller record is written first, through Raft, and the
// membership after it: a node that lists the new member has applied the
// record (listMemberViews), so an enrollment JWT made then names it, and
// the routers connected to the members are sent the new list of
// control-channel addresses as the record is applied.
func (s *Server) completeJoin(c *call) error {
	certs := peerCerts(c.r)
	if len(certs) == 0 {
		return unauthorized("a node certificate is required")
	}
	a, err := s.authority(c.tx)
	if err != nil {
		return err
	}
	if err := pki.VerifyClientChain(certs, a.Pool(), s.now(), false); err != nil {
		return unauthorized("the node certificate is not valid: " + err.Error())
	}
	cn := certs[0].Subject.CommonName
	if !strings.HasPrefix(cn, "node:") {
		return forbidden("the certificate is not a node certificate")
	}
	var b JoinCompleteRequest
	if err := decodeInto(c.r, &b); err != nil {
		return err
	}
	if err := b.check(); err != nil {
		return err
	}
	id := strings.TrimPrefix(cn, "node:")
	if b.APIURL == "" {
		return s.Cluster.AddVoter(c.r.Context(), id, b.ClusterAddr)
	}
	now := s.now()
	rec := &store.Controller{Base: store.Base{ID: id, CreatedAt: now, UpdatedAt: now}, Named: store.Named{Name: id},
		APIURL: b.APIURL, ClusterAddr: b.ClusterAddr, Version: b.Version, CommandVersion: b.CommandVersion, JWK: b.JWK}
	if _, err := s.Writer.Do(c.r.Context(), fsm.CmdControllerRegister, rec); err != nil {
		return err
	}
	err = s.Cluster.AddVoter(c.r.Context(), id, b.ClusterAddr)
	if err != nil {
		s.dropNonMemberRecord(c.r.Context(), id)
	}
	return err
}

// dropNonMemberRecord removes the controller record of id when id is not a
// member (a join whose AddVoter failed): JWTs and routers' endpoint lists
// would otherwise name a node that is not in the cluster. A member that
// loses its record this way writes it again (controller.registerController).
func (s *Server) dropNonMemberRecord(ctx context.Context, id string) {
	members, err := s.Cluster.Members()
	if err != nil || slices.ContainsFunc(members, func(m cluster.Member) bool { return m.ID == id }) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.Writer.Do(ctx, fsm.CmdControllerRemove, fsm.Delete{ID: id}); err != nil {
		s.Log.Warn("the controller record of a node that was not added stays", "node", id, "error", err)
	}
}
