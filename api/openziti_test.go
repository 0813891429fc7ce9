package api_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// getNoRedirect GETs path of ts without following redirects.
func (ts *testServer) getNoRedirect(path string, header map[string]string) (int, http.Header, []byte) {
	ts.t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.base+path, nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := *ts.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

// TestOpenZiti_ESTCACertsReadableByOpenSSL: the CA certificates answer at
// the root of the API port (where `ziti edge login` fetches them) and under
// both APIs, as base64 PKCS#7 that openssl reads: a ContentInfo with the
// SignedData in its [0] EXPLICIT content.
func TestOpenZiti_ESTCACertsReadableByOpenSSL(t *testing.T) {
	t.Parallel()
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Fatal("this test reads the answer with openssl: install it (Debian: apt-get install openssl)")
	}
	ts := newTestServer(t)
	for _, p := range []string{"/.well-known/est/cacerts", mgmt("/.well-known/est/cacerts"), clientPath("/.well-known/est/cacerts")} {
		st, h, body := ts.getNoRedirect(p, nil)
		if st != 200 || h.Get("Content-Type") != "application/pkcs7-mime" {
			t.Fatalf("%s: %d %s", p, st, h.Get("Content-Type"))
		}
		der, err := base64.StdEncoding.DecodeString(string(body))
		if err != nil {
			t.Fatalf("%s: not base64: %v", p, err)
		}
		cmd := exec.Command(openssl, "pkcs7", "-inform", "DER", "-print_certs")
		cmd.Stdin = bytes.NewReader(der)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: openssl pkcs7 cannot read it: %v\n%s", p, err, out)
		}
		if n := strings.Count(string(out), "-----BEGIN CERTIFICATE-----"); n != 2 {
			t.Fatalf("%s: openssl found %d certificates, want the root and the intermediate:\n%s", p, n, out)
		}
	}
}

// TestOpenZiti_VersionAtTheRoot: older clients probe GET /version at the
// root of the API port.
func TestOpenZiti_VersionAtTheRoot(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, _, body := ts.getNoRedirect("/version", nil)
	if st != 200 || !strings.Contains(string(body), `"apiVersions"`) {
		t.Fatalf("/version: %d %s", st, body)
	}
}

// TestOpenZiti_NoRedirects: a path with "..", "//" or another case answers
// 404, never a redirect.
func TestOpenZiti_NoRedirects(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for _, p := range []string{"/edge/management/v1/../v1/identities", "/edge/management/v1//identities",
		"/edge/management/v1/IDENTITIES", "/edge/client/v1/./version"} {
		st, h, body := ts.getNoRedirect(p, map[string]string{"zt-session": ts.token})
		if st != http.StatusNotFound {
			t.Errorf("%s: %d (Location %q) %s, want 404", p, st, h.Get("Location"), body)
		}
	}
}

// TestInvalidUTF8IsRefused: JSON text must be UTF-8; a string that is not
// is a 400 naming the field, and nothing is stored.
func TestInvalidUTF8IsRefused(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, before := ts.list("/identities")
	st, out := ts.do(http.MethodPost, mgmt("/identities"), `{"name":"bad-`+"\xff"+`","type":"User","isAdmin":false}`)
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "name")
	st, out = ts.do(http.MethodPost, mgmt("/identities"), `{"name":"ok","type":"User","isAdmin":false,"tags":{"team":"`+"\xc3\x28"+`"}}`)
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "tags.team")
	if _, after := ts.list("/identities"); after != before {
		t.Fatalf("%d identities stored from invalid bodies", after-before)
	}
}
