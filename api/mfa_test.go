package api_test

import (
	"bytes"
	"image/png"
	"net/http"
	"net/url"
	"testing"
	"time"

	"edgectl/auth"
)

// enrollTOTP starts an enrollment with token and returns the secret and recovery codes.
func (ts *testServer) enrollTOTP(token string) (string, []string) {
	ts.t.Helper()
	st, out, _ := ts.send(req{method: http.MethodPost, path: clientPath("/current-identity/mfa"), token: token})
	if st != http.StatusCreated || dig(out, "data", "id") == nil {
		ts.t.Fatalf("enroll: %d %v", st, out)
	}
	st, out, _ = ts.send(req{method: http.MethodGet, path: clientPath("/current-identity/mfa"), token: token})
	if st != http.StatusOK {
		ts.t.Fatalf("get mfa: %d %v", st, out)
	}
	u, err := url.Parse(dig(out, "data", "provisioningUrl").(string))
	if err != nil || u.Scheme != "otpauth" || u.Query().Get("secret") == "" {
		ts.t.Fatalf("provisioningUrl: %v", out)
	}
	var codes []string
	for _, c := range dig(out, "data", "recoveryCodes").([]any) {
		codes = append(codes, c.(string))
	}
	return u.Query().Get("secret"), codes
}

func totpAt(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := auth.TOTPCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func mfaCode(path, token, code string) req {
	return req{method: http.MethodPost, path: clientPath(path), token: token, body: map[string]any{"code": code}}
}

func TestMFA_EnrollVerifyLoginWithCodesAndDisable(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowServer(t, nil)
	id := ts.userWithPassword("otp-user", "right-password", map[string]any{"isAdmin": true})
	token, _ := ts.okSession(ts.passwordLogin("otp-user", "right-password"))

	st, out, _ := ts.send(req{method: http.MethodGet, path: clientPath("/current-identity/mfa"), token: token})
	wantError(t, st, out, 404, "NOT_FOUND", "")
	first, _ := ts.enrollTOTP(token)
	// Re-initiating an unverified enrollment replaces it with a new secret.
	secret, codes := ts.enrollTOTP(token)
	if secret == first || len(codes) != 20 {
		t.Fatalf("re-init: same secret %v, %d codes", secret == first, len(codes))
	}
	st, _, h := ts.send(req{method: http.MethodGet, path: clientPath("/current-identity/mfa/qr-code"), token: token})
	if st != 200 || h.Get("Content-Type") != "image/png" {
		t.Fatalf("qr-code: %d %s", st, h.Get("Content-Type"))
	}
	st, out, _ = ts.send(mfaCode("/current-identity/mfa/verify", token, "000000"))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	st, out, _ = ts.send(mfaCode("/current-identity/mfa/verify", token, totpAt(t, first, clock.Now())))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	if st, out, _ := ts.send(mfaCode("/current-identity/mfa/verify", token, totpAt(t, secret, clock.Now()))); st != 200 {
		t.Fatalf("verify: %d %v", st, out)
	}
	st, out, _ = ts.send(req{method: http.MethodGet, path: clientPath("/current-identity/mfa"), token: token})
	if st != 200 || dig(out, "data", "isVerified") != true || dig(out, "data", "provisioningUrl") != "" ||
		len(dig(out, "data", "recoveryCodes").([]any)) != 0 {
		t.Fatalf("a verified enrollment shows no secret: %v", out)
	}
	st, _, _ = ts.send(req{method: http.MethodGet, path: clientPath("/current-identity/mfa/qr-code"), token: token})
	if st != 404 {
		t.Fatalf("qr-code after verification: %d", st)
	}
	st, out, _ = ts.send(req{method: http.MethodPost, path: clientPath("/current-identity/mfa"), token: token})
	wantError(t, st, out, 409, "CONFLICT", "")
	if ts.get("/identities/" + id)["isMfaEnabled"] != true {
		t.Fatal("isMfaEnabled is false with a verified enrollment")
	}

	// A login is now partial until a code answers the MFA auth query.
	clock.Advance(30 * time.Second)
	partial, sess := ts.okSession(ts.passwordLogin("otp-user", "right-password"))
	q := sess["authQueries"].([]any)
	if sess["isMfaRequired"] != true || sess["isMfaComplete"] != false || len(q) != 1 ||
		dig(q[0], "typeId") != "MFA" || dig(q[0], "provider") != "svc" || dig(q[0], "httpUrl") != "./authenticate/mfa" ||
		dig(q[0], "format") != "numeric" || dig(q[0], "minLength") != 4.0 || dig(q[0], "maxLength") != 6.0 {
		t.Fatalf("partial session: %v", sess)
	}
	st, out, _ = ts.send(req{method: http.MethodGet, path: mgmt("/identities"), token: partial})
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	if st, out, _ := ts.send(req{method: http.MethodGet, path: clientPath("/current-api-session"), token: partial}); st != 200 {
		t.Fatalf("a partial session reads itself: %d %v", st, out)
	}
	code := totpAt(t, secret, clock.Now())
	st, out, _ = ts.send(mfaCode("/authenticate/mfa", partial, "123"))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	if st, out, _ := ts.send(mfaCode("/authenticate/mfa", partial, code)); st != 200 {
		t.Fatalf("authenticate/mfa: %d %v", st, out)
	}
	st, out, _ = ts.send(req{method: http.MethodGet, path: clientPath("/current-api-session"), token: partial})
	if dig(out, "data", "isMfaComplete") != true || len(dig(out, "data", "authQueries").([]any)) != 0 {
		t.Fatalf("after MFA: %v", out)
	}
	if st, out, _ := ts.send(req{method: http.MethodGet, path: mgmt("/identities"), token: partial}); st != 200 {
		t.Fatalf("a complete session lists identities: %d %v", st, out)
	}

	// The same code again, even for another session and within its window, is a replay.
	other, _ := ts.okSession(ts.passwordLogin("otp-user", "right-password"))
	st, out, _ = ts.send(mfaCode("/authenticate/mfa", other, code))
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	// A recovery code works once.
	if st, out, _ := ts.send(mfaCode("/authenticate/mfa", other, codes[3])); st != 200 {
		t.Fatalf("recovery code: %d %v", st, out)
	}
	third, _ := ts.okSession(ts.passwordLogin("otp-user", "right-password"))
	st, out, _ = ts.send(mfaCode("/authenticate/mfa", third, codes[3]))
	wantError(t, st, out, 401, "INVALID_AUTH", "")

	// Recovery codes: viewed with a code in the header; 19 left; regenerated with a code.
	clock.Advance(2 * time.Minute) // the wrong codes above emptied the identity's MFA bucket
	st, out, _ = ts.send(req{method: http.MethodGet, path: clientPath("/current-identity/mfa/recovery-codes"), token: partial,
		header: map[string]string{"mfa-validation-code": "999999"}})
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	st, out, _ = ts.send(req{method: http.MethodGet, path: clientPath("/current-identity/mfa/recovery-codes"), token: partial,
		header: map[string]string{"mfa-validation-code": codes[0]}})
	if st != 200 || len(dig(out, "data", "recoveryCodes").([]any)) != 19 {
		t.Fatalf("view recovery codes: %d %v", st, out)
	}
	clock.Advance(30 * time.Second)
	st, out, _ = ts.send(req{method: http.MethodPost, path: clientPath("/current-identity/mfa/recovery-codes"), token: partial,
		body: map[string]any{"code": totpAt(t, secret, clock.Now())}})
	fresh, _ := dig(out, "data", "recoveryCodes").([]any)
	if st != 200 || len(fresh) != 20 || fresh[0] == codes[0] {
		t.Fatalf("regenerate: %d %v", st, out)
	}
	st, out, _ = ts.send(mfaCode("/authenticate/mfa", third, codes[5]))
	wantError(t, st, out, 401, "INVALID_AUTH", "")

	// Disabling needs a valid code; then logins are complete at once.
	st, out, _ = ts.send(req{method: http.MethodDelete, path: clientPath("/current-identity/mfa"), token: partial,
		header: map[string]string{"mfa-validation-code": ""}})
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	clock.Advance(30 * time.Second)
	if st, out, _ := ts.send(req{method: http.MethodDelete, path: clientPath("/current-identity/mfa"), token: partial,
		header: map[string]string{"mfa-validation-code": totpAt(t, secret, clock.Now())}}); st != 200 {
		t.Fatalf("disable: %d %v", st, out)
	}
	_, sess = ts.okSession(ts.passwordLogin("otp-user", "right-password"))
	if sess["isMfaRequired"] != false || len(sess["authQueries"].([]any)) != 0 || ts.get("/identities/" + id)["isMfaEnabled"] != false {
		t.Fatalf("after disable: %v", sess)
	}
	st, out = ts.do(http.MethodDelete, mgmt("/identities/"+id+"/mfa"), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestMFA_PolicyRequiringTOTPLetsAPartialSessionEnrollAndVerifyingCompletesIt(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowServer(t, nil)
	pol := ts.policyWith("totp-required", func(_, s map[string]any) { s["requireTotp"] = true })
	id := ts.userWithPassword("must-mfa", "right-password", map[string]any{"authPolicyId": pol})
	partial, sess := ts.okSession(ts.passwordLogin("must-mfa", "right-password"))
	if sess["isMfaRequired"] != true || len(sess["authQueries"].([]any)) != 1 {
		t.Fatalf("requireTotp: %v", sess)
	}
	st, out, _ := ts.send(req{method: http.MethodGet, path: clientPath("/current-identity"), token: partial})
	wantError(t, st, out, 401, "UNAUTHORIZED", "")
	// No enrollment yet: authenticate/mfa has nothing to check.
	st, out, _ = ts.send(mfaCode("/authenticate/mfa", partial, "123456"))
	wantError(t, st, out, 404, "NOT_FOUND", "")
	secret, _ := ts.enrollTOTP(partial)
	if st, out, _ := ts.send(mfaCode("/current-identity/mfa/verify", partial, totpAt(t, secret, clock.Now()))); st != 200 {
		t.Fatalf("verify: %d %v", st, out)
	}
	st, out, _ = ts.send(req{method: http.MethodGet, path: clientPath("/current-api-session"), token: partial})
	if dig(out, "data", "isMfaComplete") != true || len(dig(out, "data", "authQueries").([]any)) != 0 {
		t.Fatalf("verifying completes the session: %v", out)
	}
	if st, _, _ := ts.send(req{method: http.MethodGet, path: clientPath("/current-identity"), token: partial}); st != 200 {
		t.Fatalf("current identity after verify: %d", st)
	}
	// A fresh code on a complete session is accepted (MFA posture checks ask for one after a wake).
	clock.Advance(30 * time.Second)
	if st, out, _ := ts.send(mfaCode("/authenticate/mfa", partial, totpAt(t, secret, clock.Now()))); st != 200 {
		t.Fatalf("fresh code on a complete session: %d %v", st, out)
	}
	// The admin removes the MFA of an identity; the partial-session routes stay closed to others.
	ts.mustDelete("/identities/" + id + "/mfa")
	st, out = ts.do(http.MethodDelete, mgmt("/identities/nope/mfa"), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestMFA_WrongCodesAreThrottledAndCountTowardLockout(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowServer(t, nil)
	pol := ts.policyWith("mfa-lock", func(p, _ map[string]any) {
		u := p["updb"].(map[string]any)
		u["maxAttempts"], u["lockoutDurationMinutes"] = 4, 1
	})
	id := ts.userWithPassword("guesser", "right-password", map[string]any{"authPolicyId": pol})
	token, _ := ts.okSession(ts.passwordLogin("guesser", "right-password"))
	secret, _ := ts.enrollTOTP(token)
	ts.send(mfaCode("/current-identity/mfa/verify", token, totpAt(t, secret, clock.Now())))
	partial, _ := ts.okSession(ts.passwordLogin("guesser", "right-password"))
	// The password login of a partial session does not end the run of failures: 4 wrong codes lock.
	for i := 0; i < 4; i++ {
		st, out, _ := ts.send(mfaCode("/authenticate/mfa", partial, "000000"))
		if st != 401 && st != 429 {
			t.Fatalf("wrong code %d: %d %v", i, st, out)
		}
	}
	if ts.get("/identities/" + id)["disabled"] != true {
		t.Fatal("wrong MFA codes did not lock the identity")
	}
	clock.Advance(2 * time.Minute)
	ts.okSession(ts.passwordLogin("guesser", "right-password"))

	// Without lockout, wrong codes of an identity are throttled: 5 at once, then 429.
	ts.userWithPassword("patient", "right-password", nil)
	token, _ = ts.okSession(ts.passwordLogin("patient", "right-password"))
	secret, _ = ts.enrollTOTP(token)
	ts.send(mfaCode("/current-identity/mfa/verify", token, totpAt(t, secret, clock.Now())))
	partial, _ = ts.okSession(ts.passwordLogin("patient", "right-password"))
	for i := 0; i < 5; i++ {
		st, out, _ := ts.send(mfaCode("/authenticate/mfa", partial, "000000"))
		wantError(t, st, out, 401, "INVALID_AUTH", "")
	}
	clock.Advance(30 * time.Second)
	st, out, h := ts.send(mfaCode("/authenticate/mfa", partial, "000000"))
	if st != 401 {
		t.Fatalf("one token came back after 20 s: %d %v", st, out)
	}
	st, out, h = ts.send(mfaCode("/authenticate/mfa", partial, totpAt(t, secret, clock.Now())))
	wantError(t, st, out, 429, "TOO_MANY_REQUESTS", "")
	if h.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}

func TestMFA_QRCodeIsAPNG(t *testing.T) {
	t.Parallel()
	ts, _ := newAuthFlowServer(t, nil)
	ts.userWithPassword("qr-user", "right-password", nil)
	token, _ := ts.okSession(ts.passwordLogin("qr-user", "right-password"))
	ts.enrollTOTP(token)
	hr, _ := http.NewRequest(http.MethodGet, ts.base+clientPath("/current-identity/mfa/qr-code"), nil)
	hr.Header.Set("svc-session", token)
	resp, err := ts.client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	img, err := png.Decode(&buf)
	if err != nil || img.Bounds().Dx() < 100 {
		t.Fatalf("qr-code is not a PNG: %v", err)
	}
}
