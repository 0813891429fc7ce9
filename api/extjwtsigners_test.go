package api_test

import (
	"net/http"
	"testing"
)

// signerBody is a valid signer create body with a JWKS endpoint.
func signerBody(name, issuer string) map[string]any {
	return map[string]any{"name": name, "enabled": true, "issuer": issuer, "audience": "edge",
		"jwksEndpoint": issuer + "/.well-known/jwks.json"}
}

func TestExtJWTSigners_CreateGetListPatchPutDelete(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	body := signerBody("idp", "https://idp.example")
	body["externalAuthUrl"] = "https://idp.example/login"
	body["tags"] = map[string]any{"k": "v"}
	id := ts.create("/external-jwt-signers", body)
	got := ts.get("/external-jwt-signers/" + id)
	if got["name"] != "idp" || got["issuer"] != "https://idp.example" || got["audience"] != "edge" || got["enabled"] != true ||
		got["claimsProperty"] != "sub" || got["useExternalId"] != false || got["certPem"] != nil || got["fingerprint"] != nil ||
		got["jwksEndpoint"] != "https://idp.example/.well-known/jwks.json" || got["externalAuthUrl"] != "https://idp.example/login" {
		t.Fatalf("get: %v", got)
	}
	if _, total := ts.list(`/external-jwt-signers?filter=issuer%3D%22https://idp.example%22`); total != 1 {
		t.Fatalf("filter by issuer found %d", total)
	}

	// PATCH from JWKS to a certificate: the certificate's fields are derived.
	ca := newAuthnCA(t, "idp-signing")
	st, out := ts.do(http.MethodPatch, mgmt("/external-jwt-signers/"+id), map[string]any{"jwksEndpoint": nil, "certPem": ca.pem, "claimsProperty": "email"})
	if st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	got = ts.get("/external-jwt-signers/" + id)
	if got["commonName"] != "idp-signing" || got["fingerprint"] == nil || got["notAfter"] == nil || got["notBefore"] == nil ||
		got["jwksEndpoint"] != nil || got["claimsProperty"] != "email" || got["audience"] != "edge" {
		t.Fatalf("after patch: %v", got)
	}

	// PUT resets the optional fields; audience may be null but must be present.
	put := map[string]any{"name": "idp-2", "enabled": false, "issuer": "https://idp.example", "audience": nil, "jwksEndpoint": "https://idp.example/keys"}
	if st, out := ts.do(http.MethodPut, mgmt("/external-jwt-signers/"+id), put); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	got = ts.get("/external-jwt-signers/" + id)
	if got["name"] != "idp-2" || got["audience"] != nil || got["certPem"] != nil || got["commonName"] != nil ||
		got["claimsProperty"] != "sub" || got["externalAuthUrl"] != nil || len(got["tags"].(map[string]any)) != 0 {
		t.Fatalf("after put: %v", got)
	}
	delete(put, "audience")
	ts.fails(http.MethodPut, mgmt("/external-jwt-signers/"+id), put, 400, "COULD_NOT_VALIDATE", "audience")

	ts.mustDelete("/external-jwt-signers/" + id)
	ts.fails(http.MethodGet, mgmt("/external-jwt-signers/"+id), nil, 404, "NOT_FOUND", "")
	ts.fails(http.MethodPut, mgmt("/external-jwt-signers/"+id), put, 404, "NOT_FOUND", "")
}

func TestExtJWTSigners_EveryRuleRejectsABadValueAndStoresNothing(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ca := newAuthnCA(t, "signer")
	with := func(k string, v any) map[string]any { return withFields(signerBody("s", "https://s.example"), k, v) }
	both := with("certPem", ca.pem)
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"name missing", with("name", "<absent>"), "name"},
		{"enabled missing", with("enabled", "<absent>"), "enabled"},
		{"issuer missing", with("issuer", "<absent>"), "issuer"},
		{"audience absent", with("audience", "<absent>"), "audience"},
		{"audience empty", with("audience", ""), "audience"},
		{"neither key source", with("jwksEndpoint", "<absent>"), "certPem"},
		{"both key sources", both, "jwksEndpoint"},
		{"jwks over http", with("jwksEndpoint", "http://s.example/keys"), "jwksEndpoint"},
		{"jwks not a URL", with("jwksEndpoint", "keys"), "jwksEndpoint"},
		{"bad certPem", map[string]any{"name": "s", "enabled": true, "issuer": "i", "audience": nil, "certPem": "not pem"}, "certPem"},
		{"bad externalAuthUrl", with("externalAuthUrl", "ftp://x"), "externalAuthUrl"},
		{"useExternalId not bool", with("useExternalId", "yes"), "useExternalId"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt("/external-jwt-signers"), c.body)
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field) })
	}
	if n := ts.authnCount("/external-jwt-signers"); n != 0 {
		t.Fatalf("%d signers stored by bad creates", n)
	}

	// A PATCH that would leave two key sources is refused and changes nothing.
	id := ts.create("/external-jwt-signers", signerBody("s", "https://s.example"))
	ts.fails(http.MethodPatch, mgmt("/external-jwt-signers/"+id), map[string]any{"certPem": ca.pem}, 400, "COULD_NOT_VALIDATE", "jwksEndpoint")
	if got := ts.get("/external-jwt-signers/" + id); got["certPem"] != nil {
		t.Fatalf("rejected patch stored the certificate: %v", got)
	}
}

func TestExtJWTSigners_IssuerAndNameAreUnique(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/external-jwt-signers", signerBody("a", "https://a.example"))
	ts.fails(http.MethodPost, mgmt("/external-jwt-signers"), signerBody("b", "https://a.example"), 409, "CONFLICT", "issuer")
	ts.fails(http.MethodPost, mgmt("/external-jwt-signers"), signerBody("a", "https://other.example"), 409, "CONFLICT", "name")
	other := ts.create("/external-jwt-signers", signerBody("b", "https://b.example"))
	ts.fails(http.MethodPatch, mgmt("/external-jwt-signers/"+other), map[string]any{"issuer": "https://a.example"}, 409, "CONFLICT", "issuer")
	// Keeping its own issuer is not a conflict.
	if st, out := ts.do(http.MethodPatch, mgmt("/external-jwt-signers/"+id), map[string]any{"issuer": "https://a.example", "enabled": false}); st != 200 {
		t.Fatalf("patch own issuer: %d %v", st, out)
	}
}

func TestExtJWTSigners_ClientListIsPublicAndShowsOnlyTheLoginFields(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	body := signerBody("idp", "https://idp.example")
	body["externalAuthUrl"] = "https://idp.example/login"
	id := ts.create("/external-jwt-signers", body)
	st, out := ts.doAs("", http.MethodGet, "/edge/client/v1/external-jwt-signers", nil)
	if st != 200 {
		t.Fatalf("client list without a session: %d %v", st, out)
	}
	data := out["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("client list: %v", data)
	}
	v := data[0].(map[string]any)
	if v["id"] != id || v["name"] != "idp" || v["externalAuthUrl"] != "https://idp.example/login" {
		t.Fatalf("client view: %v", v)
	}
	for _, secret := range []string{"issuer", "audience", "jwksEndpoint", "claimsProperty", "kid"} {
		if _, ok := v[secret]; ok {
			t.Errorf("client view shows %s", secret)
		}
	}
	// Its filter knows only the fields it shows.
	st, out = ts.doAs("", http.MethodGet, `/edge/client/v1/external-jwt-signers?filter=issuer%3D%22https://idp.example%22`, nil)
	wantError(t, st, out, 400, "INVALID_FILTER", "")
	st, out = ts.doAs("", http.MethodGet, `/edge/client/v1/external-jwt-signers?filter=name%3D%22idp%22`, nil)
	if st != 200 || len(out["data"].([]any)) != 1 {
		t.Fatalf("client list filtered by name: %d %v", st, out)
	}
	// The Management list still needs an admin.
	st, out = ts.doAs("", http.MethodGet, mgmt("/external-jwt-signers"), nil)
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
}
