package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"time"
)

const (
	rootValidityYears         = 10
	intermediateValidityYears = 5

	// backdate absorbs clock skew between cluster nodes and clients: a
	// certificate issued on one node must already be valid on a peer whose
	// clock is slightly behind.
	backdate = time.Hour

	serialBits = 128
)

// State is the serializable CA material replicated through the Raft model.
// All fields are PEM (keys are PKCS#8 "PRIVATE KEY" blocks) except KeyID.
// It holds private keys: treat it as a secret wherever it is stored.
type State struct {
	RootCertPEM         string `json:"root_cert_pem"`
	RootKeyPEM          string `json:"root_key_pem"`
	IntermediateCertPEM string `json:"intermediate_cert_pem"`
	IntermediateKeyPEM  string `json:"intermediate_key_pem"`
	// SigningKeyPEM is the ECDSA P-256 key for enrollment JWTs (ES256).
	SigningKeyPEM string `json:"signing_key_pem"`
	// KeyID is the JWT "kid" of SigningKeyPEM.
	KeyID string `json:"key_id"`
}

// NewState creates a fresh CA: a self-signed P-256 root (10 years, path
// length 1), a P-256 intermediate signed by it (5 years, path length 0) and
// an ES256 enrollment signing key. clusterName goes into the subjects so
// CAs of different clusters are distinguishable.
func NewState(now time.Time, clusterName string) (*State, error) {
	if strings.TrimSpace(clusterName) == "" {
		return nil, fmt.Errorf("%w: empty cluster name", ErrBadRequest)
	}
	rootKey, err := NewNodeKey()
	if err != nil {
		return nil, err
	}
	rootTmpl, err := caTemplate(now, clusterName+" Root CA", clusterName, rootValidityYears, 1)
	if err != nil {
		return nil, err
	}
	rootDER, err := x509.CreateCertificate(rand.Reader, rootTmpl, rootTmpl, rootKey.Public(), rootKey)
	if err != nil {
		return nil, fmt.Errorf("pki: create root certificate: %w", err)
	}
	root, err := x509.ParseCertificate(rootDER)
	if err != nil {
		return nil, fmt.Errorf("pki: parse root certificate: %w", err)
	}

	interKey, err := NewNodeKey()
	if err != nil {
		return nil, err
	}
	interTmpl, err := caTemplate(now, clusterName+" Intermediate CA", clusterName, intermediateValidityYears, 0)
	if err != nil {
		return nil, err
	}
	interDER, err := x509.CreateCertificate(rand.Reader, interTmpl, root, interKey.Public(), rootKey)
	if err != nil {
		return nil, fmt.Errorf("pki: create intermediate certificate: %w", err)
	}

	signKey, err := NewNodeKey()
	if err != nil {
		return nil, err
	}
	kid, err := keyID(&signKey.PublicKey)
	if err != nil {
		return nil, err
	}

	s := &State{
		RootCertPEM:         string(encodeCertPEM(rootDER)),
		IntermediateCertPEM: string(encodeCertPEM(interDER)),
		KeyID:               kid,
	}
	for _, k := range []struct {
		dst *string
		key crypto.Signer
	}{{&s.RootKeyPEM, rootKey}, {&s.IntermediateKeyPEM, interKey}, {&s.SigningKeyPEM, signKey}} {
		p, err := EncodeKeyPEM(k.key)
		if err != nil {
			return nil, err
		}
		*k.dst = string(p)
	}
	return s, nil
}

func caTemplate(now time.Time, cn, org string, years, maxPathLen int) (*x509.Certificate, error) {
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{org}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.AddDate(years, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            maxPathLen,
		// Without this a zero MaxPathLen means "unlimited".
		MaxPathLenZero: maxPathLen == 0,
	}, nil
}

// newSerial returns a random positive 128-bit serial; RFC 5280 forbids zero
// and negative serials, hence the retry.
func newSerial() (*big.Int, error) {
	buf := make([]byte, serialBits/8)
	for {
		if _, err := rand.Read(buf); err != nil {
			return nil, fmt.Errorf("pki: serial number: %w", err)
		}
		if n := new(big.Int).SetBytes(buf); n.Sign() > 0 {
			return n, nil
		}
	}
}

// keyID derives the JWT kid from the public key so it is stable across
// nodes and restarts without being stored separately from the key.
func keyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("pki: marshal public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:16]), nil
}

// NewNodeKey generates an ECDSA P-256 private key, the key type used for
// the CA, the JWT signer and node certificates.
func NewNodeKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: generate key: %w", err)
	}
	return k, nil
}

// EncodeKeyPEM encodes an RSA, ECDSA or Ed25519 private key as a PKCS#8
// "PRIVATE KEY" PEM block.
func EncodeKeyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupportedKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParseKeyPEM parses the first PKCS#8 "PRIVATE KEY" block in pemData and
// returns it as a signer (*rsa.PrivateKey, *ecdsa.PrivateKey or
// ed25519.PrivateKey).
func ParseKeyPEM(pemData []byte) (crypto.Signer, error) {
	rest := pemData
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("%w: no PRIVATE KEY block", ErrBadPEM)
		}
		if block.Type != "PRIVATE KEY" {
			continue
		}
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: private key: %w", ErrBadPEM, err)
		}
		switch k := key.(type) {
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			return k.(crypto.Signer), nil
		default:
			return nil, fmt.Errorf("%w: %T", ErrUnsupportedKey, key)
		}
	}
}

func encodeCertPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
