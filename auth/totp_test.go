package auth

import (
	"strings"
	"testing"
	"time"
)

func TestTOTP_MatchesTheWindowOfOneStepEachWayAndTellsTheStep(t *testing.T) {
	secret, err := NewTOTPSecret()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_010, 0)
	for _, d := range []time.Duration{-TOTPPeriod, 0, TOTPPeriod} {
		code, _ := TOTPCode(secret, now.Add(d))
		step, ok := MatchTOTP(secret, code, now)
		if !ok || step != TOTPStep(now.Add(d)) {
			t.Fatalf("offset %v: ok=%v step=%d", d, ok, step)
		}
	}
	for _, d := range []time.Duration{-2 * TOTPPeriod, 2 * TOTPPeriod} {
		code, _ := TOTPCode(secret, now.Add(d))
		if _, ok := MatchTOTP(secret, code, now); ok {
			t.Fatalf("a code %v away matched", d)
		}
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef"} {
		if _, ok := MatchTOTP(secret, bad, now); ok {
			t.Fatalf("%q matched", bad)
		}
	}
	url, err := ProvisioningURL("alice", secret)
	if err != nil || !strings.HasPrefix(url, "otpauth://totp/") || !strings.Contains(url, "secret="+secret) ||
		!strings.Contains(url, "period=30") || !strings.Contains(url, "digits=6") || !strings.Contains(url, "algorithm=SHA1") {
		t.Fatalf("provisioning URL %q (%v)", url, err)
	}
}

func TestRecoveryCodes_AreDistinctNormalizedAndHashedPerEnrollment(t *testing.T) {
	codes, err := NewRecoveryCodes(RecoveryCodeCount)
	if err != nil || len(codes) != 20 {
		t.Fatalf("%d codes (%v)", len(codes), err)
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if !LooksLikeRecoveryCode(c) || seen[c] {
			t.Fatalf("bad or repeated code %q", c)
		}
		seen[c] = true
	}
	c := codes[0]
	typed := strings.ToLower(c[:4]) + "-" + c[4:]
	if RecoveryCodeHash("m1", typed) != RecoveryCodeHash("m1", c) {
		t.Fatal("a code typed with a dash and lower case does not match")
	}
	if RecoveryCodeHash("m1", c) == RecoveryCodeHash("m2", c) {
		t.Fatal("two enrollments hash a code alike")
	}
}

func TestSecretBox_OpensOnlyForTheSameKeyAndOwner(t *testing.T) {
	a, _ := NewSecretBox([]byte("cluster key material"), "mfa v1")
	b, _ := NewSecretBox([]byte("other key material"), "mfa v1")
	sealed, err := a.Seal("JBSWY3DPEHPK3PXP", "identity-1")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := a.Seal("JBSWY3DPEHPK3PXP", "identity-1")
	if sealed == again || strings.Contains(sealed, "JBSWY3DP") {
		t.Fatal("sealing is deterministic or shows the secret")
	}
	if got, err := a.Open(sealed, "identity-1"); err != nil || got != "JBSWY3DPEHPK3PXP" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := a.Open(sealed, "identity-2"); err == nil {
		t.Fatal("opened for another owner")
	}
	if _, err := b.Open(sealed, "identity-1"); err == nil {
		t.Fatal("opened with another key")
	}
}
