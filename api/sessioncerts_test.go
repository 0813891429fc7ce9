package api_test

import (
	"net/http"
	"testing"
	"time"
)

func TestSessionCerts_CreateListGetDeleteAndGoneWithTheSession(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ident, c := ts.newClientIdentity("eph")
	summary := func() float64 { return ts.get("/summary")["apiSessionCertificates"].(float64) }

	st, out := c.do(http.MethodPost, "/current-api-session/certificates", map[string]any{})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "csr")
	st, out = c.do(http.MethodPost, "/current-api-session/certificates", map[string]any{"csr": "junk"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "csr")
	st, out = ts.doAs("", http.MethodPost, clientPath("/current-api-session/certificates"), map[string]any{"csr": enrollCSR(t, enrollKey(t), "x", nil, nil)})
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	if n := summary(); n != 0 {
		t.Fatalf("refused creates stored %v certificates", n)
	}

	st, out = c.do(http.MethodPost, "/current-api-session/certificates", map[string]any{"csr": enrollCSR(t, enrollKey(t), "x", nil, nil)})
	if st != 201 {
		t.Fatalf("create: %d %v", st, out)
	}
	d := out["data"].(map[string]any)
	id := d["id"].(string)
	leaf := enrollChain(t, d["certificate"].(string))[0]
	if len(enrollChain(t, d["cas"].(string))) != 2 || leaf.Subject.CommonName != ident ||
		dig(d, "_links", "self", "href") != "./current-api-session/certificates/"+id {
		t.Fatalf("create answer: %v", d)
	}
	// The certificate names its session, as routers read it (a SPIFFE ID).
	st, cur := c.do(http.MethodGet, "/current-api-session", nil)
	if st != 200 || len(leaf.URIs) != 1 || leaf.URIs[0].Scheme != "spiffe" ||
		leaf.URIs[0].Path != "/identity/"+ident+"/apiSession/"+dig(cur, "data", "id").(string)+"/apiSessionCertificate/"+id {
		t.Fatalf("the certificate's URIs are %v", leaf.URIs)
	}
	if life := leaf.NotAfter.Sub(time.Now()); life < 11*time.Hour || life > 13*time.Hour {
		t.Fatalf("validity ends in %v, want about 12 h", life)
	}

	st, out = c.do(http.MethodGet, "/current-api-session/certificates/"+id, nil)
	g, _ := out["data"].(map[string]any)
	if st != 200 || g["fingerprint"] != enrollFP(leaf) || g["subject"] != "CN="+ident || g["validTo"] == nil || g["validFrom"] == nil || g["certificate"] == nil {
		t.Fatalf("get: %d %v", st, out)
	}
	st, out = c.do(http.MethodGet, "/current-api-session/certificates?filter=fingerprint%3D%22"+enrollFP(leaf)+"%22", nil)
	if st != 200 || len(out["data"].([]any)) != 1 || dig(out, "meta", "pagination", "totalCount") != 1.0 {
		t.Fatalf("list: %d %v", st, out)
	}

	// Another API session of the same identity sees none of them.
	other := ts.login("eph-user", "Password-123!")
	st, out = ts.doAs(other, http.MethodGet, clientPath("/current-api-session/certificates"), nil)
	if st != 200 || len(out["data"].([]any)) != 0 {
		t.Fatalf("other session list: %d %v", st, out)
	}
	st, out = ts.doAs(other, http.MethodGet, clientPath("/current-api-session/certificates/"+id), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
	st, out = ts.doAs(other, http.MethodDelete, clientPath("/current-api-session/certificates/"+id), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")

	if st, out = c.do(http.MethodDelete, "/current-api-session/certificates/"+id, nil); st != 200 {
		t.Fatalf("delete: %d %v", st, out)
	}
	st, out = c.do(http.MethodGet, "/current-api-session/certificates/"+id, nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")

	// Logging out removes the session's certificates.
	for i := 0; i < 2; i++ {
		if st, out := c.do(http.MethodPost, "/current-api-session/certificates", map[string]any{"csr": enrollCSR(t, enrollKey(t), "x", nil, nil)}); st != 201 {
			t.Fatalf("create: %d %v", st, out)
		}
	}
	if n := summary(); n != 2 {
		t.Fatalf("%v certificates, want 2", n)
	}
	if st, out := c.do(http.MethodDelete, "/current-api-session", nil); st != 200 {
		t.Fatalf("logout: %d %v", st, out)
	}
	if n := summary(); n != 0 {
		t.Fatalf("%v certificates left after the API session ended", n)
	}
}
