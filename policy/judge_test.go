package policy

import (
	"fmt"
	"testing"
	"time"
)

// TestJudgeAgreesWithEvaluate: Judge gives Evaluate's verdict and timeouts
// for every kind of check, on data that passes, fails or is missing, at
// times inside and past MFA timeouts and grace periods; only the details
// are left out (nil), while Evaluate still fills them.
func TestJudgeAgreesWithEvaluate(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	dom := "Corp.Example"
	checks := []*Check{
		{TypeID: CheckOS, OperatingSystems: []OSRule{{Type: "WINDOWS", Versions: []string{">=10.0.19041"}}, {Type: "macOS"}}},
		{TypeID: CheckMAC, MacAddresses: []string{"aa:bb:cc:dd:ee:01"}},
		{TypeID: CheckDomain, Domains: []string{"corp.example"}},
		{TypeID: CheckProcess, Processes: []ProcessRule{{Path: "/bin/agent", Hashes: []string{"H1"}}}},
		{TypeID: CheckProcessMulti, Semantic: "OneOf", Processes: []ProcessRule{{Path: "/bin/agent"}, {Path: "/bin/other"}}},
		{TypeID: CheckProcessMulti, Semantic: "AllOf", Processes: []ProcessRule{{Path: "/bin/agent"}, {Path: "/bin/other"}}},
		{TypeID: CheckMFA},
		{TypeID: CheckMFA, TimeoutSeconds: 600, PromptOnWake: true, PromptOnUnlock: true},
		{TypeID: "UNKNOWN"},
	}
	datas := []*Data{
		nil,
		{},
		{OS: &OSData{Type: "Windows", Version: "10.0.19045"}, MACs: []string{"AA-BB-CC-DD-EE-01"}, Domain: &dom,
			Processes: map[string]ProcessData{"/bin/agent": {IsRunning: true, Hash: "h1"}},
			MFA:       MFAData{PassedMfa: true, PassedAt: at(-5 * time.Minute), PassedOnWake: true}, WokenAt: at(-8 * time.Minute)},
		{OS: &OSData{Type: "darwin", Version: "14.1"}, MACs: []string{"00:00:00:00:00:00"},
			Processes: map[string]ProcessData{"/bin/agent": {IsRunning: false}, "/bin/other": {IsRunning: true}},
			MFA:       MFAData{PassedMfa: true, PassedAt: at(-20 * time.Minute)}, UnlockedAt: at(-time.Minute)},
		{OS: &OSData{Type: "Windows", Version: "10.0", Build: "18000"}, MFA: MFAData{PassedMfa: true, PassedAt: at(-time.Minute)}, WokenAt: at(-30 * time.Second)},
	}
	for ci, c := range checks {
		for di, d := range datas {
			for _, when := range []time.Time{now, now.Add(4 * time.Minute), now.Add(time.Hour)} {
				name := fmt.Sprintf("check %d (%s), data %d, %s", ci, c.TypeID, di, when.Sub(now))
				e, j := Evaluate(c, d, when), Judge(c, d, when)
				if e.Passing != j.Passing || e.Timeout != j.Timeout || e.TimeoutRemaining != j.TimeoutRemaining {
					t.Fatalf("%s: Evaluate %v/%d/%d, Judge %v/%d/%d", name, e.Passing, e.Timeout, e.TimeoutRemaining, j.Passing, j.Timeout, j.TimeoutRemaining)
				}
				if j.Actual != nil || j.Expected != nil {
					t.Fatalf("%s: Judge has details", name)
				}
				if e.Actual == nil || e.Expected == nil || (c.TypeID != "UNKNOWN" && len(e.Expected) == 0) {
					t.Fatalf("%s: Evaluate lost its details: %v %v", name, e.Actual, e.Expected)
				}
			}
		}
	}
}
