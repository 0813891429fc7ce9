package api_test

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"edgectl/api"
	"edgectl/auth"
	"edgectl/pki"
)

// TestJoin_ForgedTokensCostNothingAndAreThrottled: a join with a token the
// cluster never issued is refused before anything is signed or proposed,
// and a source that keeps trying is throttled like /authenticate.
func TestJoin_ForgedTokensCostNothingAndAreThrottled(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	before := ts.local.AppliedIndex()
	body := func(tok string) map[string]any {
		return map[string]any{"token": tok, "nodeId": "n2", "clusterAddr": "127.0.0.1:7000", "nodeCsr": "x", "serverCsr": "y"}
	}
	throttled := false
	for i := range 30 {
		forged := (&auth.JoinToken{Secret: auth.NewToken(), CAFingerprint: auth.CAFingerprint([]byte("not our CA"))}).Encode()
		st, out := ts.doAs("", http.MethodPost, mgmt("/cluster/join"), body(forged))
		if st == http.StatusTooManyRequests {
			throttled = true
			break
		}
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "token")
		if i > 20 {
			t.Fatalf("attempt %d still not throttled", i)
		}
	}
	if !throttled {
		t.Fatal("30 forged join tokens from one address were never throttled")
	}
	if after := ts.local.AppliedIndex(); after != before {
		t.Fatalf("forged joins proposed %d commands", after-before)
	}
}

// TestJoin_AGoodTokenIsNotSpentOnABadRequest: the token is checked first,
// but used up only once the whole request checked out.
func TestJoin_AGoodTokenIsNotSpentOnABadRequest(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.do(http.MethodPost, mgmt("/cluster/join-tokens"), map[string]any{})
	if st != http.StatusCreated {
		t.Fatalf("join token: %d %v", st, out)
	}
	tok := dig(out, "data", "token").(string)
	before := ts.local.AppliedIndex()
	st, out = ts.doAs("", http.MethodPost, mgmt("/cluster/join"),
		map[string]any{"token": tok, "nodeId": "n2", "clusterAddr": "127.0.0.1:7000", "nodeCsr": "not a csr", "serverCsr": "y"})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "nodeCsr")
	if after := ts.local.AppliedIndex(); after != before {
		t.Fatalf("a refused join proposed %d commands", after-before)
	}
}

// TestJoin_TokensCanBeListedAndRevoked: the outstanding tokens are listed
// without their secrets, and a revoked token no longer lets a node join.
func TestJoin_TokensCanBeListedAndRevoked(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	st, out := ts.do(http.MethodPost, mgmt("/cluster/join-tokens"), map[string]any{"ttlSeconds": 600})
	if st != http.StatusCreated {
		t.Fatalf("join token: %d %v", st, out)
	}
	id, tok := dig(out, "data", "id").(string), dig(out, "data", "token").(string)
	data, n := ts.list("/cluster/join-tokens")
	if n != 1 || dig(data[0], "id") != id || dig(data[0], "expiresAt") == nil {
		t.Fatalf("list: %v", data)
	}
	if _, ok := data[0].(map[string]any)["token"]; ok {
		t.Fatal("the list shows the token")
	}
	ts.mustDelete("/cluster/join-tokens/" + id)
	st, out = ts.do(http.MethodDelete, mgmt("/cluster/join-tokens/"+id), nil)
	wantError(t, st, out, http.StatusNotFound, "NOT_FOUND", "")
	st, out = ts.doAs("", http.MethodPost, mgmt("/cluster/join"),
		map[string]any{"token": tok, "nodeId": "n2", "clusterAddr": "127.0.0.1:7000", "nodeCsr": "x", "serverCsr": "y"})
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "token")
}

// TestJoin_TheNodesRecordIsWrittenBeforeItIsAMember: a node that asks to be
// added sends its controller record, which is in the model before the
// membership changes (so a member is never listed without its address),
// and is dropped again when the node could not be added.
func TestJoin_TheNodesRecordIsWrittenBeforeItIsAMember(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	srv := httptest.NewUnstartedServer(ts.api.Handler())
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	complete := func(id string) int {
		t.Helper()
		body, _ := json.Marshal(api.JoinCompleteRequest{ClusterAddr: "127.0.0.1:6262", APIURL: "https://127.0.0.1:4443",
			Version: "v9.9.9", CommandVersion: 9, JWK: json.RawMessage(`{"kty":"EC"}`)})
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, Certificates: []tls.Certificate{nodeCertificate(t, ts, id)}}}} //nolint:gosec // httptest's own certificate
		resp, err := client.Post(srv.URL+mgmt("/cluster/join/complete"), "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}

	ts.local.mu.Lock()
	ts.local.addVoter = func(id, _ string) error {
		if ts.store.Read().Controller(id) == nil {
			return errors.New("asked to add " + id + " before its controller record was written")
		}
		return nil
	}
	ts.local.mu.Unlock()
	if st := complete("joiner"); st != http.StatusOK {
		t.Fatalf("join/complete: %d", st)
	}
	rec := ts.store.Read().Controller("joiner")
	if rec == nil || rec.APIURL != "https://127.0.0.1:4443" || rec.ClusterAddr != "127.0.0.1:6262" || rec.Version != "v9.9.9" ||
		rec.CommandVersion != 9 || string(rec.JWK) != `{"kty":"EC"}` {
		t.Fatalf("the new member's record: %+v", rec)
	}

	ts.local.mu.Lock()
	ts.local.addVoter = func(string, string) error { return errors.New("no quorum") }
	ts.local.mu.Unlock()
	if st := complete("refused"); st == http.StatusOK {
		t.Fatal("join/complete answered 200 though the node was not added")
	}
	if rec := ts.store.Read().Controller("refused"); rec != nil {
		t.Fatalf("a node that was not added keeps its record: %+v", rec)
	}
}

// nodeCertificate is a node certificate (CN node:id) of ts's cluster, with
// the chain a joining node presents.
func nodeCertificate(t *testing.T, ts *testServer, id string) tls.Certificate {
	t.Helper()
	a, err := ts.api.Authority(ts.store.Read())
	if err != nil {
		t.Fatal(err)
	}
	key, err := pki.NewNodeKey()
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "node:" + id}}, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := a.SignCSR(time.Now(), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), "node:"+id, time.Hour, pki.UsageClientServer)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := pki.EncodeKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(append(leaf, a.ChainPEM()...), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
