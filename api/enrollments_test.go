package api_test

import (
	"net/http"
	"testing"
	"time"
)

func TestEnrollments_CreateGetListRefreshDelete(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ident := ts.authnIdentity("frank", nil)
	exp := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	id := ts.create("/enrollments", map[string]any{"identityId": ident, "method": "ott", "expiresAt": exp.Format(time.RFC3339),
		"tags": map[string]any{"k": "v"}})
	e := ts.get("/enrollments/" + id)
	if e["method"] != "ott" || e["identityId"] != ident || dig(e, "identity", "name") != "frank" || dig(e, "identity", "urlName") != "identities" ||
		e["ca"] != nil || e["caId"] != nil || e["username"] != nil || e["expiresAt"] != exp.Format(time.RFC3339Nano) ||
		!uuidRE.MatchString(e["token"].(string)) || dig(e, "tags", "k") != "v" {
		t.Fatalf("get: %v", e)
	}
	claims := authnClaims(t, e["jwt"].(string))
	if claims["sub"] != ident || claims["jti"] != e["token"] || claims["em"] != "ott" {
		t.Fatalf("jwt claims: %v", claims)
	}
	if data, _ := ts.list("/identities/" + ident + "/enrollments"); len(data) != 1 {
		t.Fatalf("identity enrollments: %v", data)
	}
	if _, total := ts.list(`/enrollments?filter=method%3D%22ott%22%20and%20identityId%3D%22` + ident + `%22`); total != 1 {
		t.Fatalf("filtered list found %d", total)
	}
	if idv := ts.get("/identities/" + ident); dig(idv, "enrollment", "ott", "id") != id {
		t.Fatalf("identity view does not show the enrollment: %v", idv["enrollment"])
	}

	later := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	st, out := ts.do(http.MethodPost, mgmt("/enrollments/"+id+"/refresh"), map[string]any{"expiresAt": later.Format(time.RFC3339)})
	if st != 200 || dig(out, "data", "id") != id {
		t.Fatalf("refresh: %d %v", st, out)
	}
	r := ts.get("/enrollments/" + id)
	if r["token"] == e["token"] || r["jwt"] == e["jwt"] || r["expiresAt"] != later.Format(time.RFC3339Nano) {
		t.Fatalf("refresh kept the old token or expiry: %v", r)
	}
	if _, total := ts.list(`/enrollments?filter=id%3D%22` + id + `%22`); total != 1 {
		t.Fatal("refresh made a second enrollment")
	}
	st, out = ts.do(http.MethodPost, mgmt("/enrollments/"+id+"/refresh"), map[string]any{"expiresAt": "2001-01-01T00:00:00Z"})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "expiresAt")
	st, out = ts.do(http.MethodPost, mgmt("/enrollments/nope/refresh"), map[string]any{"expiresAt": authnFuture()})
	wantError(t, st, out, 404, "NOT_FOUND", "")

	ts.mustDelete("/enrollments/" + id)
	st, out = ts.do(http.MethodGet, mgmt("/enrollments/"+id), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
	st, out = ts.do(http.MethodDelete, mgmt("/enrollments/"+id), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
	st, out = ts.do(http.MethodGet, mgmt("/identities/nope/enrollments"), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestEnrollments_CreateValidatesEveryFieldAndStoresNothing(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ident := ts.authnIdentity("gina", nil)
	unverified := ts.create("/cas", caBody("unverified", newAuthnCA(t, "u").pem))
	noOttca, _ := ts.authnVerifiedCA("no-ottca", false)
	body := func(kv ...any) map[string]any {
		return withFields(map[string]any{"identityId": ident, "method": "ott", "expiresAt": authnFuture()}, kv...)
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"identityId missing", body("identityId", "<absent>"), "identityId"},
		{"identity unknown", body("identityId", "nope"), "identityId"},
		{"method missing", body("method", "<absent>"), "method"},
		{"method unknown", body("method", "cert"), "method"},
		{"expiresAt missing", body("expiresAt", "<absent>"), "expiresAt"},
		{"expiresAt in the past", body("expiresAt", "2001-01-01T00:00:00Z"), "expiresAt"},
		{"expiresAt not a date", body("expiresAt", "tomorrow"), "expiresAt"},
		{"ottca without caId", body("method", "ottca"), "caId"},
		{"ottca with unknown CA", body("method", "ottca", "caId", "nope"), "caId"},
		{"ottca with unverified CA", body("method", "ottca", "caId", unverified), "caId"},
		{"ottca with CA that refuses ottca", body("method", "ottca", "caId", noOttca), "caId"},
		{"caId on ott", body("caId", noOttca), "caId"},
		{"updb without username", body("method", "updb"), "username"},
		{"updb with short username", body("method", "updb", "username", "abc"), "username"},
		{"username on ott", body("username", "gina"), "username"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt("/enrollments"), c.body)
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field) })
	}
	if n := ts.authnCount("/enrollments"); n != 0 {
		t.Fatalf("%d enrollments stored by bad creates", n)
	}
	// Identity create with an ottca enrollment names the same rules.
	st, out := ts.do(http.MethodPost, mgmt("/identities"), map[string]any{"name": "x", "type": "User", "isAdmin": false,
		"enrollment": map[string]any{"ottca": unverified}})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "enrollment.ottca")
}

func TestEnrollments_OneOutstandingPerCredentialAndNoneBesideAnAuthenticator(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	caID, _ := ts.authnVerifiedCA("corp", true)
	ident := ts.authnIdentity("hank", nil)
	ott := ts.create("/enrollments", map[string]any{"identityId": ident, "method": "ott", "expiresAt": authnFuture()})
	for _, b := range []map[string]any{
		{"identityId": ident, "method": "ott", "expiresAt": authnFuture()},
		{"identityId": ident, "method": "ottca", "caId": caID, "expiresAt": authnFuture()},
	} {
		st, out := ts.do(http.MethodPost, mgmt("/enrollments"), b)
		wantError(t, st, out, 409, "CONFLICT", "method")
	}
	ts.create("/enrollments", map[string]any{"identityId": ident, "method": "updb", "username": "hank", "expiresAt": authnFuture()})
	// The username is reserved by the enrollment.
	other := ts.authnIdentity("ivan", nil)
	st, out := ts.do(http.MethodPost, mgmt("/enrollments"), map[string]any{"identityId": other, "method": "updb", "username": "hank", "expiresAt": authnFuture()})
	wantError(t, st, out, 409, "CONFLICT", "username")
	st, out = ts.do(http.MethodPost, mgmt("/authenticators"), map[string]any{"identityId": other, "method": "updb", "username": "hank", "password": "password1"})
	wantError(t, st, out, 409, "CONFLICT", "username")

	// An identity with an authenticator of the method cannot get an enrollment for it.
	ts.create("/authenticators", map[string]any{"identityId": other, "method": "updb", "username": "ivan", "password": "password1"})
	st, out = ts.do(http.MethodPost, mgmt("/enrollments"), map[string]any{"identityId": other, "method": "updb", "username": "ivan2", "expiresAt": authnFuture()})
	wantError(t, st, out, 409, "CONFLICT", "method")
	judy := ts.authnIdentity("judy", nil)
	st, out = ts.do(http.MethodPost, mgmt("/enrollments"), map[string]any{"identityId": judy, "method": "updb", "username": "ivan", "expiresAt": authnFuture()})
	wantError(t, st, out, 409, "CONFLICT", "username")

	// Deleting the outstanding ott enrollment makes room for an ottca one.
	ts.do(http.MethodDelete, mgmt("/enrollments/"+ott), nil)
	e := ts.get("/enrollments/" + ts.create("/enrollments", map[string]any{"identityId": ident, "method": "ottca", "caId": caID, "expiresAt": authnFuture()}))
	if e["caId"] != caID || dig(e, "ca", "id") != caID || dig(e, "ca", "name") != "corp" || authnClaims(t, e["jwt"].(string))["em"] != "ottca" {
		t.Fatalf("ottca enrollment: %v", e)
	}
	if n := ts.authnCount("/identities/" + ident + "/enrollments"); n != 2 {
		t.Fatalf("hank has %d enrollments, want 2", n)
	}
}
