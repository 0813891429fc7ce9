package api_test

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"edgectl/auth"
	"edgectl/controller"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/argon2"
)

// Benchmarks of authentication over real HTTPS against one in-process node
// (docs/performance.md, "Authentication"; the session: docs/performance-history.md, "Issue 6: authentication"). Run with:
//
//	go test ./api/ -run '^$' -bench 'BenchmarkAuthn' -benchtime 5s
//
// Parallel benchmarks: ns/op is wall time per login, so logins/s = 1e9 / ns/op.

// benchNode is a started node with an admin token and an HTTPS client.
type benchNode struct {
	base, token string
	pool        *x509.CertPool
	client      *http.Client
}

func startBenchNode(b *testing.B, jwksRoots *x509.CertPool) *benchNode {
	b.Helper()
	n, pool := startNode(b, func(c *controller.Config) { c.JWKSRootCAs = jwksRoots })
	bn := &benchNode{base: n.APIURL(), pool: pool, client: bn0Client(pool, nil)}
	st, out := bn.post(b, bn.client, "/edge/management/v1/authenticate?method=password", "", nil, map[string]any{"username": "admin", "password": testAdminPassword})
	if st != 200 {
		b.Fatalf("admin login: %d %v", st, out)
	}
	bn.token = out["data"].(map[string]any)["token"].(string)
	return bn
}

func bn0Client(pool *x509.CertPool, certs []tls.Certificate) *http.Client {
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64,
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}}
}

func (bn *benchNode) post(b *testing.B, c *http.Client, path, token string, header map[string]string, body any) (int, map[string]any) {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, bn.base+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("svc-session", token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return 0, nil
	}
	defer resp.Body.Close()
	out := map[string]any{}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (bn *benchNode) create(b *testing.B, path string, body any) string {
	st, out := bn.post(b, bn.client, "/edge/management/v1"+path, bn.token, nil, body)
	if st != 201 {
		b.Fatalf("create %s: %d %v", path, st, out)
	}
	return out["data"].(map[string]any)["id"].(string)
}

// runLogins runs login in parallel (16 goroutines per CPU is far more than
// the hash slots, so the node is saturated) and fails on any non-200.
func runLogins(b *testing.B, login func() int) {
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if st := login(); st != 200 {
				b.Errorf("login: %d", st)
				return
			}
		}
	})
}

// BenchmarkAuthn_Argon2idRaw is the machine's ceiling for password logins:
// bare Argon2id hashes at the parameters the node uses, one per CPU at once.
func BenchmarkAuthn_Argon2idRaw(b *testing.B) {
	p := auth.DefaultParams
	salt := make([]byte, p.SaltLen)
	_, _ = rand.Read(salt)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			argon2.IDKey([]byte("bench-password"), salt, p.Time, p.MemoryKiB, p.Threads, p.KeyLen)
		}
	})
}

func BenchmarkAuthn_PasswordLogin(b *testing.B) {
	bn := startBenchNode(b, nil)
	id := bn.create(b, "/identities", map[string]any{"name": "bench-user", "type": "User", "isAdmin": false})
	bn.create(b, "/authenticators", map[string]any{"identityId": id, "method": "updb", "username": "bench-user", "password": "bench-password"})
	body := map[string]any{"username": "bench-user", "password": "bench-password"}
	runLogins(b, func() int {
		st, _ := bn.post(b, bn.client, "/edge/client/v1/authenticate?method=password", "", nil, body)
		return st
	})
}

func BenchmarkAuthn_CertLogin(b *testing.B) { benchCertLogin(b, false) }

// BenchmarkAuthn_CertLoginNewConnection pays a TLS handshake per login, as a
// client that connects only to authenticate does.
func BenchmarkAuthn_CertLoginNewConnection(b *testing.B) { benchCertLogin(b, true) }

func benchCertLogin(b *testing.B, newConn bool) {
	bn := startBenchNode(b, nil)
	root := newBenchRoot(b)
	ca := bn.create(b, "/cas", map[string]any{"name": "bench-ca", "certPem": authnPEM(root.cert.Raw), "identityRoles": []string{},
		"isAuthEnabled": true, "isAutoCaEnrollmentEnabled": false, "isOttCaEnrollmentEnabled": false})
	var caView map[string]any
	req, _ := http.NewRequest(http.MethodGet, bn.base+"/edge/management/v1/cas/"+ca, nil)
	req.Header.Set("svc-session", bn.token)
	resp, err := bn.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&caView)
	resp.Body.Close()
	proof := benchSign(b, root, caView["data"].(map[string]any)["verificationToken"].(string))
	vreq, _ := http.NewRequest(http.MethodPost, bn.base+"/edge/management/v1/cas/"+ca+"/verify", bytes.NewBufferString(authnPEM(proof.cert.Raw)))
	vreq.Header.Set("svc-session", bn.token)
	if resp, err := bn.client.Do(vreq); err != nil || resp.StatusCode != 200 {
		b.Fatalf("verify CA: %v", err)
	}
	leaf := benchSign(b, root, "bench-device")
	id := bn.create(b, "/identities", map[string]any{"name": "bench-device", "type": "Device", "isAdmin": false})
	bn.create(b, "/authenticators", map[string]any{"identityId": id, "method": "cert", "certPem": authnPEM(leaf.cert.Raw)})
	c := bn0Client(bn.pool, []tls.Certificate{{Certificate: [][]byte{leaf.cert.Raw}, PrivateKey: leaf.key}})
	c.Transport.(*http.Transport).DisableKeepAlives = newConn
	runLogins(b, func() int {
		st, _ := bn.post(b, c, "/edge/client/v1/authenticate?method=cert", "", nil, map[string]any{})
		return st
	})
}

func BenchmarkAuthn_ExtJWTLogin(b *testing.B) {
	root := newBenchRoot(b)
	signing := benchSign(b, root, "bench-idp")
	bn := startBenchNode(b, nil)
	bn.create(b, "/external-jwt-signers", map[string]any{"name": "bench-idp", "enabled": true, "issuer": "https://bench-idp",
		"audience": "edgectl", "certPem": authnPEM(signing.cert.Raw)})
	id := bn.create(b, "/identities", map[string]any{"name": "bench-jwt", "type": "User", "isAdmin": false})
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": "https://bench-idp", "aud": "edgectl", "sub": id,
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString(signing.key)
	if err != nil {
		b.Fatal(err)
	}
	h := map[string]string{"Authorization": "Bearer " + tok}
	runLogins(b, func() int {
		st, _ := bn.post(b, bn.client, "/edge/client/v1/authenticate?method=ext-jwt", "", h, map[string]any{})
		return st
	})
}

// newBenchRoot is a root CA for the benchmarks' certificates.
func newBenchRoot(b *testing.B) *issuer { return newRootIssuer(b, "Bench Root") }

// benchSign issues a client leaf of cn under is with a fresh EC key.
func benchSign(b *testing.B, is *issuer, cn string) *issuer {
	key := testKey(b, false)
	return &issuer{cert: is.sign(b, cn, key.Public(), false, time.Now().Add(-time.Hour), time.Now().Add(time.Hour)), key: key}
}
