package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"edgectl/fsm"
	"edgectl/store"

	"github.com/golang-jwt/jwt/v5"
)

// Details of the spec for identities, authenticators, auth policies and enrollments.
func TestAuthnResources_SpecDetails(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)

	// Spec, Auth policy: "PATCH: all optional (name nullable, secondary nullable)".
	// A null name is accepted and leaves the name as it is.
	t.Run("AuthPolicyPatchNullName", func(t *testing.T) {
		id := ts.create("/auth-policies", authPolicyBody("nullable-name"))
		st, out := ts.do(http.MethodPatch, mgmt("/auth-policies/"+id), map[string]any{"name": nil, "tags": map[string]any{"k": "v"}})
		if st != http.StatusOK {
			t.Fatalf("patch name null: %d %v", st, out)
		}
		got := ts.get("/auth-policies/" + id)
		if got["name"] != "nullable-name" || dig(got, "tags", "k") != "v" {
			t.Fatalf("after patch: %v", got)
		}
		// PUT still requires a name.
		body := authPolicyBody("x")
		body["name"] = nil
		st, out = ts.do(http.MethodPut, mgmt("/auth-policies/"+id), body)
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "name")
	})

	// Protected bootstrap records: the spec's statuses for these operations are
	// 400/401/404 (403 only for API session and posture check deletes), and
	// OpenZiti answers 400 (ENTITY_CAN_NOT_BE_DELETED) here: 400 naming the field.
	t.Run("DefaultRecordsAreBadRequestsNotForbidden", func(t *testing.T) {
		data, _ := ts.list("/identities?filter=isDefaultAdmin%3Dtrue")
		adminID := data[0].(map[string]any)["id"].(string)
		st, out := ts.do(http.MethodDelete, mgmt("/identities/"+adminID), nil)
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "id")
		st, out = ts.do(http.MethodPatch, mgmt("/identities/"+adminID), map[string]any{"isAdmin": false})
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "isAdmin")
		st, out = ts.do(http.MethodPost, mgmt("/identities/"+adminID+"/disable"), map[string]any{"durationMinutes": 5})
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "id")
		st, out = ts.do(http.MethodDelete, mgmt("/auth-policies/default"), nil)
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "id")
		auths, _ := ts.list("/identities/" + adminID + "/authenticators")
		st, out = ts.do(http.MethodDelete, mgmt("/authenticators/"+auths[0].(map[string]any)["id"].(string)), nil)
		wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "id")
		if got := ts.get("/identities/" + adminID); got["isAdmin"] != true || got["disabled"] != false {
			t.Fatalf("default admin changed: %v", got)
		}
	})

	// An identity created with enrollment.updb reserves its username like
	// POST /enrollments does: a username already used by an authenticator or
	// reserved by another updb enrollment is 409, and nothing is stored.
	t.Run("IdentityCreateUpdbUsernameUnique", func(t *testing.T) {
		ts.create("/identities", map[string]any{"name": "rv-a", "type": "User", "isAdmin": false,
			"enrollment": map[string]any{"updb": "rv-user"}})
		st, out := ts.do(http.MethodPost, mgmt("/identities"), map[string]any{"name": "rv-b", "type": "User", "isAdmin": false,
			"enrollment": map[string]any{"updb": "rv-user"}})
		wantError(t, st, out, http.StatusConflict, "CONFLICT", "enrollment.updb")
		st, out = ts.do(http.MethodPost, mgmt("/identities"), map[string]any{"name": "rv-c", "type": "User", "isAdmin": false,
			"enrollment": map[string]any{"updb": "admin"}})
		wantError(t, st, out, http.StatusConflict, "CONFLICT", "enrollment.updb")
		if data, total := ts.list(`/identities?filter=name%20in%20%5B%22rv-b%22%2C%22rv-c%22%5D`); total != 0 {
			t.Fatalf("refused identities were stored: %v", data)
		}
	})

	// Spec, Identity: enrollment.ottca is {ca EntityRef, caId, expiresAt, id, jwt, token},
	// in the single view and in the list alike.
	t.Run("IdentityOttcaEnrollmentHasCARef", func(t *testing.T) {
		caID, _ := ts.authnVerifiedCA("rv-ca", true)
		id := ts.create("/identities", map[string]any{"name": "rv-ottca", "type": "User", "isAdmin": false,
			"enrollment": map[string]any{"ottca": caID}})
		data, _ := ts.list(`/identities?filter=name%3D%22rv-ottca%22`)
		for _, v := range []any{ts.get("/identities/" + id), data[0]} {
			e := dig(v, "enrollment", "ottca")
			if dig(e, "caId") != caID || dig(e, "ca", "id") != caID || dig(e, "ca", "name") != "rv-ca" ||
				dig(e, "ca", "entity") != "cas" || dig(e, "ca", "_links", "self", "href") != "./cas/"+caID {
				t.Fatalf("ottca enrollment: %v", e)
			}
		}
	})
}

// Spec, States and transitions: "If secondary factors are required,
// authQueries lists them" (secondary factors: TOTP and JWT). A session whose
// auth policy requires a secondary JWT that the authenticate request did not
// carry lists an EXT-JWT auth query; with the JWT, none.
func TestAuthnResources_SecondaryJWTIsListedAsAnAuthQuery(t *testing.T) {
	t.Parallel()
	const iss = "https://second-review.test"
	ts, clock, key, id := secondaryJWTServer(t, "review", iss, map[string]any{"externalAuthUrl": "https://idp.example/login"})

	_, data := ts.okSession(ts.passwordLogin("two-factor-review", "right-password"))
	qs, _ := data["authQueries"].([]any)
	if len(qs) != 1 || dig(qs[0], "typeId") != "EXT-JWT" || dig(qs[0], "provider") != "url" ||
		dig(qs[0], "httpUrl") != "https://idp.example/login" {
		t.Fatalf("authQueries without the JWT: %v", data["authQueries"])
	}

	bearer := "Bearer " + signJWT(t, jwt.SigningMethodES256, key, "k",
		jwt.MapClaims{"iss": iss, "sub": id, "exp": clock.Now().Add(time.Minute).Unix()})
	_, data = ts.okSession(ts.send(req{method: http.MethodPost, path: clientPath("/authenticate?method=password"),
		body: map[string]any{"username": "two-factor-review", "password": "right-password"}, header: map[string]string{"Authorization": bearer}}))
	if qs, _ := data["authQueries"].([]any); len(qs) != 0 {
		t.Fatalf("authQueries with the JWT: %v", data["authQueries"])
	}
}

// Conventions §10: enrollment JWTs carry ctrls, the API URLs of every node.
func TestAuthnResources_EnrollmentJWTListsEveryController(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	other := &store.Controller{Base: store.Base{ID: "node-other", CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()},
		Named: store.Named{Name: "node-other"}, APIURL: "https://other.example:1280", ClusterAddr: "other.example:6262"}
	if _, err := ts.writer.Do(context.Background(), fsm.CmdControllerRegister, other); err != nil {
		t.Fatal(err)
	}
	id := ts.create("/identities", map[string]any{"name": "rv-ctrls", "type": "User", "isAdmin": false,
		"enrollment": map[string]any{"ott": true}})
	tok, _ := dig(ts.get("/identities/"+id), "enrollment", "ott", "jwt").(string)
	ctrls, _ := authnClaims(t, tok)["ctrls"].([]any)
	if len(ctrls) != 2 || ctrls[0] != ts.base || ctrls[1] != "https://other.example:1280" {
		t.Fatalf("ctrls %v, want [%s https://other.example:1280]", ctrls, ts.base)
	}
}
