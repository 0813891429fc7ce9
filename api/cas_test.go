package api_test

import (
	"net/http"
	"regexp"
	"testing"
)

func caBody(name, certPem string) map[string]any {
	return map[string]any{"name": name, "certPem": certPem, "identityRoles": []string{"from-ca"},
		"isAuthEnabled": true, "isAutoCaEnrollmentEnabled": false, "isOttCaEnrollmentEnabled": true}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestCAs_VerificationFlowWithARealCertificateAndTheCAJWT(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ca := newAuthnCA(t, "Corp Root")
	id := ts.create("/cas", caBody("corp", ca.pem))
	got := ts.get("/cas/" + id)
	token, _ := got["verificationToken"].(string)
	if got["isVerified"] != false || !uuidRE.MatchString(token) || got["fingerprint"] == "" ||
		got["identityNameFormat"] != "[caName]-[commonName]" || got["externalIdClaim"] != nil {
		t.Fatalf("new CA: %v", got)
	}
	path := mgmt("/cas/" + id + "/verify")

	st, out := ts.authnPostPEM(path, ca.leaf(t, "not-the-token"))
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "body")
	other := newAuthnCA(t, "Somebody Else")
	st, out = ts.authnPostPEM(path, other.leaf(t, token))
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "body")
	st, out = ts.authnPostPEM(path, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
	wantError(t, st, out, 400, "COULD_NOT_PARSE_BODY", "")
	st, out = ts.authnPostPEM(path, "")
	wantError(t, st, out, 400, "COULD_NOT_PARSE_BODY", "")
	if ts.get("/cas/" + id)["isVerified"] != false {
		t.Fatal("a failed proof verified the CA")
	}

	if st, out := ts.authnPostPEM(path, ca.leaf(t, token)); st != 200 {
		t.Fatalf("verify with a good proof: %d %v", st, out)
	}
	if ts.get("/cas/" + id)["isVerified"] != true {
		t.Fatal("CA not verified after a good proof")
	}
	st, out = ts.authnPostPEM(path, ca.leaf(t, token))
	wantError(t, st, out, 409, "CONFLICT", "isVerified")
	st, out = ts.authnPostPEM(mgmt("/cas/nope/verify"), ca.leaf(t, token))
	wantError(t, st, out, 404, "NOT_FOUND", "")

	// The CA's enrollment JWT, for auto CA enrollment, is plain application/jwt.
	st, ctype, body := ts.authnRaw(http.MethodGet, mgmt("/cas/"+id+"/jwt"), "", "")
	if st != 200 || ctype != "application/jwt" {
		t.Fatalf("jwt: %d %s %s", st, ctype, body)
	}
	claims := authnClaims(t, string(body))
	if claims["sub"] != id || claims["em"] != "ca" || claims["exp"] == nil || claims["iss"] == nil {
		t.Fatalf("claims: %v", claims)
	}
	if st, _, _ = ts.authnRaw(http.MethodGet, mgmt("/cas/nope/jwt"), "", ""); st != 404 {
		t.Fatalf("unknown CA jwt: %d", st)
	}
}

func TestCAs_CreateValidatesEveryFieldAndStoresNothing(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ca := newAuthnCA(t, "root")
	with := func(k string, v any) map[string]any { return withFields(caBody("c", ca.pem), k, v) }
	claim := func(kv ...any) map[string]any {
		c := map[string]any{"location": "COMMON_NAME", "matcher": "ALL", "parser": "NONE"}
		for i := 0; i < len(kv); i += 2 {
			c[kv[i].(string)] = kv[i+1]
		}
		return c
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"certPem missing", with("certPem", "<absent>"), "certPem"},
		{"certPem not PEM", with("certPem", "hello"), "certPem"},
		{"certPem not a CA", with("certPem", ca.leaf(t, "leaf")), "certPem"},
		{"name missing", with("name", "<absent>"), "name"},
		{"identityRoles missing", with("identityRoles", "<absent>"), "identityRoles"},
		{"identityRoles not strings", with("identityRoles", []any{1}), "identityRoles"},
		{"isAuthEnabled missing", with("isAuthEnabled", "<absent>"), "isAuthEnabled"},
		{"isAutoCaEnrollmentEnabled missing", with("isAutoCaEnrollmentEnabled", "<absent>"), "isAutoCaEnrollmentEnabled"},
		{"isOttCaEnrollmentEnabled missing", with("isOttCaEnrollmentEnabled", "<absent>"), "isOttCaEnrollmentEnabled"},
		{"claim not an object", with("externalIdClaim", 3), "externalIdClaim"},
		{"claim bad location", with("externalIdClaim", claim("location", "SUBJECT")), "externalIdClaim.location"},
		{"claim bad matcher", with("externalIdClaim", claim("matcher", "REGEX")), "externalIdClaim.matcher"},
		{"claim bad parser", with("externalIdClaim", claim("parser", "JSON")), "externalIdClaim.parser"},
		{"claim negative index", with("externalIdClaim", claim("index", -1)), "externalIdClaim.index"},
		{"claim prefix without criteria", with("externalIdClaim", claim("matcher", "PREFIX")), "externalIdClaim.matcherCriteria"},
		{"claim split without criteria", with("externalIdClaim", claim("parser", "SPLIT")), "externalIdClaim.parserCriteria"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt("/cas"), c.body)
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field) })
	}
	if n := ts.authnCount("/cas"); n != 0 {
		t.Fatalf("%d CAs stored by bad creates", n)
	}
	body := with("externalIdClaim", claim("location", "SAN_URI", "matcher", "SCHEME", "matcherCriteria", "spiffe", "index", 1))
	id := ts.create("/cas", body)
	if got := ts.get("/cas/" + id); dig(got, "externalIdClaim", "location") != "SAN_URI" || dig(got, "externalIdClaim", "index") != 1.0 {
		t.Fatalf("claim: %v", got)
	}
	st, out := ts.do(http.MethodPost, mgmt("/cas"), caBody("c2", ca.pem))
	wantError(t, st, out, 409, "CONFLICT", "certPem")
	st, out = ts.do(http.MethodPost, mgmt("/cas"), caBody("c", newAuthnCA(t, "other").pem))
	wantError(t, st, out, 409, "CONFLICT", "name")
}

func TestCAs_PutPatchKeepTheCertificateAndVerification(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id, ca := ts.authnVerifiedCA("corp", true)
	before := ts.get("/cas/" + id)
	put := map[string]any{"name": "corp-2", "identityRoles": []string{"a", "b"}, "isAuthEnabled": false,
		"isAutoCaEnrollmentEnabled": true, "isOttCaEnrollmentEnabled": false, "identityNameFormat": "[commonName]",
		"certPem": newAuthnCA(t, "ignored").pem}
	st, out := ts.do(http.MethodPut, mgmt("/cas/"+id), map[string]any{"name": "corp-2", "identityRoles": []string{},
		"isAuthEnabled": false, "isAutoCaEnrollmentEnabled": true, "isOttCaEnrollmentEnabled": false})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "identityNameFormat")
	if st, out := ts.do(http.MethodPut, mgmt("/cas/"+id), put); st != 200 {
		t.Fatalf("put: %d %v", st, out)
	}
	got := ts.get("/cas/" + id)
	if got["name"] != "corp-2" || got["isAuthEnabled"] != false || got["identityNameFormat"] != "[commonName]" ||
		len(got["identityRoles"].([]any)) != 2 || got["certPem"] != ca.pem || got["fingerprint"] != before["fingerprint"] ||
		got["isVerified"] != true || got["verificationToken"] != before["verificationToken"] {
		t.Fatalf("after put: %v", got)
	}
	if st, out := ts.do(http.MethodPatch, mgmt("/cas/"+id), map[string]any{"isAuthEnabled": true}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	if got = ts.get("/cas/" + id); got["isAuthEnabled"] != true || got["name"] != "corp-2" {
		t.Fatalf("after patch: %v", got)
	}
	if _, total := ts.list(`/cas?filter=isVerified%3Dtrue%20and%20name%3D%22corp-2%22`); total != 1 {
		t.Fatalf("filter found %d", total)
	}
	st, out = ts.do(http.MethodPatch, mgmt("/cas/nope"), map[string]any{"isAuthEnabled": true})
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestCAs_DeleteRemovesItsOttcaEnrollmentsAndTheCertAuthenticatorsItIssued(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id, ca := ts.authnVerifiedCA("corp", true)
	enrolling := ts.authnIdentity("enrolling", map[string]any{"enrollment": map[string]any{"ottca": id}})
	holder := ts.authnIdentity("holder", nil)
	issued := ts.create("/authenticators", map[string]any{"identityId": holder, "method": "cert", "certPem": ca.leaf(t, "holder")})
	stranger := ts.authnIdentity("stranger", nil)
	foreign := ts.create("/authenticators", map[string]any{"identityId": stranger, "method": "cert", "certPem": newAuthnCA(t, "x").leaf(t, "s")})
	if data, _ := ts.list("/identities/" + enrolling + "/enrollments"); len(data) != 1 || data[0].(map[string]any)["caId"] != id {
		t.Fatalf("ottca enrollment from identity create: %v", data)
	}
	ts.mustDelete("/cas/" + id)
	if data, _ := ts.list("/identities/" + enrolling + "/enrollments"); len(data) != 0 {
		t.Fatalf("ottca enrollment survived its CA: %v", data)
	}
	st, out := ts.do(http.MethodGet, mgmt("/authenticators/"+issued), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
	ts.get("/authenticators/" + foreign)
	st, out = ts.do(http.MethodDelete, mgmt("/cas/"+id), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}
