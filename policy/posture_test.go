package policy

import (
	"testing"
	"time"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func tp(t time.Time) *time.Time { return &t }
func sp(s string) *string       { return &s }

func TestOS_VersionStatements(t *testing.T) {
	c := &Check{TypeID: CheckOS, OperatingSystems: []OSRule{
		{Type: "WINDOWS", Versions: []string{">=10.0.19041 <11", ">=11.0.0"}},
		{Type: "LINUX"},
	}}
	cases := []struct {
		name string
		os   *OSData
		want bool
	}{
		{"in the first range", &OSData{Type: "Windows", Version: "10.0.19045"}, true},
		{"below it", &OSData{Type: "windows", Version: "10.0.18363"}, false},
		{"second statement (OR)", &OSData{Type: "WINDOWS", Version: "11.2.1"}, true},
		{"no patch: build number compared", &OSData{Type: "Windows", Version: "10.0", Build: "19042"}, true},
		{"no patch, old build", &OSData{Type: "Windows", Version: "10.0", Build: "17763"}, false},
		{"any linux version", &OSData{Type: "Linux", Version: "6.1.0"}, true},
		{"another OS", &OSData{Type: "macOS", Version: "14.0.0"}, false},
		{"nothing reported", nil, false},
		{"garbage version", &OSData{Type: "Windows", Version: "ten"}, false},
	}
	for _, tc := range cases {
		if got := Evaluate(c, &Data{OS: tc.os}, now).Passing; got != tc.want {
			t.Errorf("%s: passing %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMAC_AnyReportedAddressInTheList(t *testing.T) {
	c := &Check{TypeID: CheckMAC, MacAddresses: []string{"AA-BB-CC-DD-EE-FF"}}
	if !Evaluate(c, &Data{MACs: []string{"11:22:33:44:55:66", "aa:bb:cc:dd:ee:ff"}}, now).Passing {
		t.Fatal("a listed address (other notation) must pass")
	}
	if Evaluate(c, &Data{MACs: []string{"11-22-33-44-55-66"}}, now).Passing {
		t.Fatal("an address not listed fails the check")
	}
}

func TestDomain(t *testing.T) {
	c := &Check{TypeID: CheckDomain, Domains: []string{"corp.example"}}
	if !Evaluate(c, &Data{Domain: sp("CORP.example")}, now).Passing || Evaluate(c, &Data{Domain: sp("home")}, now).Passing || Evaluate(c, &Data{}, now).Passing {
		t.Fatal("domain check wrong")
	}
}

func TestProcessMulti_AllOfAndOneOf(t *testing.T) {
	rules := []ProcessRule{{Path: "/bin/a", Hashes: []string{"abc"}}, {Path: "/bin/b", SignerFingerprints: []string{"f1"}}}
	d := &Data{Processes: map[string]ProcessData{
		"/bin/a": {IsRunning: true, Hash: "ABC"},
		"/bin/b": {IsRunning: true, SignerFingerprints: []string{"f2"}},
	}}
	all := &Check{TypeID: CheckProcessMulti, Semantic: "AllOf", Processes: rules}
	one := &Check{TypeID: CheckProcessMulti, Semantic: "OneOf", Processes: rules}
	if Evaluate(all, d, now).Passing {
		t.Fatal("AllOf passed with a wrong signer")
	}
	if !Evaluate(one, d, now).Passing {
		t.Fatal("OneOf must pass with one good process")
	}
	d.Processes["/bin/a"] = ProcessData{IsRunning: false, Hash: "abc"}
	if Evaluate(one, d, now).Passing {
		t.Fatal("a process that is not running cannot pass")
	}
	single := &Check{TypeID: CheckProcess, Processes: []ProcessRule{{Path: "/bin/b", SignerFingerprints: []string{"F2"}}}}
	if !Evaluate(single, d, now).Passing {
		t.Fatal("PROCESS with the right signer must pass")
	}
}

func mfaData(passedAt time.Time) *Data {
	return &Data{MFA: MFAData{PassedMfa: true, PassedAt: tp(passedAt)}}
}

func TestMFA_NeedsTOTP(t *testing.T) {
	c := &Check{TypeID: CheckMFA}
	if Evaluate(c, &Data{}, now).Passing {
		t.Fatal("an API session without TOTP must fail")
	}
	if !Evaluate(c, mfaData(now.Add(-48*time.Hour)), now).Passing {
		t.Fatal("timeoutSeconds 0 never times out")
	}
	c.TimeoutSeconds = -1
	if r := Evaluate(c, mfaData(now.Add(-48*time.Hour)), now); !r.Passing || r.Timeout != -1 || r.TimeoutRemaining != -1 {
		t.Fatalf("timeoutSeconds -1 never times out: %+v", r)
	}
}

func TestMFA_TimeoutSeconds(t *testing.T) {
	c := &Check{TypeID: CheckMFA, TimeoutSeconds: 600}
	r := Evaluate(c, mfaData(now.Add(-590*time.Second)), now)
	if !r.Passing || r.Timeout != 600 || r.TimeoutRemaining != 10 {
		t.Fatalf("before the timeout: %+v", r)
	}
	if r := Evaluate(c, mfaData(now.Add(-601*time.Second)), now); r.Passing || r.TimeoutRemaining != 0 {
		t.Fatalf("after the timeout: %+v", r)
	}
}

func TestMFA_WakeAndUnlockGiveFiveMinutesOfGrace(t *testing.T) {
	for _, ev := range []string{"wake", "unlock"} {
		c := &Check{TypeID: CheckMFA, PromptOnWake: ev == "wake", PromptOnUnlock: ev == "unlock"}
		d := mfaData(now.Add(-time.Hour))
		at := tp(now.Add(-2 * time.Minute))
		if ev == "wake" {
			d.WokenAt = at
		} else {
			d.UnlockedAt = at
		}
		if r := Evaluate(c, d, now); !r.Passing || r.TimeoutRemaining != 180 {
			t.Fatalf("%s: inside the grace: %+v", ev, r)
		}
		if r := Evaluate(c, d, now.Add(4*time.Minute)); r.Passing {
			t.Fatalf("%s: after the grace: %+v", ev, r)
		}
		// A new TOTP code after the event restores it.
		d.MFA.PassedAt = tp(now.Add(3 * time.Minute))
		if r := Evaluate(c, d, now.Add(4*time.Minute)); !r.Passing {
			t.Fatalf("%s: after a new code: %+v", ev, r)
		}
	}
	// An event the check does not prompt on changes nothing.
	c := &Check{TypeID: CheckMFA, PromptOnWake: false}
	d := mfaData(now.Add(-time.Hour))
	d.WokenAt = tp(now.Add(-time.Hour / 2))
	if !Evaluate(c, d, now).Passing {
		t.Fatal("a wake must not matter without promptOnWake")
	}
}
