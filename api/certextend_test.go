package api_test

import (
	"crypto/ecdsa"
	"crypto/tls"
	"net/http"
	"testing"
)

func TestAuthenticatorExtend_IssuesAPendingCertificateThatVerifySwitchesTo(t *testing.T) {
	t.Parallel()
	ts := newNodeServer(t)
	ident := ts.authnIdentity("ext-user", map[string]any{"enrollment": map[string]any{"ott": true, "updb": "ext-login"}})
	if st, out := ts.enrollPost("/enroll/updb?token="+ts.enrollTokenOf(ident, "updb"), nil, map[string]any{"password": "Ext-pass-123"}); st != 200 {
		t.Fatalf("updb enrollment: %d %v", st, out)
	}
	oldCert := ts.enrollOttTLS(ident)
	oldKey := oldCert.PrivateKey.(*ecdsa.PrivateKey)
	oldFP, certID := ts.enrollCertAuthenticator(ident)
	st, out := ts.enrollPost("/authenticate?method=password", oldCert, map[string]any{"username": "ext-login", "password": "Ext-pass-123"})
	if st != 200 {
		t.Fatalf("login: %d %v", st, out)
	}
	token := dig(out, "data", "token").(string)
	data, _ := ts.list("/identities/" + ident + "/authenticators?filter=method%3D%22updb%22")
	updbID := dig(data[0], "id").(string)
	other := ts.authnIdentity("someone-else", map[string]any{"enrollment": map[string]any{"ott": true}})
	ts.enrollOttTLS(other)
	_, otherCertID := ts.enrollCertAuthenticator(other)
	if st, out := ts.do(http.MethodPost, mgmt("/authenticators/"+certID+"/request-extend"), map[string]any{"rollKeys": true}); st != 200 {
		t.Fatalf("request-extend: %d %v", st, out)
	}

	extend := func(api, id string, cert *tls.Certificate, body any) (int, map[string]any) {
		return ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: api + "/current-identity/authenticators/" + id + "/extend",
			token: token, cert: cert}, body)
	}
	newKey := enrollKey(t)
	csr := map[string]any{"clientCertCsr": enrollCSR(t, newKey, "x", nil, nil)}
	cases := []struct {
		name        string
		id          string
		cert        *tls.Certificate
		body        map[string]any
		status      int
		code, field string
	}{
		{"no client certificate", certID, nil, csr, 401, "UNAUTHORIZED", ""},
		{"updb authenticator", updbID, oldCert, csr, 400, "COULD_NOT_VALIDATE", "method"},
		{"another identity's authenticator", otherCertID, oldCert, csr, 404, "NOT_FOUND", ""},
		{"unknown authenticator", "nope", oldCert, csr, 404, "NOT_FOUND", ""},
		{"no CSR", certID, oldCert, map[string]any{}, 400, "COULD_NOT_VALIDATE", "clientCertCsr"},
		{"bad CSR", certID, oldCert, map[string]any{"clientCertCsr": "junk"}, 400, "COULD_NOT_VALIDATE", "clientCertCsr"},
		{"same key though a key roll was requested", certID, oldCert,
			map[string]any{"clientCertCsr": enrollCSR(t, oldKey, "x", nil, nil)}, 400, "COULD_NOT_VALIDATE", "clientCertCsr"},
	}
	for _, c := range cases {
		st, out := extend(clientPath(""), c.id, c.cert, c.body)
		if st != c.status {
			t.Fatalf("%s: %d %v", c.name, st, out)
		}
		wantError(t, st, out, c.status, c.code, c.field)
	}

	st, out = extend(clientPath(""), certID, oldCert, csr)
	if st != 200 || len(enrollChain(t, dig(out, "data", "ca").(string))) != 2 {
		t.Fatalf("extend: %d %v", st, out)
	}
	newPEM := dig(out, "data", "clientCert").(string)
	newLeaf := enrollChain(t, newPEM)[0]
	if newLeaf.Subject.CommonName != ident {
		t.Fatalf("new certificate CN %q", newLeaf.Subject.CommonName)
	}
	if fp, _ := ts.enrollCertAuthenticator(ident); fp != oldFP {
		t.Fatal("extend replaced the certificate before extend-verify")
	}

	verify := func(body any) (int, map[string]any) {
		return ts.enrollSendJSON(enrollReq{method: http.MethodPost, path: clientPath("/current-identity/authenticators/" + certID + "/extend-verify"), token: token}, body)
	}
	st, out = verify(map[string]any{"clientCert": "junk"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "clientCert")
	st, out = verify(map[string]any{"clientCert": newAuthnCA(t, "x").leaf(t, "y")})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "clientCert")
	if st, out = verify(map[string]any{"clientCert": newPEM}); st != 200 {
		t.Fatalf("extend-verify: %d %v", st, out)
	}
	a := ts.get("/authenticators/" + certID)
	if a["fingerprint"] != enrollFP(newLeaf) || a["isExtendRequested"] != false || a["isKeyRollRequested"] != false || a["extendRequestedAt"] != nil {
		t.Fatalf("after extend-verify: %v", a)
	}
	st, out = verify(map[string]any{"clientCert": newPEM})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "clientCert")

	// The old certificate is no longer the authenticator's; the new one is, on both APIs.
	st, out = extend(clientPath(""), certID, oldCert, map[string]any{"clientCertCsr": enrollCSR(t, enrollKey(t), "x", nil, nil)})
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	newCert := enrollTLS(t, newPEM, newKey)
	if st, out = extend("/edge/management/v1", certID, newCert, map[string]any{"clientCertCsr": enrollCSR(t, enrollKey(t), "x", nil, nil)}); st != 200 {
		t.Fatalf("extend with the new certificate on the Management API: %d %v", st, out)
	}
}
