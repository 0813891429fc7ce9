package controller

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"edgectl/auth"
	"edgectl/pki"
)

// Files under the data dir that live outside Raft.
const (
	nodeFile      = "node.json"
	pkiDir        = "pki"
	bundleFile    = "ca-bundle.pem"
	nodeCertFile  = "node.crt"
	nodeKeyFile   = "node.key"
	apiCertFile   = "server.crt"
	apiKeyFile    = "server.key"
	bootstrapFile = "bootstrap-pki.json" // the new cluster's PKI until the bootstrap command applied it
)

// certValidity is how long node and server certificates are issued for.
const certValidity = 2 * 365 * 24 * time.Hour

// nodeInfo is what a node remembers about itself across restarts.
type nodeInfo struct {
	ID string `json:"id"`
}

// loadNodeID returns the node id kept in the data dir, creating it on first
// start. A flag that names another id is refused: the cluster knows this
// node by the id it started with.
func loadNodeID(dir, flag string) (string, error) {
	p := filepath.Join(dir, nodeFile)
	raw, err := os.ReadFile(p)
	switch {
	case err == nil:
		var ni nodeInfo
		if err := json.Unmarshal(raw, &ni); err != nil || ni.ID == "" {
			return "", fmt.Errorf("%s is damaged: %v", p, err)
		}
		if flag != "" && flag != ni.ID {
			return "", fmt.Errorf("this data dir belongs to node %q; --node-id %q would make it another node: "+
				"drop the flag, or use a new data dir for a new node", ni.ID, flag)
		}
		return ni.ID, nil
	case errors.Is(err, os.ErrNotExist):
		id := flag
		if id == "" {
			id = "node-" + auth.NewToken()[:10] // random: an id's first characters are its time
		}
		raw, _ := json.Marshal(nodeInfo{ID: id})
		return id, writeFileAtomic(p, raw, 0o600)
	default:
		return "", err
	}
}

// writeFileAtomic writes a file so that a crash leaves the old or the new content, never a mix.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// certMaterial are the TLS materials of a node.
type certMaterial struct {
	node, api tls.Certificate
	roots     *x509.CertPool
	// expiry is when each of the node's certificates ends: cluster (the
	// node's), api, and the earliest root and intermediate CA of the bundle.
	expiry map[string]time.Time
}

// issueNodeCerts makes the node's cluster and API certificates from a and writes them with the CA bundle.
func issueNodeCerts(dir, nodeID string, hosts []string, a *pki.Authority, now time.Time) error {
	pdir := filepath.Join(dir, pkiDir)
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		return err
	}
	for _, c := range []struct{ cn, cert, key string }{
		{"node:" + nodeID, nodeCertFile, nodeKeyFile},
		{hosts[0], apiCertFile, apiKeyFile},
	} {
		key, err := pki.NewNodeKey()
		if err != nil {
			return err
		}
		certPEM, err := a.IssueServerCert(now, key.Public(), c.cn, hosts, certValidity)
		if err != nil {
			return err
		}
		keyPEM, err := pki.EncodeKeyPEM(key)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(pdir, c.key), keyPEM, 0o600); err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(pdir, c.cert), certPEM, 0o644); err != nil {
			return err
		}
	}
	return writeFileAtomic(filepath.Join(pdir, bundleFile), a.BundlePEM(), 0o644)
}

// loadCertMaterial reads the node's certificates and the CA bundle.
func loadCertMaterial(dir string) (*certMaterial, error) {
	pdir := filepath.Join(dir, pkiDir)
	node, err := tls.LoadX509KeyPair(filepath.Join(pdir, nodeCertFile), filepath.Join(pdir, nodeKeyFile))
	if err != nil {
		return nil, fmt.Errorf("node certificate: %w", err)
	}
	api, err := tls.LoadX509KeyPair(filepath.Join(pdir, apiCertFile), filepath.Join(pdir, apiKeyFile))
	if err != nil {
		return nil, fmt.Errorf("API certificate: %w", err)
	}
	bundle, err := os.ReadFile(filepath.Join(pdir, bundleFile))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	certs, err := pki.ParseCertsPEM(bundle)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bundleFile, err)
	}
	expiry := map[string]time.Time{}
	earliest := func(name string, t time.Time) {
		if old, ok := expiry[name]; !ok || t.Before(old) {
			expiry[name] = t
		}
	}
	for _, c := range certs {
		switch {
		case c.IsCA && c.CheckSignatureFrom(c) == nil:
			roots.AddCert(c)
			earliest("root_ca", c.NotAfter)
		case c.IsCA:
			earliest("intermediate_ca", c.NotAfter)
		}
	}
	for name, kp := range map[string]tls.Certificate{"cluster": node, "api": api} {
		if leaf, err := x509.ParseCertificate(kp.Certificate[0]); err == nil {
			expiry[name] = leaf.NotAfter
		}
	}
	return &certMaterial{node: node, api: api, roots: roots, expiry: expiry}, nil
}

// clusterTLS is the mutual TLS configuration of the cluster port.
func (m *certMaterial) clusterTLS() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{m.node},
		RootCAs:      m.roots,
		ClientCAs:    m.roots,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
}

// verifyNodePeer accepts only node certificates on the cluster port: the same CA
// also signs identity certificates, which must never speak Raft.
func verifyNodePeer(c *x509.Certificate) error {
	if len(c.Subject.CommonName) < 6 || c.Subject.CommonName[:5] != "node:" {
		return fmt.Errorf("certificate %q is not a controller node certificate", c.Subject.CommonName)
	}
	return nil
}

// signerOf is the private key of a TLS certificate, when it can sign.
func signerOf(c tls.Certificate) crypto.Signer {
	s, _ := c.PrivateKey.(crypto.Signer)
	return s
}
