package controller

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"edgectl/api"
	"edgectl/auth"
	"edgectl/fsm"
	"edgectl/pki"
)

// joinPendingFile marks a node that has its certificates but was not yet
// added to the cluster; a restart finishes the join.
const joinPendingFile = "join-pending.json"

// joinState is what a joining node remembers until it is a member.
type joinState struct {
	URLs []string `json:"urls"`
}

// joinCandidates are the API URLs to try: the --join address first, then the token's.
func joinCandidates(joinAddr string, tok *auth.JoinToken) []string {
	var out []string
	if joinAddr != "" {
		if strings.HasPrefix(joinAddr, "https://") {
			out = append(out, strings.TrimSuffix(joinAddr, "/"))
		} else {
			out = append(out, "https://"+joinAddr)
		}
	}
	return append(out, tok.URLs...)
}

// fetchTrustedBundle reads the cluster's CA bundle from url and checks its
// root against the fingerprint in the token: the new node trusts nothing it
// was not told about out of band.
func fetchTrustedBundle(ctx context.Context, url, fingerprint string) ([]byte, *x509.CertPool, error) {
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the bundle is checked against the token's fingerprint below
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+api.ManagementPrefix+"/.well-known/est/cacerts", nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/x-pem-file")
	resp, err := insecure.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	bundle, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, nil, err
	}
	certs, err := pki.ParseCertsPEM(bundle)
	if err != nil {
		return nil, nil, fmt.Errorf("%s did not answer with a CA bundle: %w", url, err)
	}
	pool := x509.NewCertPool()
	found := false
	for _, c := range certs {
		if c.IsCA && c.CheckSignatureFrom(c) == nil {
			pool.AddCert(c)
			found = found || auth.CAFingerprint(c.Raw) == fingerprint
		}
	}
	if !found {
		return nil, nil, fmt.Errorf("the CA of %s does not match the join token: refusing to join it", url)
	}
	return bundle, pool, nil
}

// newCSR makes a key and a CSR for cn with the node's host names.
func newCSR(cn string, hosts []string) (keyPEM, csrPEM []byte, err error) {
	key, err := pki.NewNodeKey()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = pki.EncodeKeyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return keyPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}

// requestJoin gets this node's certificates from the cluster with the token
// and writes them to the data dir.
func (n *Node) requestJoin(ctx context.Context, nodeID, clusterAddr string) error {
	tok, err := auth.DecodeJoinToken(n.cfg.JoinToken)
	if err != nil {
		return fmt.Errorf("--join-token: %w", err)
	}
	var errs []error
	for _, url := range joinCandidates(n.cfg.Join, tok) {
		err := n.requestJoinAt(ctx, url, tok, nodeID, clusterAddr)
		if err == nil {
			raw, _ := json.Marshal(joinState{URLs: joinCandidates(n.cfg.Join, tok)})
			return writeFileAtomic(filepath.Join(n.cfg.DataDir, joinPendingFile), raw, 0o600)
		}
		var refused *joinRefused
		if errors.As(err, &refused) {
			return err
		}
		errs = append(errs, fmt.Errorf("%s: %w", url, err))
	}
	return fmt.Errorf("could not reach the cluster to join: %w", errors.Join(errs...))
}

// joinRefused is a definite no from the cluster (bad token, id taken): trying another node won't help.
type joinRefused struct{ msg string }

func (e *joinRefused) Error() string { return "the cluster refused the join: " + e.msg }

func (n *Node) requestJoinAt(ctx context.Context, url string, tok *auth.JoinToken, nodeID, clusterAddr string) error {
	bundle, pool, err := fetchTrustedBundle(ctx, url, tok.CAFingerprint)
	if err != nil {
		return err
	}
	hosts := n.certHosts()
	nodeKey, nodeCSR, err := newCSR("node:"+nodeID, hosts)
	if err != nil {
		return err
	}
	serverKey, serverCSR, err := newCSR(hosts[0], hosts)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(api.JoinRequest{Token: n.cfg.JoinToken, NodeID: nodeID, ClusterAddr: clusterAddr,
		NodeCSR: string(nodeCSR), ServerCSR: string(serverCSR), CommandVersion: fsm.CommandVersion})
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+api.ManagementPrefix+"/cluster/join", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		msg := string(raw)
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
			msg = e.Error.Message
		}
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			return &joinRefused{msg: msg}
		}
		return fmt.Errorf("join answered %d: %s", resp.StatusCode, msg)
	}
	var out struct {
		Data api.JoinResponse `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return err
	}
	pdir := filepath.Join(n.cfg.DataDir, pkiDir)
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		perm os.FileMode
	}{
		{nodeKeyFile, nodeKey, 0o600}, {nodeCertFile, []byte(out.Data.NodeCert), 0o644},
		{apiKeyFile, serverKey, 0o600}, {apiCertFile, []byte(out.Data.ServerCert), 0o644},
		{bundleFile, bundle, 0o644},
	} {
		if err := writeFileAtomic(filepath.Join(pdir, f.name), f.data, f.perm); err != nil {
			return err
		}
	}
	return nil
}

// completeJoin asks the cluster, with this node's new certificate, to add it
// as a voter; Raft must already listen, so the leader can reach it at once.
// It sends this node's controller record, which the cluster writes before
// the membership: the node's address is known wherever it is listed.
func (n *Node) completeJoin(ctx context.Context, certs *certMaterial) error {
	p := filepath.Join(n.cfg.DataDir, joinPendingFile)
	raw, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var st joinState
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("%s is damaged: %w", p, err)
	}
	rec := n.controllerRecord()
	body, _ := json.Marshal(api.JoinCompleteRequest{ClusterAddr: rec.ClusterAddr, APIURL: rec.APIURL,
		Version: rec.Version, CommandVersion: rec.CommandVersion, JWK: rec.JWK})
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: certs.roots, Certificates: []tls.Certificate{certs.node}}}}
	var errs []error
	for _, url := range st.URLs {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+api.ManagementPrefix+"/cluster/join/complete", bytes.NewReader(body))
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return os.Remove(p)
		}
		errs = append(errs, fmt.Errorf("%s answered %d: %s", url, resp.StatusCode, msg))
	}
	return fmt.Errorf("could not be added to the cluster: %w", errors.Join(errs...))
}
