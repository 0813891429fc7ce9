package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"
)

// JWKS fetching limits.
const (
	// jwksMaxBody bounds a key set response: a real one is a few KiB.
	jwksMaxBody = 1 << 20
	// DefaultJWKSMinRefresh is the least time between two fetches of one
	// endpoint, whatever the tokens ask: unknown kids cannot make the node
	// hammer the identity provider.
	DefaultJWKSMinRefresh = 30 * time.Second
	// DefaultJWKSMaxAge is how long a fetched key set is used before it is
	// fetched again (keys rotate).
	DefaultJWKSMaxAge = time.Hour
)

// ErrUnknownKid: the key set has no key with the token's kid.
var ErrUnknownKid = errors.New("auth: no key with this kid")

// JWKS fetches the JSON Web Key Sets of external JWT signers over HTTPS and
// caches them per endpoint. A set is fetched again when it is older than
// MaxAge or a token names a kid it lacks, but never twice within MinRefresh.
// One fetch per endpoint runs at a time; requests that need the same fetch
// wait for it instead of starting their own.
type JWKS struct {
	client     *http.Client
	MinRefresh time.Duration
	MaxAge     time.Duration

	mu   sync.Mutex
	sets map[string]*jwksSet
}

type jwksSet struct {
	fetch     sync.Mutex // held during a fetch
	mu        sync.Mutex // guards the fields below
	keys      map[string]crypto.PublicKey
	fetchedAt time.Time // last successful fetch
	triedAt   time.Time // last attempt
	fetches   int
}

// NewJWKS returns a cache whose HTTPS client trusts roots (nil: the system
// pool), with timeouts on every step and no redirects off HTTPS.
func NewJWKS(roots *x509.CertPool) *JWKS {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		TLSClientConfig:       &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 5 * time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   2,
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme != "https" || len(via) >= 3 {
				return errors.New("auth: JWKS redirect refused")
			}
			return nil
		}}
	return &JWKS{client: client, MinRefresh: DefaultJWKSMinRefresh, MaxAge: DefaultJWKSMaxAge, sets: map[string]*jwksSet{}}
}

func (j *JWKS) set(url string) *jwksSet {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.sets[url]
	if s == nil {
		s = &jwksSet{}
		j.sets[url] = s
	}
	return s
}

// Fetches is how many fetches of url were attempted (tests, metrics).
func (j *JWKS) Fetches(url string) int {
	s := j.set(url)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// Key returns the key kid of the set at url as of now.
func (j *JWKS) Key(ctx context.Context, url, kid string, now time.Time) (crypto.PublicKey, error) {
	s := j.set(url)
	s.mu.Lock()
	k, have := s.keys[kid]
	fresh := !s.fetchedAt.IsZero() && now.Sub(s.fetchedAt) < j.MaxAge
	s.mu.Unlock()
	if have && fresh {
		return k, nil
	}
	s.fetch.Lock()
	defer s.fetch.Unlock()
	s.mu.Lock()
	// Another request may have fetched while this one waited.
	k, have = s.keys[kid]
	if (have && now.Sub(s.fetchedAt) < j.MaxAge) || (!s.triedAt.IsZero() && now.Sub(s.triedAt) < j.MinRefresh) {
		s.mu.Unlock()
		if have {
			return k, nil
		}
		return nil, ErrUnknownKid
	}
	s.triedAt = now
	s.fetches++
	s.mu.Unlock()

	// The fetch outlives a client that hangs up: its result serves everyone.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	keys, err := j.get(fctx, url)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.keys, s.fetchedAt = keys, now
	}
	if k, have = s.keys[kid]; have {
		return k, nil
	}
	if err != nil {
		return nil, err
	}
	return nil, ErrUnknownKid
}

// get fetches and parses one key set.
func (j *JWKS) get(ctx context.Context, url string) (map[string]crypto.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("auth: JWKS %s: status %d", url, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS %s: %w", url, err)
	}
	if len(body) > jwksMaxBody {
		return nil, fmt.Errorf("auth: JWKS %s: response larger than %d bytes", url, jwksMaxBody)
	}
	return ParseJWKS(body)
}

// jwk is one JSON Web Key (RFC 7517) of the kinds a signer uses.
type jwk struct {
	Kty string   `json:"kty"`
	Kid string   `json:"kid"`
	Use string   `json:"use"`
	Crv string   `json:"crv"`
	N   string   `json:"n"`
	E   string   `json:"e"`
	X   string   `json:"x"`
	Y   string   `json:"y"`
	X5c []string `json:"x5c"`
}

// ParseJWKS parses a key set into its signature keys by kid. Keys for
// encryption, of unknown types or malformed are skipped, not fatal: one odd
// key must not take the whole provider down.
func ParseJWKS(raw []byte) (map[string]crypto.PublicKey, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("auth: JWKS: %w", err)
	}
	out := map[string]crypto.PublicKey{}
	for _, k := range set.Keys {
		if k.Use == "enc" {
			continue
		}
		if pub, err := k.publicKey(); err == nil {
			out[k.Kid] = pub
		}
	}
	return out, nil
}

func b64int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, errors.New("bad base64url integer")
	}
	return new(big.Int).SetBytes(b), nil
}

func (k *jwk) publicKey() (crypto.PublicKey, error) {
	switch k.Kty {
	case "RSA":
		n, err := b64int(k.N)
		if err != nil {
			return nil, err
		}
		e, err := b64int(k.E)
		if err != nil || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31 {
			return nil, errors.New("bad RSA exponent")
		}
		if n.BitLen() < 2048 {
			return nil, errors.New("RSA key shorter than 2048 bits")
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		curve := map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}[k.Crv]
		if curve == nil {
			return nil, errors.New("unsupported curve")
		}
		x, err1 := base64.RawURLEncoding.DecodeString(k.X)
		y, err2 := base64.RawURLEncoding.DecodeString(k.Y)
		size := (curve.Params().BitSize + 7) / 8
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return nil, errors.New("bad EC point")
		}
		// Parsing the uncompressed point checks that it is on the curve.
		return ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
	case "OKP":
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if k.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errors.New("unsupported OKP key")
		}
		return ed25519.PublicKey(x), nil
	}
	if len(k.X5c) > 0 {
		der, err := base64.StdEncoding.DecodeString(k.X5c[0])
		if err != nil {
			return nil, err
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, err
		}
		return c.PublicKey, nil
	}
	return nil, errors.New("unsupported key type")
}
