package api_test

import (
	"net/http"
	"testing"
)

// authPolicyBody is a complete, valid auth policy create / PUT body.
func authPolicyBody(name string) map[string]any {
	return map[string]any{
		"name": name,
		"primary": map[string]any{
			"cert":   map[string]any{"allowed": true, "allowExpiredCerts": false},
			"extJwt": map[string]any{"allowed": false, "allowedSigners": []string{}},
			"updb": map[string]any{"allowed": true, "lockoutDurationMinutes": 5, "maxAttempts": 3, "minPasswordLength": 8,
				"requireMixedCase": true, "requireNumberChar": true, "requireSpecialChar": false},
		},
		"secondary": map[string]any{"requireExtJwtSigner": nil, "requireTotp": false},
		"tags":      map[string]any{"team": "sec"},
	}
}

// dig walks nested maps of a decoded JSON value.
func dig(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func TestAuthPolicies_CreateGetListPatchPutDelete(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	id := ts.create("/auth-policies", authPolicyBody("strict"))
	got := ts.get("/auth-policies/" + id)
	if got["name"] != "strict" || dig(got, "primary", "updb", "minPasswordLength") != 8.0 ||
		dig(got, "primary", "cert", "allowed") != true || dig(got, "secondary", "requireTotp") != false ||
		dig(got, "tags", "team") != "sec" || dig(got, "_links", "self", "href") != "./auth-policies/"+id {
		t.Fatalf("get: %v", got)
	}
	data, total := ts.list(`/auth-policies?filter=name%3D%22strict%22`)
	if total != 1 || len(data) != 1 {
		t.Fatalf("list: %d %v", total, data)
	}

	// PATCH merges nested objects field by field.
	st, out := ts.do(http.MethodPatch, mgmt("/auth-policies/"+id), map[string]any{
		"primary": map[string]any{"updb": map[string]any{"maxAttempts": 9}}, "secondary": map[string]any{"requireTotp": true}})
	if st != http.StatusOK {
		t.Fatalf("patch: %d %v", st, out)
	}
	got = ts.get("/auth-policies/" + id)
	if dig(got, "primary", "updb", "maxAttempts") != 9.0 || dig(got, "primary", "updb", "minPasswordLength") != 8.0 ||
		dig(got, "primary", "updb", "requireMixedCase") != true || dig(got, "primary", "cert", "allowed") != true ||
		dig(got, "secondary", "requireTotp") != true || got["name"] != "strict" {
		t.Fatalf("after patch: %v", got)
	}

	// PATCH secondary null resets it to "no secondary factor".
	if st, out := ts.do(http.MethodPatch, mgmt("/auth-policies/"+id), map[string]any{"secondary": nil}); st != http.StatusOK {
		t.Fatalf("patch secondary null: %d %v", st, out)
	}
	if got = ts.get("/auth-policies/" + id); dig(got, "secondary", "requireTotp") != false {
		t.Fatalf("secondary not reset: %v", got)
	}

	// PUT replaces everything; tags go back to empty.
	body := authPolicyBody("strict-2")
	delete(body, "tags")
	dig(body, "primary", "cert").(map[string]any)["allowed"] = false
	if st, out := ts.do(http.MethodPut, mgmt("/auth-policies/"+id), body); st != http.StatusOK {
		t.Fatalf("put: %d %v", st, out)
	}
	got = ts.get("/auth-policies/" + id)
	if got["name"] != "strict-2" || dig(got, "primary", "cert", "allowed") != false || dig(got, "primary", "updb", "maxAttempts") != 3.0 ||
		len(got["tags"].(map[string]any)) != 0 {
		t.Fatalf("after put: %v", got)
	}
	ts.fails(http.MethodPut, mgmt("/auth-policies/"+id), map[string]any{"name": "x"}, 400, "COULD_NOT_VALIDATE", "primary")

	if st, out := ts.do(http.MethodDelete, mgmt("/auth-policies/"+id), nil); st != http.StatusOK {
		t.Fatalf("delete: %d %v", st, out)
	}
	ts.fails(http.MethodGet, mgmt("/auth-policies/"+id), nil, 404, "NOT_FOUND", "")
	ts.fails(http.MethodPatch, mgmt("/auth-policies/"+id), map[string]any{"name": "y"}, 404, "NOT_FOUND", "")
	ts.fails(http.MethodDelete, mgmt("/auth-policies/"+id), nil, 404, "NOT_FOUND", "")
}

func TestAuthPolicies_EveryRuleNamesTheNestedFieldAndStoresNothing(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	before := ts.authnCount("/auth-policies")
	with := func(path []string, v any) map[string]any {
		b := authPolicyBody("p")
		m := b
		for _, p := range path[:len(path)-1] {
			m = m[p].(map[string]any)
		}
		if v == "<absent>" {
			delete(m, path[len(path)-1])
		} else {
			m[path[len(path)-1]] = v
		}
		return b
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"name missing", with([]string{"name"}, "<absent>"), "name"},
		{"primary missing", with([]string{"primary"}, "<absent>"), "primary"},
		{"primary not an object", with([]string{"primary"}, "yes"), "primary"},
		{"cert missing", with([]string{"primary", "cert"}, "<absent>"), "primary.cert"},
		{"cert.allowed missing", with([]string{"primary", "cert", "allowed"}, "<absent>"), "primary.cert.allowed"},
		{"cert.allowExpiredCerts not bool", with([]string{"primary", "cert", "allowExpiredCerts"}, "no"), "primary.cert.allowExpiredCerts"},
		{"maxAttempts negative", with([]string{"primary", "updb", "maxAttempts"}, -1), "primary.updb.maxAttempts"},
		{"lockout negative", with([]string{"primary", "updb", "lockoutDurationMinutes"}, -5), "primary.updb.lockoutDurationMinutes"},
		{"lockout fraction", with([]string{"primary", "updb", "lockoutDurationMinutes"}, 1.5), "primary.updb.lockoutDurationMinutes"},
		{"minPasswordLength 4", with([]string{"primary", "updb", "minPasswordLength"}, 4), "primary.updb.minPasswordLength"},
		{"minPasswordLength 101", with([]string{"primary", "updb", "minPasswordLength"}, 101), "primary.updb.minPasswordLength"},
		{"requireSpecialChar missing", with([]string{"primary", "updb", "requireSpecialChar"}, "<absent>"), "primary.updb.requireSpecialChar"},
		{"unknown allowed signer", with([]string{"primary", "extJwt", "allowedSigners"}, []string{"nope"}), "primary.extJwt.allowedSigners[0]"},
		{"empty allowed signer", with([]string{"primary", "extJwt", "allowedSigners"}, []string{""}), "primary.extJwt.allowedSigners[0]"},
		{"unknown required signer", with([]string{"secondary", "requireExtJwtSigner"}, "nope"), "secondary.requireExtJwtSigner"},
		{"requireTotp missing", with([]string{"secondary", "requireTotp"}, "<absent>"), "secondary.requireTotp"},
		{"bad tag", with([]string{"tags"}, map[string]any{"a": []int{1}}), "tags.a"},
	}
	for _, c := range cases {
		st, out := ts.do(http.MethodPost, mgmt("/auth-policies"), c.body)
		t.Run(c.name, func(t *testing.T) { wantError(t, st, out, 400, "COULD_NOT_VALIDATE", c.field) })
	}
	// PATCH checks nested values the same way and changes nothing on error.
	ts.fails(http.MethodPatch, mgmt("/auth-policies/default"), map[string]any{"primary": map[string]any{"updb": map[string]any{"maxAttempts": -2}}}, 400, "COULD_NOT_VALIDATE", "primary.updb.maxAttempts")
	ts.fails(http.MethodPatch, mgmt("/auth-policies/default"), map[string]any{"primary": nil}, 400, "COULD_NOT_VALIDATE", "primary")
	if after := ts.authnCount("/auth-policies"); after != before {
		t.Fatalf("auth policies %d after bad creates, want %d", after, before)
	}
	if got := ts.get("/auth-policies/default"); dig(got, "primary", "updb", "maxAttempts") != 0.0 {
		t.Fatalf("a rejected patch changed the default policy: %v", got)
	}
}

func TestAuthPolicies_DefaultIsUpdatableNotDeletableAndAPolicyInUseIsReferenced(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	if st, out := ts.do(http.MethodPatch, mgmt("/auth-policies/default"), map[string]any{"primary": map[string]any{"updb": map[string]any{"maxAttempts": 4}}}); st != 200 {
		t.Fatalf("patch default: %d %v", st, out)
	}
	if got := ts.get("/auth-policies/default"); dig(got, "primary", "updb", "maxAttempts") != 4.0 || got["name"] != "Default" {
		t.Fatalf("default after patch: %v", got)
	}
	ts.fails(http.MethodDelete, mgmt("/auth-policies/default"), nil, 400, "COULD_NOT_VALIDATE", "id")

	id := ts.create("/auth-policies", authPolicyBody("used"))
	ts.fails(http.MethodPost, mgmt("/auth-policies"), authPolicyBody("used"), 409, "CONFLICT", "name")
	ident := ts.authnIdentity("user-of-policy", map[string]any{"authPolicyId": id})
	ts.fails(http.MethodDelete, mgmt("/auth-policies/"+id), nil, 409, "REFERENCED", "")
	ts.mustDelete("/identities/" + ident)
	ts.mustDelete("/auth-policies/" + id)
}

func TestAuthPolicies_SignerReferencesMustExistAndPinTheSigner(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	signer := ts.create("/external-jwt-signers", signerBody("idp", "https://idp.example"))
	other := ts.create("/external-jwt-signers", signerBody("idp2", "https://idp2.example"))
	body := authPolicyBody("jwt")
	dig(body, "primary", "extJwt").(map[string]any)["allowedSigners"] = []string{signer}
	id := ts.create("/auth-policies", body)
	if st, out := ts.do(http.MethodPatch, mgmt("/auth-policies/"+id), map[string]any{"secondary": map[string]any{"requireExtJwtSigner": other}}); st != 200 {
		t.Fatalf("patch: %d %v", st, out)
	}
	got := ts.get("/auth-policies/" + id)
	if dig(got, "secondary", "requireExtJwtSigner") != other || len(dig(got, "primary", "extJwt", "allowedSigners").([]any)) != 1 {
		t.Fatalf("signers: %v", got)
	}
	for _, s := range []string{signer, other} {
		ts.fails(http.MethodDelete, mgmt("/external-jwt-signers/"+s), nil, 409, "REFERENCED", "")
	}
	ts.fails(http.MethodPatch, mgmt("/auth-policies/"+id), map[string]any{"secondary": map[string]any{"requireExtJwtSigner": "gone"}}, 400, "COULD_NOT_VALIDATE", "secondary.requireExtJwtSigner")
	if st, out := ts.do(http.MethodPatch, mgmt("/auth-policies/"+id), map[string]any{"secondary": map[string]any{"requireExtJwtSigner": nil}}); st != 200 {
		t.Fatalf("clear required signer: %d %v", st, out)
	}
	ts.mustDelete("/external-jwt-signers/" + other)
}
