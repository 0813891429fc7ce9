package api_test

import (
	"net/http"
	"testing"
	"time"
)

// TestPosture_MFACheckWithWakeGrace: an MFA posture check with promptOnWake
// passes after a TOTP code, keeps passing for five minutes after a wake,
// then fails until a new code is sent.
func TestPosture_MFACheckWithWakeGrace(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowServer(t, nil)
	ts.userWithPassword("mfa-user", "right-password", map[string]any{"roleAttributes": []string{"eng"}})
	token, _ := ts.okSession(ts.passwordLogin("mfa-user", "right-password"))
	svc := ts.create("/services", map[string]any{"name": "vault", "roleAttributes": []string{"vault"}})
	ts.create("/posture-checks", map[string]any{"name": "mfa", "typeId": "MFA", "roleAttributes": []string{"mfa"},
		"timeoutSeconds": 0, "promptOnWake": true})
	ts.create("/service-policies", map[string]any{"name": "dial-vault", "type": "Dial", "semantic": "AllOf",
		"identityRoles": []string{"#eng"}, "serviceRoles": []string{"#vault"}, "postureCheckRoles": []string{"#mfa"}})
	session := func() int {
		t.Helper()
		st, _, _ := ts.send(req{method: http.MethodPost, path: clientPath("/sessions"), token: token, body: map[string]any{"serviceId": svc}})
		return st
	}
	if st := session(); st != http.StatusConflict {
		t.Fatalf("without TOTP: %d, want 409", st)
	}
	secret, _ := ts.enrollTOTP(token)
	if st, out, _ := ts.send(mfaCode("/current-identity/mfa/verify", token, totpAt(t, secret, clock.Now()))); st != 200 {
		t.Fatalf("verify: %d %v", st, out)
	}
	clock.Advance(31 * time.Second)
	if st, out, _ := ts.send(mfaCode("/authenticate/mfa", token, totpAt(t, secret, clock.Now()))); st != 200 {
		t.Fatalf("authenticate/mfa: %d %v", st, out)
	}
	if st := session(); st != http.StatusCreated {
		t.Fatalf("after TOTP: %d, want 201", st)
	}
	// A wake: five minutes of grace, then refused until a new code.
	clock.Advance(time.Second)
	if st, out, _ := ts.send(req{method: http.MethodPost, path: clientPath("/posture-response"), token: token,
		body: map[string]any{"typeId": "ENDPOINT_STATE", "woken": true}}); st != http.StatusCreated {
		t.Fatalf("wake: %d %v", st, out)
	}
	clock.Advance(4 * time.Minute)
	if st := session(); st != http.StatusCreated {
		t.Fatalf("inside the grace: %d, want 201", st)
	}
	clock.Advance(2 * time.Minute)
	if st := session(); st != http.StatusConflict {
		t.Fatalf("after the grace: %d, want 409", st)
	}
	if st, out, _ := ts.send(mfaCode("/authenticate/mfa", token, totpAt(t, secret, clock.Now()))); st != 200 {
		t.Fatalf("new code: %d %v", st, out)
	}
	if st := session(); st != http.StatusCreated {
		t.Fatalf("after a new code: %d, want 201", st)
	}
}
