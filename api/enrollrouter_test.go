package api_test

import (
	"crypto/ecdsa"
	"crypto/tls"
	"net"
	"net/http"
	"testing"
)

// enrollRouterCSRs are the two requests of a router: a client CSR and a server CSR with good SANs.
func enrollRouterCSRs(t *testing.T, clientKey *ecdsa.PrivateKey) map[string]any {
	return map[string]any{
		"certCsr":       enrollCSR(t, clientKey, "router", nil, nil),
		"serverCertCsr": enrollCSR(t, enrollKey(t), "router", []string{"router.example.com", "localhost"}, []net.IP{net.ParseIP("127.0.0.1")}),
	}
}

// enrollCheckRouterCerts checks an answer {ca, cert, serverCert} issued to router id
// and returns the client certificate for TLS.
func enrollCheckRouterCerts(t *testing.T, out map[string]any, id string, key *ecdsa.PrivateKey) *tls.Certificate {
	t.Helper()
	d, _ := out["data"].(map[string]any)
	ca, _ := d["ca"].(string)
	certPEM, _ := d["cert"].(string)
	serverPEM, _ := d["serverCert"].(string)
	if len(enrollChain(t, ca)) != 2 || certPEM == "" || serverPEM == "" {
		t.Fatalf("answer: %v", out)
	}
	cl, srv := enrollChain(t, certPEM)[0], enrollChain(t, serverPEM)[0]
	if cl.Subject.CommonName != id || srv.Subject.CommonName != id || len(srv.DNSNames) != 2 || len(srv.IPAddresses) != 1 || len(cl.DNSNames) != 0 {
		t.Fatalf("client %v / server %v %v %v", cl.Subject, srv.Subject, srv.DNSNames, srv.IPAddresses)
	}
	return enrollTLS(t, certPEM, key)
}

func TestEnrollRouter_EdgeAndTransitRoutersEnrollOnceWithVettedSANs(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	er := ts.create("/edge-routers", map[string]any{"name": "er1"})
	token := ts.get("/edge-routers/" + er)["enrollmentToken"].(string)
	path := "/enroll/erott?token=" + token
	key := enrollKey(t)
	good := enrollRouterCSRs(t, key)
	with := func(k string, v any) map[string]any {
		b := map[string]any{"certCsr": good["certCsr"], "serverCertCsr": good["serverCertCsr"]}
		b[k] = v
		return b
	}
	cases := []struct {
		name, field string
		body        map[string]any
	}{
		{"no certCsr", "certCsr", with("certCsr", nil)},
		{"no serverCertCsr", "serverCertCsr", with("serverCertCsr", nil)},
		{"certCsr not PEM", "certCsr", with("certCsr", "junk")},
		{"server CSR without SANs", "serverCertCsr", with("serverCertCsr", enrollCSR(t, key, "r", nil, nil))},
		{"wildcard SAN", "serverCertCsr", with("serverCertCsr", enrollCSR(t, key, "r", []string{"*.example.com"}, nil))},
		{"bad host name", "serverCertCsr", with("serverCertCsr", enrollCSR(t, key, "r", []string{"under_score..x"}, nil))},
		{"unspecified IP", "serverCertCsr", with("serverCertCsr", enrollCSR(t, key, "r", nil, []net.IP{net.IPv4zero}))},
	}
	for _, c := range cases {
		st, out := ts.enrollPost(path, nil, c.body)
		if st != 400 {
			t.Fatalf("%s: %d %v", c.name, st, out)
		}
		wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field)
	}
	if v := ts.get("/edge-routers/" + er); v["isVerified"] != false || v["enrollmentToken"] != token {
		t.Fatalf("a refused enrollment changed the router: %v", v)
	}

	st, out := ts.enrollPost(path, nil, good)
	if st != 200 {
		t.Fatalf("enroll: %d %v", st, out)
	}
	enrollCheckRouterCerts(t, out, er, key)
	v := ts.get("/edge-routers/" + er)
	if v["isVerified"] != true || v["fingerprint"] != enrollFP(enrollChain(t, dig(out, "data", "cert").(string))[0]) ||
		v["enrollmentToken"] != nil || v["enrollmentJwt"] != nil {
		t.Fatalf("after enrollment: %v", v)
	}
	st, out = ts.enrollPost(path, nil, good)
	wantError(t, st, out, 404, "NOT_FOUND", "")

	tr := ts.create("/routers", map[string]any{"name": "tr1"})
	trKey := enrollKey(t)
	st, out = ts.enrollPost("/enroll/erott?token="+ts.get("/routers/" + tr)["enrollmentToken"].(string), nil, enrollRouterCSRs(t, trKey))
	if st != 200 {
		t.Fatalf("transit router: %d %v", st, out)
	}
	enrollCheckRouterCerts(t, out, tr, trKey)
	if v := ts.get("/routers/" + tr); v["isVerified"] != true || v["fingerprint"] == nil || v["enrollmentToken"] != nil {
		t.Fatalf("transit router after enrollment: %v", v)
	}
}

func TestExtendRouter_NeedsTheCurrentCertificateAndMovesTheFingerprint(t *testing.T) {
	t.Parallel()
	ts := newNodeServer(t)
	er := ts.create("/edge-routers", map[string]any{"name": "er-ext"})
	key := enrollKey(t)
	st, out := ts.enrollPost("/enroll/erott?token="+ts.get("/edge-routers/" + er)["enrollmentToken"].(string), nil, enrollRouterCSRs(t, key))
	if st != 200 {
		t.Fatalf("enroll: %d %v", st, out)
	}
	oldCert := enrollCheckRouterCerts(t, out, er, key)
	oldFP := ts.get("/edge-routers/" + er)["fingerprint"]

	st, out = ts.enrollPost("/enroll/extend/router", nil, enrollRouterCSRs(t, key))
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	foreign, _ := newAuthnCA(t, "foreign").leafTLS(t, er)
	st, out = ts.enrollPost("/enroll/extend/router", foreign, enrollRouterCSRs(t, key))
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	st, out = ts.enrollPost("/enroll/extend/router", oldCert, map[string]any{"certCsr": "junk", "serverCertCsr": "junk"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "certCsr")
	if fp := ts.get("/edge-routers/" + er)["fingerprint"]; fp != oldFP {
		t.Fatal("a refused extension moved the fingerprint")
	}

	newKey := enrollKey(t)
	st, out = ts.enrollPost("/enroll/extend/router", oldCert, enrollRouterCSRs(t, newKey))
	if st != 200 {
		t.Fatalf("extend: %d %v", st, out)
	}
	newCert := enrollCheckRouterCerts(t, out, er, newKey)
	if fp := ts.get("/edge-routers/" + er)["fingerprint"]; fp == oldFP || fp != enrollFP(enrollChain(t, dig(out, "data", "cert").(string))[0]) {
		t.Fatalf("fingerprint %v did not move to the new certificate", fp)
	}
	// The old certificate is invalid at once; the new one works.
	st, out = ts.enrollPost("/enroll/extend/router", oldCert, enrollRouterCSRs(t, key))
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	if st, out = ts.enrollPost("/enroll/extend/router", newCert, enrollRouterCSRs(t, newKey)); st != http.StatusOK {
		t.Fatalf("extend with the new certificate: %d %v", st, out)
	}
}
