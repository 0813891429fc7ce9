package api_test

import (
	"net/http"
	"sort"
	"strconv"
	"testing"
	"time"
)

func lockoutPolicy(ts *testServer, name string, maxAttempts, minutes int) string {
	return ts.policyWith(name, func(p, _ map[string]any) {
		u := p["updb"].(map[string]any)
		u["maxAttempts"], u["lockoutDurationMinutes"] = maxAttempts, minutes
	})
}

// sameError checks that two failed authenticate answers are the same but for the request id.
func sameError(t *testing.T, what string, st1 int, a map[string]any, st2 int, b map[string]any) {
	t.Helper()
	ea, eb := a["error"].(map[string]any), b["error"].(map[string]any)
	if st1 != st2 || ea["code"] != eb["code"] || ea["message"] != eb["message"] || (ea["cause"] == nil) != (eb["cause"] == nil) {
		t.Fatalf("%s: %d %v differs from %d %v", what, st1, a, st2, b)
	}
}

func TestLockout_MaxAttemptsLocksForTheDurationAndSuccessResetsTheCount(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowServer(t, nil)
	pol := lockoutPolicy(ts, "three-strikes", 3, 10)
	id := ts.userWithPassword("mallory", "right-password", map[string]any{"authPolicyId": pol})
	other := ts.userWithPassword("trudy", "right-password", nil)
	_ = other

	// Two failures, then a success: the run ends, and two more failures do not lock.
	for i := 0; i < 2; i++ {
		st, out, _ := ts.passwordLogin("mallory", "wrong-password")
		wantError(t, st, out, 401, "INVALID_AUTH", "")
	}
	ts.okSession(ts.passwordLogin("mallory", "right-password"))
	for i := 0; i < 2; i++ {
		ts.passwordLogin("mallory", "wrong-password")
	}
	ts.okSession(ts.passwordLogin("mallory", "right-password"))

	// Three failures in a row lock: the right password then answers exactly like a wrong one.
	for i := 0; i < 3; i++ {
		ts.passwordLogin("mallory", "wrong-password")
	}
	st, locked, _ := ts.passwordLogin("mallory", "right-password")
	wantError(t, st, locked, 401, "INVALID_AUTH", "")
	st2, wrong, _ := ts.passwordLogin("mallory", "wrong-password")
	sameError(t, "locked vs wrong password", st, locked, st2, wrong)
	st3, unknown, _ := ts.passwordLogin("nobody-at-all", "wrong-password")
	sameError(t, "locked vs unknown user", st, locked, st3, unknown)
	view := ts.get("/identities/" + id)
	if view["disabled"] != true || view["disabledUntil"] == nil {
		t.Fatalf("a locked identity shows as disabled until a time: %v", view)
	}
	// Another identity is not affected.
	ts.okSession(ts.passwordLogin("trudy", "right-password"))

	clock.Advance(9 * time.Minute)
	st, out, _ := ts.passwordLogin("mallory", "right-password")
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	clock.Advance(2 * time.Minute)
	ts.okSession(ts.passwordLogin("mallory", "right-password"))
	if ts.get("/identities/" + id)["disabled"] != false {
		t.Fatal("the lock did not end after lockoutDurationMinutes")
	}
}

func TestLockout_ZeroMeansNoLockoutOrUntilAnAdminEnables(t *testing.T) {
	t.Parallel()
	ts, _ := newAuthFlowServer(t, nil)
	noLock := lockoutPolicy(ts, "no-lockout", 0, 5)
	forever := lockoutPolicy(ts, "until-enabled", 2, 0)
	ts.userWithPassword("carefree", "right-password", map[string]any{"authPolicyId": noLock})
	id := ts.userWithPassword("careful", "right-password", map[string]any{"authPolicyId": forever})

	for i := 0; i < 8; i++ {
		ts.passwordLogin("carefree", "wrong-password")
	}
	ts.okSession(ts.passwordLogin("carefree", "right-password"))

	ts.passwordLogin("careful", "wrong-password")
	ts.passwordLogin("careful", "wrong-password")
	st, out, _ := ts.passwordLogin("careful", "right-password")
	wantError(t, st, out, 401, "INVALID_AUTH", "")
	if v := ts.get("/identities/" + id); v["disabled"] != true || v["disabledUntil"] != nil {
		t.Fatalf("lockoutDurationMinutes 0 locks until enabled: %v", v)
	}
	if st, out := ts.do(http.MethodPost, mgmt("/identities/"+id+"/enable"), nil); st != 200 {
		t.Fatalf("enable: %d %v", st, out)
	}
	ts.okSession(ts.passwordLogin("careful", "right-password"))
}

func TestLockout_TheDefaultAdminIsNeverLockedAndADisabledIdentityCannotLogIn(t *testing.T) {
	t.Parallel()
	ts, _ := newAuthFlowServer(t, nil)
	if st, out := ts.do(http.MethodPatch, mgmt("/auth-policies/default"),
		map[string]any{"primary": map[string]any{"updb": map[string]any{"maxAttempts": 2}}}); st != 200 {
		t.Fatalf("patch default policy: %d %v", st, out)
	}
	for i := 0; i < 3; i++ {
		ts.passwordLogin("admin", "wrong-password")
	}
	ts.okSession(ts.passwordLogin("admin", testAdminPassword))

	id := ts.userWithPassword("sleeper", "right-password", nil)
	if st, out := ts.do(http.MethodPost, mgmt("/identities/"+id+"/disable"), map[string]any{"durationMinutes": 0}); st != 200 {
		t.Fatalf("disable: %d %v", st, out)
	}
	st, out, _ := ts.passwordLogin("sleeper", "right-password")
	wantError(t, st, out, 401, "INVALID_AUTH", "")
}

func TestThrottle_FailedLoginsOfAUsernameGet429WithRetryAfter(t *testing.T) {
	t.Parallel()
	ts, clock := newAuthFlowServer(t, nil)
	ts.userWithPassword("target", "right-password", nil)
	// Unknown and known usernames are throttled alike: the answer says nothing about existence.
	for _, user := range []string{"target", "ghost-user"} {
		for i := 0; i < 10; i++ {
			st, out, _ := ts.passwordLogin(user, "wrong-password")
			wantError(t, st, out, 401, "INVALID_AUTH", "")
		}
		st, out, h := ts.passwordLogin(user, "right-password")
		wantError(t, st, out, 429, "TOO_MANY_REQUESTS", "")
		if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 || secs > 6 {
			t.Fatalf("%s: Retry-After %q", user, h.Get("Retry-After"))
		}
	}
	// Another username from the same address still gets through.
	ts.okSession(ts.passwordLogin("admin", testAdminPassword))
	clock.Advance(7 * time.Second)
	ts.okSession(ts.passwordLogin("target", "right-password"))
}

func TestAuthenticate_UnknownUserAndCountedFailureTakeComparableTime(t *testing.T) {
	t.Parallel()
	ts, _ := newAuthFlowServer(t, nil)
	ts.userWithPassword("counted", "right-password", map[string]any{"authPolicyId": lockoutPolicy(ts, "counting", 100, 5)})
	// Interleaved, so that both see the same load from the parallel tests.
	var known, unknown []time.Duration
	for i := 0; i < 9; i++ {
		for _, user := range []string{"counted", "unknown-user"} {
			start := time.Now()
			st, out, _ := ts.passwordLogin(user, "wrong-password")
			took := time.Since(start)
			wantError(t, st, out, 401, "INVALID_AUTH", "")
			if user == "counted" {
				known = append(known, took)
			} else {
				unknown = append(unknown, took)
			}
		}
	}
	median := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	if r := float64(median(unknown)) / float64(median(known)); r < 0.5 || r > 2 {
		t.Fatalf("unknown user %v vs counted failure %v (medians of 9)", median(unknown), median(known))
	}
}
