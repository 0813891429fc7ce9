package api_test

import (
	"net/http"
	"testing"
)

func TestEnrollCA_CreatesAnIdentityForACertificateOfAnAutoEnrollCA(t *testing.T) {
	t.Parallel()
	ts := newNodeServer(t)
	caID, ca := ts.authnVerifiedCA("auto-ca", false) // isAutoCaEnrollmentEnabled, identityRoles ["r"]
	before := ts.authnCount("/identities")

	st, out := ts.enrollPost("/enroll/ca", nil, nil)
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	stranger, _ := newAuthnCA(t, "stranger").leafTLS(t, "device-1")
	st, out = ts.enrollPost("/enroll/ca", stranger, nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
	good, leaf := ca.leafTLS(t, "device-1")
	st, out = ts.enrollPost("/enroll/ca", good, map[string]any{"name": 7})
	wantError(t, st, out, 400, "COULD_NOT_VALIDATE", "name")
	if n := ts.authnCount("/identities"); n != before {
		t.Fatalf("refused enrollments made %d identities", n-before)
	}

	st, out = ts.enrollPost("/enroll/ca", good, nil)
	if st != 200 {
		t.Fatalf("enroll: %d %v", st, out)
	}
	id := dig(out, "data", "id").(string)
	i := ts.get("/identities/" + id)
	roles, _ := i["roleAttributes"].([]any)
	if i["name"] != "auto-ca-device-1" || i["typeId"] != "Device" || len(roles) != 1 || roles[0] != "r" || i["authPolicyId"] != "default" {
		t.Fatalf("identity: %v", i)
	}
	if fp, _ := ts.enrollCertAuthenticator(id); fp != enrollFP(leaf) {
		t.Fatalf("fingerprint %q, want %q", fp, enrollFP(leaf))
	}
	// The same certificate again is a conflict and makes nothing.
	st, out = ts.enrollPost("/enroll/ca", good, nil)
	wantError(t, st, out, 409, "CONFLICT", "")
	if n := ts.authnCount("/identities"); n != before+1 {
		t.Fatalf("%d identities, want %d", n, before+1)
	}
	// Another certificate with the same CN gets a numbered name.
	again, _ := ca.leafTLS(t, "device-1")
	if st, out = ts.enrollPost("/enroll/ca", again, nil); st != 200 {
		t.Fatalf("second device: %d %v", st, out)
	}
	if name := ts.get("/identities/" + dig(out, "data", "id").(string))["name"]; name != "auto-ca-device-1000001" {
		t.Fatalf("second identity name %v", name)
	}

	// The name format's placeholders; requestedName comes from the body.
	if st, out := ts.do(http.MethodPatch, mgmt("/cas/"+caID), map[string]any{"identityNameFormat": "[requestedName]@[caName]/[caId]/[commonName]/[identityId]"}); st != 200 {
		t.Fatalf("patch CA: %d %v", st, out)
	}
	third, _ := ca.leafTLS(t, "device-3")
	if st, out = ts.enrollPost("/enroll/ca", third, map[string]any{"name": "kiosk"}); st != 200 {
		t.Fatalf("third device: %d %v", st, out)
	}
	id3 := dig(out, "data", "id").(string)
	if name := ts.get("/identities/" + id3)["name"]; name != "kiosk@auto-ca/"+caID+"/device-3/"+id3 {
		t.Fatalf("formatted name %v", name)
	}

	// A CA without auto enrollment does not enroll.
	if st, out := ts.do(http.MethodPatch, mgmt("/cas/"+caID), map[string]any{"isAutoCaEnrollmentEnabled": false}); st != 200 {
		t.Fatalf("patch CA: %d %v", st, out)
	}
	fourth, _ := ca.leafTLS(t, "device-4")
	st, out = ts.enrollPost("/enroll/ca", fourth, nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}
