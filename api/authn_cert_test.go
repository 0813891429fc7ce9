package api_test

import (
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	"edgectl/pki"
	"edgectl/store"
)

// certLogin authenticates with method cert through client (a client that presents a certificate, or none).
func (ts *testServer) certLogin(client *http.Client) (int, map[string]any, http.Header) {
	ts.t.Helper()
	return ts.send(req{method: http.MethodPost, path: clientPath("/authenticate?method=cert"), body: map[string]any{}, client: client})
}

// bindCert creates an identity (extra merged) with a cert authenticator of c.
func (ts *testServer) bindCert(name string, c *x509.Certificate, extra map[string]any) string {
	ts.t.Helper()
	id := ts.authnIdentity(name, extra)
	ts.create("/authenticators", map[string]any{"identityId": id, "method": "cert", "certPem": authnPEM(c.Raw)})
	return id
}

// leafOf issues a client leaf under is, valid from now-1h to now+1h of the test clock.
func leafOf(t *testing.T, is *issuer, cn string, rsaKey bool, now time.Time) (crypto.Signer, *x509.Certificate) {
	t.Helper()
	key := testKey(t, rsaKey)
	return key, is.sign(t, cn, key.Public(), false, now.Add(-time.Hour), now.Add(time.Hour))
}

func TestCertAuth_ChainsToARegisteredCAWithIntermediatesInAnyOrderRSAAndEC(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowNode(t, nil)
	root := newRootIssuer(t, "Corp Root")
	inter := root.intermediate(t, "Corp Issuing")
	ts.registerVerifiedCA("corp", root, true)
	now := clock.Now()

	for _, rsaKey := range []bool{false, true} {
		name := map[bool]string{false: "ec-device", true: "rsa-device"}[rsaKey]
		key, leaf := leafOf(t, inter, name, rsaKey, now)
		id := ts.bindCert(name, leaf, nil)
		for _, chain := range [][]*x509.Certificate{{leaf, inter.cert}, {leaf, root.cert, inter.cert}} {
			token, sess := ts.okSession(ts.certLogin(ts.withClientCert(key, chain...)))
			if sess["identityId"] != id || sess["authenticatorId"] == "" {
				t.Fatalf("%s: session %v", name, sess)
			}
			st, out, _ := ts.send(req{method: http.MethodGet, path: clientPath("/current-identity"), token: token})
			if st != 200 || dig(out, "data", "id") != id {
				t.Fatalf("%s: current identity %d %v", name, st, out)
			}
		}
		// Without its intermediate the leaf does not chain to the CA.
		st, out, _ := ts.certLogin(ts.withClientCert(key, leaf))
		wantError(t, st, out, 401, "INVALID_AUTH", "")
	}
}

func TestCertAuth_EveryWrongCertificateIsInvalidAuth(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowNode(t, nil)
	root := newRootIssuer(t, "Corp Root")
	ts.registerVerifiedCA("corp", root, true)
	disabledRoot := newRootIssuer(t, "Auth Disabled Root")
	ts.registerVerifiedCA("no-auth", disabledRoot, false)
	now := clock.Now()

	// A certificate bound to an identity, but from a CA nobody registered.
	rogue := newRootIssuer(t, "Rogue")
	rogueKey, rogueLeaf := leafOf(t, rogue, "rogue", false, now)
	ts.bindCert("rogue", rogueLeaf, nil)
	// A valid chain whose leaf no authenticator has.
	unknownKey, unknownLeaf := leafOf(t, root, "stranger", true, now)
	// A CA that is verified but not enabled for authentication.
	naKey, naLeaf := leafOf(t, disabledRoot, "na", false, now)
	ts.bindCert("na", naLeaf, nil)
	// A policy that does not allow certificates.
	noCert := ts.policyWith("no-cert", func(p, _ map[string]any) { p["cert"].(map[string]any)["allowed"] = false })
	ncKey, ncLeaf := leafOf(t, root, "nc", false, now)
	ts.bindCert("nc", ncLeaf, map[string]any{"authPolicyId": noCert})
	// A disabled identity.
	disKey, disLeaf := leafOf(t, root, "dis", false, now)
	dis := ts.bindCert("dis", disLeaf, nil)
	ts.do(http.MethodPost, mgmt("/identities/"+dis+"/disable"), map[string]any{"durationMinutes": 0})

	for name, client := range map[string]*http.Client{
		"no client certificate": nil,
		"unregistered CA":       ts.withClientCert(rogueKey, rogueLeaf),
		"unknown fingerprint":   ts.withClientCert(unknownKey, unknownLeaf),
		"CA not auth enabled":   ts.withClientCert(naKey, naLeaf),
		"policy forbids cert":   ts.withClientCert(ncKey, ncLeaf),
		"disabled identity":     ts.withClientCert(disKey, disLeaf),
		"wrong chain presented": ts.withClientCert(rogueKey, rogueLeaf, root.cert),
	} {
		t.Run(name, func(t *testing.T) {
			st, out, _ := ts.certLogin(client)
			wantError(t, st, out, 401, "INVALID_AUTH", "")
		})
	}
	// A bound certificate without its key: TLS itself refuses the handshake.
	hr, _ := http.NewRequest(http.MethodPost, ts.base+clientPath("/authenticate?method=cert"), nil)
	if resp, err := ts.withClientCert(unknownKey, rogueLeaf).Do(hr); err == nil {
		resp.Body.Close()
		t.Fatalf("a certificate presented without its key got an answer: %d", resp.StatusCode)
	}
}

func TestCertAuth_ExpiredLeafOnlyWhereThePolicyAllowsIt(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowNode(t, nil)
	root := newRootIssuer(t, "Corp Root")
	ts.registerVerifiedCA("corp", root, true)
	now := clock.Now()
	allow := ts.policyWith("expired-ok", func(p, _ map[string]any) { p["cert"].(map[string]any)["allowExpiredCerts"] = true })
	key := testKey(t, false)
	expired := root.sign(t, "old-device", key.Public(), false, now.Add(-3*time.Hour), now.Add(-time.Hour))
	// The default policy allows expired certificates (as OpenZiti's does): this one does not.
	strict := ts.policyWith("expired-not-ok", func(_, _ map[string]any) {})
	id := ts.bindCert("old-device", expired, map[string]any{"authPolicyId": strict})
	st, out, _ := ts.certLogin(ts.withClientCert(key, expired))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	if st, out := ts.do(http.MethodPatch, mgmt("/identities/"+id), map[string]any{"authPolicyId": allow}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	ts.okSession(ts.certLogin(ts.withClientCert(key, expired)))
	// Not yet valid is never accepted.
	future := root.sign(t, "future-device", key.Public(), false, now.Add(time.Hour), now.Add(2*time.Hour))
	ts.bindCert("future-device", future, map[string]any{"authPolicyId": allow})
	st, out, _ = ts.certLogin(ts.withClientCert(key, future))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
}

func TestCertAuth_InternalPKILeafAloneAuthenticates(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowNode(t, nil)
	var st pki.State
	if err := json.Unmarshal(ts.store.Read().Setting(store.SettingPKI), &st); err != nil {
		t.Fatal(err)
	}
	a, err := pki.Load(&st)
	if err != nil {
		t.Fatal(err)
	}
	key := testKey(t, true)
	csr, err := x509.CreateCertificateRequest(nil, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	leafPEM, err := a.SignCSR(clock.Now(), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}), "internal-device", time.Hour, pki.UsageClient)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := pki.ParseCertsPEM(leafPEM)
	if err != nil {
		t.Fatal(err)
	}
	id := ts.bindCert("internal-device", certs[0], nil)
	_, sess := ts.okSession(ts.certLogin(ts.withClientCert(key, certs[0])))
	if sess["identityId"] != id {
		t.Fatalf("session of %v, want %s", sess["identityId"], id)
	}
}
